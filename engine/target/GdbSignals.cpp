#include "target/GdbSignals.h"

#include <array>
#include <csignal>
#include <utility>

namespace strobe {
namespace {

// {host, remote protocol}: gdb/include/gdb/signals.def numbers its signals in this order.
constexpr std::array<std::pair<int, int>, 30> kSignals = {{
    {SIGHUP, 1},     {SIGINT, 2},   {SIGQUIT, 3},   {SIGILL, 4},   {SIGTRAP, 5},  {SIGABRT, 6},
    {SIGFPE, 8},     {SIGKILL, 9},  {SIGBUS, 10},   {SIGSEGV, 11}, {SIGSYS, 12},  {SIGPIPE, 13},
    {SIGALRM, 14},   {SIGTERM, 15}, {SIGURG, 16},   {SIGSTOP, 17}, {SIGTSTP, 18}, {SIGCONT, 19},
    {SIGCHLD, 20},   {SIGTTIN, 21}, {SIGTTOU, 22},  {SIGIO, 23},   {SIGXCPU, 24}, {SIGXFSZ, 25},
    {SIGVTALRM, 26}, {SIGPROF, 27}, {SIGWINCH, 28}, {SIGUSR1, 30}, {SIGUSR2, 31}, {SIGPWR, 32},
}};

} // namespace

std::optional<int> gdbSignalFromHost(int hostSigno) {
  for (const auto &[host, gdb] : kSignals)
    if (host == hostSigno)
      return gdb;
  return std::nullopt;
}

std::optional<int> hostSignalFromGdb(int gdbSigno) {
  for (const auto &[host, gdb] : kSignals)
    if (gdb == gdbSigno)
      return host;
  return std::nullopt;
}

} // namespace strobe
