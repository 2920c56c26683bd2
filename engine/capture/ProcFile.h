// A /proc file kept open and read again from its start. A capture reads some at every stop (each
// thread's schedstat, the process's state), and a fresh open, read and close costs about eight
// times one read of an open file (3.2 against 0.4 µs for a schedstat on this project's VMs).
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strobe {

class ProcFile {
public:
  explicit ProcFile(const std::string &path);
  ~ProcFile();
  ProcFile(ProcFile &&other) noexcept;
  ProcFile &operator=(ProcFile &&) = delete;

  // The file as it reads now, up to a page; empty when it could not be opened or its process or
  // thread is gone (a reused id names another task, which this file never reads).
  std::string_view read();

private:
  int fd_;
  std::string buffer_;
};

// The number a /proc text starts with (schedstat's ns on CPU, syscall's number or -1); nullopt for
// a text that does not start with one, such as the empty read of a thread that is gone.
template <typename Number> std::optional<Number> leadingNumber(std::string_view text) {
  Number value{};
  if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc())
    return std::nullopt;
  return value;
}

// Field `number` (1-based, as proc(5) numbers them; 3 or more) of a /proc/PID/stat text, counted
// past the command name, which may itself hold spaces and parentheses; empty when there is none.
inline std::string_view statField(std::string_view stat, int number) {
  size_t end = stat.rfind(')');
  if (end == std::string_view::npos)
    return {};
  stat.remove_prefix(end + 1);
  for (int field = 3; field <= number; ++field) {
    stat.remove_prefix(std::min(stat.size(), stat.find_first_not_of(" \n")));
    size_t length = std::min(stat.size(), stat.find_first_of(" \n"));
    if (field == number)
      return stat.substr(0, length);
    stat.remove_prefix(length);
  }
  return {};
}

// Whether a process has a single thread, from its kept-open /proc/PID/stat (field 20).
inline bool singleThreaded(ProcFile &stat) {
  return leadingNumber<long>(statField(stat.read(), 20)) == 1;
}

// The value of a /proc/PID/status line such as "TracerPid:", blanks before it skipped; empty when
// the text has no such line.
std::string_view statusField(std::string_view status, std::string_view field);
// The hexadecimal signal mask of a /proc/PID/status line such as "SigBlk:" (bit n - 1: signal
// n); nullopt when the text has no such line.
std::optional<uint64_t> statusSignalMask(std::string_view status, std::string_view field);

// Whether `signo` is queued for process `pid` or one of its threads: sent, not yet delivered.
bool signalPending(int pid, int signo);
// Whether `signo`, sent to process `pid`, waits undelivered because every thread of it blocks
// it (sigprocmask): the process holds it pending and no thread will take it until one unblocks it.
bool signalBlockedEverywhere(int pid, int signo);

// The threads of process `pid` (/proc/PID/task); empty when it is gone.
std::vector<int> threadsOf(int pid);
// Whether thread `tid` of process `pid` blocks `signo`; nullopt when the thread has ended.
std::optional<bool> threadBlocksSignal(int pid, int tid, int signo);
// Whether `signo`, sent to thread `tid` of process `pid`, waits undelivered.
bool threadSignalPending(int pid, int tid, int signo);

// Erases the entries of a map keyed by tid whose thread is not in `tids`: those that ended.
// Sorted first, so a process of thousands of threads costs a stop n log n, not n squared.
template <typename ByTid> void eraseUnlisted(ByTid &byTid, std::span<const uint64_t> tids) {
  std::vector<uint64_t> listed(tids.begin(), tids.end());
  std::sort(listed.begin(), listed.end());
  std::erase_if(byTid, [&listed](const auto &entry) {
    return !std::binary_search(listed.begin(), listed.end(), entry.first);
  });
}

// One file of each thread of a process, /proc/PID/task/TID/NAME, opened at the thread's first
// read and kept open while the thread lives: every stop reads it for every thread.
class ThreadProcFiles {
public:
  ThreadProcFiles(int pid, std::string name);

  // The thread's file as it reads now; empty when the thread is gone. Its file is then closed,
  // so a tid that comes to name a thread begun since is opened afresh at the next read.
  std::string_view read(uint64_t tid);
  // Closes the files of the threads not in `tids`, those that ended: a program that makes many
  // short-lived threads must not fill the debugger's file table.
  void retain(std::span<const uint64_t> tids);
  void closeAll() { files_.clear(); }

private:
  int pid_;
  std::string name_;
  std::map<uint64_t, ProcFile> files_; // by tid
};

} // namespace strobe
