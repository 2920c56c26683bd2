#include "ServerSteps.h"

#include "ServerTap.h"
#include "target/QuietThread.h"

#include <sys/mman.h>

#include <algorithm>

namespace strobe::lldb_plugin {
namespace {

// How long a wait for the next stop sleeps between looks at whether LLDB's step returned; the
// library's post and the step's return both wake it at once.
constexpr uint64_t kLookNs = 10'000'000;

} // namespace

std::unique_ptr<ServerSteps> ServerSteps::open(int pid, uint64_t tid) {
  TapChannel *channel = mapTapChannel(pid);
  if (!channel)
    return nullptr;
  return std::unique_ptr<ServerSteps>(new ServerSteps(channel, tid));
}

ServerSteps::ServerSteps(TapChannel *channel, uint64_t tid) : channel_(channel), tid_(tid) {
  channel_->tracedTid.store(static_cast<int32_t>(tid_), std::memory_order_release);
}

ServerSteps::~ServerSteps() {
  finish();
  channel_->tracedTid.store(0, std::memory_order_release);
  munmap(channel_, sizeof(TapChannel));
}

bool ServerSteps::start(std::function<void()> stepOnce) {
  finish();
  lldbStepReturned_ = false;
  channel_->steppedTid.store(static_cast<int32_t>(tid_), std::memory_order_release);
  lldbStep_ = quietThread([this, stepOnce = std::move(stepOnce)] {
    lldbStepThread_ = std::this_thread::get_id();
    stepOnce();
    lldbStepThread_ = std::thread::id();
    lldbStepReturned_ = true;
    wakeAll(channel_->state);
  });
  return awaitStop();
}

bool ServerSteps::awaitStop() {
  for (;;) {
    uint32_t state = channel_->state.load(std::memory_order_acquire);
    uint32_t expected = TapChannel::Posted;
    if (state == TapChannel::Posted && channel_->kind == TapChannel::StepStop &&
        static_cast<uint64_t>(channel_->tid) == tid_ &&
        channel_->state.compare_exchange_strong(expected, TapChannel::Taking)) {
      holding_ = true;
      return true;
    }
    if (lldbStepReturned_)
      return false;
    waitWhile(channel_->state, state, kLookNs);
  }
}

bool ServerSteps::stepAgain() {
  if (!holding_)
    return false;
  holding_ = false;
  uint32_t expected = TapChannel::Taking;
  // The library gives up on an answer after seconds and hands the stop to lldb-server: the run
  // has ended then, and the wait below sees LLDB's step return.
  stepMade_ = channel_->state.compare_exchange_strong(expected, TapChannel::Taken);
  if (stepMade_)
    wakeAll(channel_->state);
  return awaitStop();
}

void ServerSteps::finish() {
  channel_->steppedTid.store(0, std::memory_order_release);
  if (holding_) {
    holding_ = false;
    uint32_t expected = TapChannel::Taking;
    if (channel_->state.compare_exchange_strong(expected, TapChannel::Declined))
      wakeAll(channel_->state);
  }
  if (lldbStep_.joinable())
    lldbStep_.join();
}

std::span<const uint8_t> ServerSteps::registers() const {
  return {channel_->registers,
          std::min<size_t>(channel_->registersSize, sizeof channel_->registers)};
}

std::span<const uint8_t> ServerSteps::extendedRegisters() const {
  return {channel_->extended, std::min<size_t>(channel_->extendedSize, sizeof channel_->extended)};
}

} // namespace strobe::lldb_plugin
