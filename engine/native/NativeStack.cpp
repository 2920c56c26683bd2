#include "native/NativeStack.h"

#include <algorithm>

#include <sys/uio.h>

namespace strobe {

bool readProcessMemory(int pid, uint64_t address, void *out, size_t size) {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void *>(address), size};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

size_t readProcessMemoryPrefix(int pid, uint64_t address, void *out, size_t size) {
  constexpr uint64_t kPage = 4096;
  if (readProcessMemory(pid, address, out, size))
    return size;
  const size_t prefix = std::min<uint64_t>(size, kPage - address % kPage);
  return prefix < size && readProcessMemory(pid, address, out, prefix) ? prefix : 0;
}

NativeStack::NativeStack(Isa isa, int pid)
    : isa_(isa),
      read_([pid](uint64_t a, void *out, size_t n) { return readProcessMemory(pid, a, out, n); }),
      modules_(pid, read_), unwinder_(isa) {}

bool NativeStack::walk(const std::vector<uint64_t> &regs, unsigned depth,
                       std::vector<uint64_t> &stack) {
  const uint64_t pc = regs[registerTable(isa_).pc];
  stack.assign(1, pc);
  CfiUnwinder::Frame frame{frameRegisters(isa_, regs), pc, 0, true}, caller;
  uint64_t calleeCfa = 0;
  while (stack.size() < depth) {
    auto code = modules_.codeAt(frame.exactPc ? frame.pc : frame.pc - 1);
    if (!code)
      return false;
    CfiUnwinder::Result result = unwinder_.step(*code->image, code->bias, frame, caller, read_);
    if (result == CfiUnwinder::Result::Outermost)
      break;
    // Each caller's frame lies above its callee's; anything else is a corrupt stack or an
    // alternate signal stack, which the debugger judges better.
    if (result == CfiUnwinder::Result::Unknown || (stack.size() > 1 && frame.cfa <= calleeCfa))
      return false;
    calleeCfa = frame.cfa;
    stack.push_back(caller.pc);
    frame = caller;
  }
  return true;
}

} // namespace strobe
