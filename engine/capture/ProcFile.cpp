#include "capture/ProcFile.h"

#include <fcntl.h>
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

void ThreadProcFiles::retain(std::span<const uint64_t> tids) { eraseUnlisted(files_, tids); }

} // namespace strobe
