#include "ServerTap.h"

#include "Locations.h"
#include "capture/ProcFile.h"
#include "target/QuietThread.h"

#include <lldb/API/SBCommandInterpreter.h>
#include <lldb/API/SBCommandReturnObject.h>
#include <lldb/API/SBFileSpec.h>
#include <lldb/API/SBHostOS.h>

#include <fmt/format.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <filesystem>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

namespace strobe::lldb_plugin {
namespace {

constexpr const char *kServerVariable = "LLDB_DEBUGSERVER_PATH";
constexpr const char *kRealServerVariable = "STROBE_LLDB_SERVER";
// How long the tap's thread sleeps between looks at whether it is to end; a posted stop and the
// end both wake it at once.
constexpr uint64_t kListenNs = 100'000'000;

// The directory this plugin was loaded from, where strobe-lldb-server and the library are built
// and installed beside it.
std::filesystem::path pluginDirectory() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<const void *>(&installServerTap), &info) || !info.dli_fname)
    return {};
  return std::filesystem::path(info.dli_fname).parent_path();
}

// The process tracing `pid` (lldb-server), or nullopt.
std::optional<int> tracerOf(int pid) {
  ProcFile status("/proc/" + std::to_string(pid) + "/status");
  std::optional<int> tracer = leadingNumber<int>(statusField(status.read(), "TracerPid:"));
  return tracer > 0 ? tracer : std::nullopt;
}

// The channel page of process `server`, mapped here, or null when it has none.
TapChannel *channelOfServer(int server) {
  const std::string fds = "/proc/" + std::to_string(server) + "/fd";
  const std::string name = std::string("/memfd:") + kTapChannelName + " (deleted)";
  std::error_code error;
  for (const auto &entry : std::filesystem::directory_iterator(fds, error)) {
    std::error_code unreadable;
    if (std::filesystem::read_symlink(entry.path(), unreadable).string() != name)
      continue;
    int fd = open(entry.path().c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0)
      return nullptr;
    void *page = mmap(nullptr, sizeof(TapChannel), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (page == MAP_FAILED)
      return nullptr;
    auto *channel = static_cast<TapChannel *>(page);
    if (channel->version.load(std::memory_order_acquire) == kTapChannelVersion)
      return channel;
    munmap(page, sizeof(TapChannel));
    return nullptr;
  }
  return nullptr;
}

} // namespace

TapChannel *mapTapChannel(int pid) {
  std::optional<int> tracer = tracerOf(pid);
  return tracer ? channelOfServer(*tracer) : nullptr;
}

bool serverTapWanted() {
  const char *off = std::getenv("STROBE_SERVER_TAP");
  return !(off && std::string_view(off) == "0");
}

std::filesystem::path serverLauncher() { return pluginDirectory() / "strobe-lldb-server"; }

void installServerTap(lldb::SBDebugger debugger) {
  if (!serverTapWanted())
    return;
  const std::filesystem::path launcher = serverLauncher();
  const char *named = std::getenv(kServerVariable);
  if (named && launcher != named)
    return; // the user's own debug server
  if (!named) {
    if (access(launcher.c_str(), X_OK) != 0)
      return;
    const std::string server =
        pathOf(lldb::SBHostOS::GetLLDBPath(lldb::ePathTypeSupportExecutableDir)) + "/lldb-server";
    setenv(kRealServerVariable, server.c_str(), 1);
    setenv(kServerVariable, launcher.c_str(), 1);
  }
  lldb::SBCommandReturnObject result;
  debugger.GetCommandInterpreter().HandleCommand(
      fmt::format("settings append target.unset-env-vars {} {}", kServerVariable,
                  kRealServerVariable)
          .c_str(),
      result, false);
}

std::unique_ptr<ServerTap> ServerTap::arm(int pid, int signo, Take take) {
  TapChannel *channel = mapTapChannel(pid);
  if (!channel)
    return nullptr;
  return std::unique_ptr<ServerTap>(new ServerTap(channel, pid, signo, std::move(take)));
}

ServerTap::ServerTap(TapChannel *channel, int pid, int signo, Take take)
    : channel_(channel), take_(std::move(take)) {
  channel_->signo.store(signo, std::memory_order_relaxed);
  channel_->armedPid.store(pid, std::memory_order_release);
  thread_ = quietThread([this] { run(); });
}

ServerTap::~ServerTap() {
  channel_->armedPid.store(0, std::memory_order_release);
  stopping_ = true;
  wakeAll(channel_->state);
  thread_.join();
  munmap(channel_, sizeof(TapChannel));
}

void ServerTap::run() {
  while (!stopping_) {
    uint32_t state = channel_->state.load(std::memory_order_acquire);
    uint32_t expected = TapChannel::Posted;
    // A step's stop is ServerSteps' to claim.
    if (state != TapChannel::Posted || channel_->kind != TapChannel::SampleStop ||
        !channel_->state.compare_exchange_strong(expected, TapChannel::Taking)) {
      waitWhile(channel_->state, state, kListenNs);
      continue;
    }
    const bool taken =
        !stopping_ && take_(static_cast<uint64_t>(channel_->tid),
                            {channel_->registers, std::min<size_t>(channel_->registersSize,
                                                                   sizeof channel_->registers)});
    expected = TapChannel::Taking;
    channel_->state.compare_exchange_strong(expected,
                                            taken ? TapChannel::Taken : TapChannel::Declined);
    wakeAll(channel_->state);
  }
}

} // namespace strobe::lldb_plugin
