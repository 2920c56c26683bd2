#include "StopReplyTap.h"

#include "RemoteRegisters.h"

#include <lldb/API/SBCommandInterpreter.h>
#include <lldb/API/SBCommandReturnObject.h>
#include <lldb/API/SBFile.h>

#include <map>

namespace strobe::lldb_plugin {
namespace {

constexpr const char *kPacketCategories[] = {"packets", nullptr};

} // namespace

StopReplyTap &StopReplyTap::of(lldb::SBDebugger debugger) {
  static std::mutex mutex;
  static std::map<lldb::user_id_t, StopReplyTap *> taps;
  std::lock_guard lock(mutex);
  StopReplyTap *&tap = taps[debugger.GetID()];
  if (!tap) {
    tap = new StopReplyTap(debugger); // never freed: LLDB may call its callback until the end
    debugger.SetLoggingCallback(&StopReplyTap::onLog, tap);
  }
  return *tap;
}

void StopReplyTap::arm(lldb::SBUnixSignals signals, int signo, Take take) {
  {
    std::lock_guard lock(mutex_);
    armed_ = ownsLog_ = true;
    signals_ = signals;
    signo_ = signo;
    take_ = std::move(take);
    madePublic_ = false;
    signals_.SetShouldStop(signo_, false);
  }
  // Outside the lock: enabling writes LLDB's packet history to the log at once, on this thread.
  debugger_.EnableLog("gdb-remote", const_cast<const char **>(kPacketCategories));
}

void StopReplyTap::disarm() {
  {
    std::lock_guard lock(mutex_);
    armed_ = false;
    take_ = nullptr;
    signals_.SetShouldStop(signo_, true);
  }
  lldb::SBCommandReturnObject result;
  debugger_.GetCommandInterpreter().HandleCommand("log disable gdb-remote packets", result, false);
  std::lock_guard lock(mutex_);
  ownsLog_ = false;
}

void StopReplyTap::beforeResume() {
  std::lock_guard lock(mutex_);
  if (armed_ && madePublic_) {
    signals_.SetShouldStop(signo_, false);
    madePublic_ = false;
  }
  resuming_ = true;
}

void StopReplyTap::onLog(const char *line, void *tap) {
  static_cast<StopReplyTap *>(tap)->onLine(line ? line : "");
}

void StopReplyTap::onLine(std::string_view line) {
  std::lock_guard lock(mutex_);
  if (!ownsLog_ || line.find(" packet: ") == line.npos) {
    forward(line); // a log the user enabled
    return;
  }
  constexpr std::string_view kReply = "read packet: $T";
  size_t at = line.find(kReply);
  if (!armed_ || !resuming_ || at == line.npos || line.find("history[") != line.npos)
    return;
  std::string_view reply = line.substr(at + kReply.size() - 1);
  if (hexNumber(reply.substr(1, 2)) != static_cast<unsigned>(signo_))
    return;
  if (!takeReply(reply)) {
    signals_.SetShouldStop(signo_, true); // read before LLDB decides on this very stop
    madePublic_ = true;
  }
}

bool StopReplyTap::takeReply(std::string_view reply) {
  std::string_view fields = reply.substr(3, reply.find('#') - 3);
  // The other threads' registers are not in the reply: a stop of several goes the ordinary way.
  std::optional<std::string_view> threads = replyField(fields, "threads");
  std::optional<std::string_view> thread = replyField(fields, "thread");
  if (!threads || threads->find(',') != threads->npos || !thread)
    return false;
  // "p<pid>.<tid>" with multiprocess extensions, else "<tid>".
  std::optional<unsigned> tid = hexNumber(thread->substr(thread->find('.') + 1));
  return tid && take_(reply, *tid);
}

void StopReplyTap::forward(std::string_view line) {
  lldb::SBFile out = debugger_.GetOutputFile();
  size_t written = 0;
  if (out.IsValid())
    out.Write(reinterpret_cast<const uint8_t *>(line.data()), line.size(), &written);
}

} // namespace strobe::lldb_plugin
