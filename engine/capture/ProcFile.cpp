#include "capture/ProcFile.h"

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>
#include <utility>

namespace strobe {

ProcFile::ProcFile(const std::string &path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}

ProcFile::~ProcFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

ProcFile::ProcFile(ProcFile &&other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buffer_(std::move(other.buffer_)) {}

std::string_view ProcFile::read() {
  if (fd_ < 0)
    return {};
  buffer_.resize(4096); // /proc generates these files a page at a time
  ssize_t size = ::pread(fd_, buffer_.data(), buffer_.size(), 0);
  return std::string_view(buffer_.data(), size > 0 ? static_cast<size_t>(size) : 0);
}

ThreadProcFiles::ThreadProcFiles(int pid, std::string name) : pid_(pid), name_(std::move(name)) {}

std::string_view ThreadProcFiles::read(uint64_t tid) {
  auto file = files_.find(tid);
  if (file == files_.end())
    file = files_.try_emplace(tid, fmt::format("/proc/{}/task/{}/{}", pid_, tid, name_)).first;
  std::string_view text = file->second.read();
  if (text.empty()) {
    files_.erase(file);
    return {};
  }
  return text;
}

std::string_view statusField(std::string_view status, std::string_view field) {
  for (size_t at = 0; at < status.size();) {
    size_t end = std::min(status.size(), status.find('\n', at));
    std::string_view line = status.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(field))
      continue;
    line.remove_prefix(field.size());
    line.remove_prefix(std::min(line.size(), line.find_first_not_of(" \t")));
    return line;
  }
  return {};
}

std::optional<uint64_t> statusSignalMask(std::string_view status, std::string_view field) {
  std::string_view value = statusField(status, field);
  uint64_t mask = 0;
  if (value.empty() ||
      std::from_chars(value.data(), value.data() + value.size(), mask, 16).ec != std::errc())
    return std::nullopt;
  return mask;
}

namespace {

bool hasSignal(std::optional<uint64_t> mask, int signo) {
  return mask && (*mask >> (signo - 1) & 1);
}

// Calls f with the tid of each thread of process `pid`; whether the thread list could be read to
// its end.
template <typename F> bool forEachThread(int pid, F f) {
  std::error_code error;
  // Not a range-for: its increment throws when the process goes while we look.
  for (std::filesystem::directory_iterator task(fmt::format("/proc/{}/task", pid), error), end;
       !error && task != end; task.increment(error))
    if (int tid = std::atoi(task->path().filename().c_str()); tid > 0)
      f(tid);
  return !error;
}

// Calls f with the /proc status text of each thread of process `pid`; whether the thread list
// could be read to its end.
template <typename F> bool forEachThreadStatus(int pid, F f) {
  return forEachThread(pid, [&](int tid) {
    ProcFile status(fmt::format("/proc/{}/task/{}/status", pid, tid));
    f(status.read());
  });
}

} // namespace

bool signalPending(int pid, int signo) {
  if (hasSignal(statusSignalMask(ProcFile(fmt::format("/proc/{}/status", pid)).read(), "ShdPnd:"),
                signo))
    return true;
  bool pending = false;
  forEachThreadStatus(pid, [&](std::string_view status) {
    pending = pending || hasSignal(statusSignalMask(status, "SigPnd:"), signo);
  });
  return pending;
}

bool signalBlockedEverywhere(int pid, int signo) {
  if (!hasSignal(statusSignalMask(ProcFile(fmt::format("/proc/{}/status", pid)).read(), "ShdPnd:"),
                 signo))
    return false;
  bool anyThread = false, allBlock = true;
  const bool listed = forEachThreadStatus(pid, [&](std::string_view status) {
    std::optional<uint64_t> blocked = statusSignalMask(status, "SigBlk:");
    if (!blocked)
      return; // a thread that ended while we looked
    anyThread = true;
    allBlock = allBlock && hasSignal(blocked, signo);
  });
  return listed && anyThread && allBlock;
}

std::vector<int> threadsOf(int pid) {
  std::vector<int> tids;
  forEachThread(pid, [&tids](int tid) { tids.push_back(tid); });
  return tids;
}

namespace {

std::optional<uint64_t> threadSignalMask(int pid, int tid, std::string_view field) {
  return statusSignalMask(ProcFile(fmt::format("/proc/{}/task/{}/status", pid, tid)).read(), field);
}

} // namespace

std::optional<bool> threadBlocksSignal(int pid, int tid, int signo) {
  std::optional<uint64_t> blocked = threadSignalMask(pid, tid, "SigBlk:");
  if (!blocked)
    return std::nullopt;
  return hasSignal(blocked, signo);
}

bool threadSignalPending(int pid, int tid, int signo) {
  return hasSignal(threadSignalMask(pid, tid, "SigPnd:"), signo);
}

void ThreadProcFiles::retain(std::span<const uint64_t> tids) { eraseUnlisted(files_, tids); }

} // namespace strobe
