// The plugin's end of strobe's tap inside lldb-server (server-tap/): sample stops taken while
// lldb-server waits for the inferior, which LLDB then never learns of.
//
// Why: the cheapest stop LLDB itself makes for a signal it does not stop for (StopReplyTap) still
// goes through lldb-server's all-stop and LLDB's own threads; a stop taken inside lldb-server costs
// what a tracer's stop costs: the wait, one read of the registers, a resume (bench/RESULTS.md).
// It works for a process on this host whose lldb-server LLDB started through strobe-lldb-server,
// which installServerTap() arranges for every process launched or attached to after `plugin
// load`, or whose lldb-server the user started through strobe-lldb-server; for any other (a plain
// lldb-server the user started, a process started before) arm() finds no channel and the plugin
// uses StopReplyTap.
//
// A stop of one thread leaves the others running (Arming::stopsOneThread()): the engine signals
// every thread of a process each period, and each stop samples its own thread.
#pragma once

#include "server-tap/TapChannel.h"

#include <lldb/API/SBDebugger.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <thread>

namespace strobe::lldb_plugin {

// Names strobe-lldb-server, beside the plugin, to LLDB as its debug server (LLDB_DEBUGSERVER_PATH),
// with the lldb-server LLDB would have started; unless the user named a debug server or turned
// the tap off (STROBE_SERVER_TAP=0). The variables stay out of the programs `debugger` launches.
void installServerTap(lldb::SBDebugger debugger);

// Whether the user left the tap on (STROBE_SERVER_TAP is not 0).
bool serverTapWanted();
// strobe-lldb-server beside the plugin, which a user may start in lldb-server's place.
std::filesystem::path serverLauncher();

// The channel page of the lldb-server tracing process `pid`, mapped here (munmap it with
// sizeof(TapChannel)); null when that lldb-server has none.
TapChannel *mapTapChannel(int pid);

class ServerTap {
public:
  // Runs on the tap's thread for a sample stop of thread `tid` of the armed process, whose
  // NT_PRSTATUS registers are `registers`, while that thread is stopped; whether it took the
  // sample.
  using Take = std::function<bool(uint64_t tid, std::span<const uint8_t> registers)>;

  // Arms the tap of the lldb-server tracing process `pid` for stops of host signal `signo`; null
  // when that lldb-server has none.
  static std::unique_ptr<ServerTap> arm(int pid, int signo, Take take);
  // Disarms: no stop is taken any more.
  ~ServerTap();
  ServerTap(const ServerTap &) = delete;
  ServerTap &operator=(const ServerTap &) = delete;

private:
  ServerTap(TapChannel *channel, int pid, int signo, Take take);
  void run();

  TapChannel *channel_;
  Take take_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

} // namespace strobe::lldb_plugin
