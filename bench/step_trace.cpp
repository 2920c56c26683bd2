// A tiny ptrace tracer that produces real trace records for the codec benchmark without a debugger
// (x86-64 Linux). Two modes:
//   step_trace --out FILE --start-offset HEX [--count N] [--memory] -- PROGRAM ARGS...
//     runs PROGRAM to PROGRAM's load address + HEX (a function's offset, from nm), then
//     single-steps N instructions (default 200000): registers, extended state (as `strobe step`
//     records it: segment registers, SSE, x87, AVX), the instruction bytes and, with --memory,
//     the memory each instruction accessed at the addresses the isa helper's model predicts (read
//     values before the step, written values after it).
//   step_trace --out FILE --sample HZ [--duration SECONDS] -- PROGRAM ARGS...
//     stops PROGRAM HZ times a second (SIGSTOP) and records its registers: a sample stream.
#include "RecordFile.h"
#include "isa/InstructionInfo.h"
#include "native/PtraceRegisters.h"

#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace strobe;

namespace {

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "step_trace: %s%s%s\n", what.c_str(), errno ? ": " : "",
               errno ? std::strerror(errno) : "");
  std::exit(1);
}

struct Options {
  std::string out;
  uint64_t startOffset = 0;
  uint64_t count = 200000;
  bool memory = false;
  double sampleHz = 0;
  double duration = 2;
  std::vector<char *> program;
};

Options parse(int argc, char **argv) {
  Options o;
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--out")
      o.out = value();
    else if (arg == "--start-offset")
      o.startOffset = std::stoull(value(), nullptr, 16);
    else if (arg == "--count")
      o.count = std::stoull(value());
    else if (arg == "--memory")
      o.memory = true;
    else if (arg == "--sample")
      o.sampleHz = std::stod(value());
    else if (arg == "--duration")
      o.duration = std::stod(value());
    else
      die("unknown option " + arg);
  }
  for (++i; i < argc; ++i)
    o.program.push_back(argv[i]);
  if (o.out.empty() || o.program.empty())
    die("usage: step_trace --out FILE (--start-offset HEX [--count N] [--memory] | --sample HZ "
        "[--duration S]) -- PROGRAM ARGS...");
  o.program.push_back(nullptr);
  return o;
}

pid_t launch(std::vector<char *> &program) {
  const pid_t pid = fork();
  if (pid == 0) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    execv(program[0], program.data());
    _exit(127);
  }
  int status;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
    die("cannot start " + std::string(program[0]));
  return pid;
}

// Where the program's file is mapped from offset 0.
uint64_t loadBase(pid_t pid, const std::string &program) {
  char resolved[PATH_MAX];
  if (!realpath(program.c_str(), resolved))
    die("cannot resolve " + program);
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    unsigned long start, end, offset;
    char perms[8], path[PATH_MAX] = "";
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %*s %*s %4095s", &start, &end, perms, &offset,
                    path) >= 4 &&
        offset == 0 && resolved == std::string(path))
      return start;
  }
  die("no mapping of " + program);
}

void waitStopped(pid_t pid) {
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
    die("the program did not stop as expected");
}

// Runs to `address` with a temporary int3.
void runTo(pid_t pid, uint64_t address) {
  errno = 0;
  const long word = ptrace(PTRACE_PEEKTEXT, pid, address, nullptr);
  if (errno)
    die("cannot read the start address");
  ptrace(PTRACE_POKETEXT, pid, address, (word & ~0xffL) | 0xcc);
  ptrace(PTRACE_CONT, pid, nullptr, nullptr);
  waitStopped(pid);
  user_regs_struct regs;
  ptrace(PTRACE_GETREGS, pid, nullptr, &regs);
  if (regs.rip - 1 != address)
    die("stopped elsewhere than the start address");
  regs.rip = address;
  ptrace(PTRACE_SETREGS, pid, nullptr, &regs);
  ptrace(PTRACE_POKETEXT, pid, address, word);
}

class Reader {
public:
  explicit Reader(pid_t pid) : pid_(pid) {}

  void state(TraceRecord &r, bool ext) {
    user_regs_struct g;
    ptrace(PTRACE_GETREGS, pid_, nullptr, &g);
    r.regs = {g.rax,     g.rbx,     g.rcx,     g.rdx, g.rsi, g.rdi,
              g.rbp,     g.rsp,     g.r8,      g.r9,  g.r10, g.r11,
              g.r12,     g.r13,     g.r14,     g.r15, g.rip, g.eflags & ~0x10100ull,
              g.fs_base, g.gs_base, g.orig_rax};
    r.ext.clear();
    if (ext && !ptraceExtended(Isa::X86_64, static_cast<uint64_t>(pid_), r.ext))
      die("cannot read the extended registers");
  }

  std::vector<uint8_t> memory(uint64_t address, size_t size) {
    std::vector<uint8_t> out(size);
    if (pread(mem(), out.data(), size, static_cast<off_t>(address)) != static_cast<ssize_t>(size))
      out.clear();
    return out;
  }

  // The 16 bytes at `pc` (code does not change under the fixtures).
  const std::vector<uint8_t> &code(uint64_t pc) {
    auto it = code_.find(pc);
    if (it == code_.end())
      it = code_.emplace(pc, memory(pc, 16)).first;
    return it->second;
  }

private:
  int mem() {
    if (memFd_ < 0)
      memFd_ = open(("/proc/" + std::to_string(pid_) + "/mem").c_str(), O_RDONLY);
    return memFd_;
  }

  pid_t pid_;
  int memFd_ = -1;
  std::map<uint64_t, std::vector<uint8_t>> code_;
};

int stepMode(const Options &o) {
  std::vector<char *> program = o.program;
  const pid_t pid = launch(program);
  runTo(pid, loadBase(pid, program[0]) + o.startOffset);
  Reader reader(pid);
  // A single step runs one iteration of a rep string instruction, as in the Stepper.
  InstructionDecoder decoder(Isa::X86_64, RepeatedStrings::OneIterationPerStep);
  bench::RecordWriter out(o.out, Isa::X86_64, true, o.memory);
  TraceRecord previous;
  reader.state(previous, true);
  out.write(previous);
  uint64_t steps = 0, unpredicted = 0;
  std::vector<uint64_t> before;
  for (; steps < o.count; ++steps) {
    const uint64_t pc = previous.regs[16];
    const std::vector<uint8_t> &bytes = reader.code(pc);
    const auto insn = decoder.decode(bytes, pc);
    if (!insn)
      die("undecodable instruction");
    TraceRecord record;
    std::vector<MemorySlot> slots;
    if (o.memory) {
      before = previous.regs;
      before.insert(before.end(), previous.ext.begin(), previous.ext.end());
      if (auto predicted = decoder.slots(bytes, pc, before))
        slots = *predicted;
      else
        ++unpredicted;
      for (const MemorySlot &s : slots)
        record.memory.push_back({s.address,
                                 s.size,
                                 s.read,
                                 s.write,
                                 s.read ? reader.memory(s.address, s.size) : std::vector<uint8_t>{},
                                 {}});
    }
    ptrace(PTRACE_SINGLESTEP, pid, nullptr, nullptr);
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
      break; // the program ended
    reader.state(record, true);
    record.instruction.assign(bytes.begin(), bytes.begin() + insn->length);
    for (MemoryAccess &a : record.memory)
      if (a.write)
        a.writtenValue = reader.memory(a.address, a.size);
    record.memory.eraseIf([](const MemoryAccess &a) {
      return (a.read && a.readValue.size() != a.size) ||
             (a.write && a.writtenValue.size() != a.size);
    });
    out.write(record);
    previous = std::move(record);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  std::printf("step_trace: %lu instructions stepped, %lu with unpredictable memory\n",
              static_cast<unsigned long>(steps), static_cast<unsigned long>(unpredicted));
  return 0;
}

int sampleMode(const Options &o) {
  std::vector<char *> program = o.program;
  const pid_t pid = launch(program);
  Reader reader(pid);
  bench::RecordWriter out(o.out, Isa::X86_64, false, false);
  const auto period = std::chrono::duration<double>(1.0 / o.sampleHz);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.duration);
  ptrace(PTRACE_CONT, pid, nullptr, nullptr);
  uint64_t samples = 0;
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(period);
    kill(pid, SIGSTOP);
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
      break;
    const int signal = WSTOPSIG(status);
    if (signal == SIGSTOP) {
      TraceRecord record;
      reader.state(record, false);
      out.write(record);
      ++samples;
    }
    ptrace(PTRACE_CONT, pid, nullptr, signal == SIGSTOP ? 0 : signal);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  std::printf("step_trace: %lu samples\n", static_cast<unsigned long>(samples));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  const Options o = parse(argc, argv);
  return o.sampleHz > 0 ? sampleMode(o) : stepMode(o);
}
