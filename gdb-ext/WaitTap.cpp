#include "WaitTap.h"

#include "native/ResumeLog.h"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fmt/format.h>
#include <optional>
#include <string>

namespace strobe::gdb {
namespace {

struct TapState {
  int pid;
  int signo;
  WaitTap::Take take;
  ResumeLog resumes; // GDB's requests since arming
};

std::optional<TapState> tapState; // GDB's main thread only: it arms, waits and resumes

// Whether thread `tid` belongs to the armed process (GDB may debug others beside it).
bool ofArmedProcess(pid_t tid) {
  return tid == tapState->pid ||
         access(fmt::format("/proc/{}/task/{}", tapState->pid, tid).c_str(), F_OK) == 0;
}

// Whether a stop (`status` of waitpid for `tid`) is a sample stop the tap may take.
bool takes(pid_t tid, int status) {
  if (!tapState || !WIFSTOPPED(status) || WSTOPSIG(status) != tapState->signo ||
      (status >> 16) != 0)
    return false;
  if (!tapState->resumes.continued(tid) || !ofArmedProcess(tid))
    return false;
  bool taken = false;
  try {
    taken = tapState->take(static_cast<uint64_t>(tid));
  } catch (...) {
    return false; // GDB's catchpoint takes it, and the engine reports what went wrong
  }
  // Resumed as GDB resumes a stop of a signal set `nostop nopass`. Should the thread have died
  // meanwhile, the next waitpid() reports it.
  if (taken)
    ::ptrace(PTRACE_CONT, tid, nullptr, nullptr);
  return taken;
}

pid_t tappedWaitpid(pid_t pid, int *status, int options) {
  for (;;) {
    pid_t reported = ::waitpid(pid, status, options);
    if (reported <= 0 || !status)
      return reported;
    if (tapState && (WIFEXITED(*status) || WIFSIGNALED(*status)))
      tapState->resumes.forget(reported);
    if (!takes(reported, *status))
      return reported;
  }
}

// glibc declares ptrace variadic; GDB passes all four arguments, in the registers a fixed
// four-argument function reads them from.
long tappedPtrace(int request, pid_t pid, void *address, void *data) {
  if (tapState)
    tapState->resumes.note(request, pid);
  return ::ptrace(static_cast<__ptrace_request>(request), pid, address, data);
}

// The address ld.so stored for a dynamic entry: glibc has already added the load bias to those
// that hold addresses; a loader that did not leaves them small.
uintptr_t dynamicAddress(uintptr_t value, uintptr_t bias) {
  return value < bias ? value + bias : value;
}

// The slot of GDB's global offset table through which its executable calls `name`, or null.
void **gotSlotOf(const char *name) {
  struct Search {
    const char *name;
    void **slot = nullptr;
  } search{name};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto &search = *static_cast<Search *>(data);
        const ElfW(Dyn) *dynamic = nullptr;
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dynamic =
                reinterpret_cast<const ElfW(Dyn) *>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        if (!dynamic)
          return 1; // the first object is the executable: nothing to patch
        const uintptr_t bias = info->dlpi_addr;
        const ElfW(Sym) *symbols = nullptr;
        const char *strings = nullptr;
        const ElfW(Rela) * tables[2] = {nullptr, nullptr}; // PLT relocations, then the others
        size_t sizes[2] = {0, 0};
        for (const ElfW(Dyn) *d = dynamic; d->d_tag != DT_NULL; ++d) {
          switch (d->d_tag) {
          case DT_SYMTAB:
            symbols = reinterpret_cast<const ElfW(Sym) *>(dynamicAddress(d->d_un.d_ptr, bias));
            break;
          case DT_STRTAB:
            strings = reinterpret_cast<const char *>(dynamicAddress(d->d_un.d_ptr, bias));
            break;
          case DT_JMPREL:
            tables[0] = reinterpret_cast<const ElfW(Rela) *>(dynamicAddress(d->d_un.d_ptr, bias));
            break;
          case DT_PLTRELSZ:
            sizes[0] = d->d_un.d_val;
            break;
          case DT_RELA:
            tables[1] = reinterpret_cast<const ElfW(Rela) *>(dynamicAddress(d->d_un.d_ptr, bias));
            break;
          case DT_RELASZ:
            sizes[1] = d->d_un.d_val;
            break;
          default:
            break;
          }
        }
        if (!symbols || !strings)
          return 1;
        for (int t = 0; t < 2 && !search.slot; ++t)
          for (size_t k = 0; tables[t] && k < sizes[t] / sizeof(ElfW(Rela)); ++k) {
            const ElfW(Rela) &r = tables[t][k];
            const unsigned type = ELF64_R_TYPE(r.r_info);
            if ((type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT) &&
                std::strcmp(strings + symbols[ELF64_R_SYM(r.r_info)].st_name, search.name) == 0) {
              search.slot = reinterpret_cast<void **>(bias + r.r_offset);
              break;
            }
          }
        return 1;
      },
      &search);
  return search.slot;
}

bool patch(void **slot, void *function) {
  const long page = sysconf(_SC_PAGESIZE);
  auto start = reinterpret_cast<uintptr_t>(slot) & ~static_cast<uintptr_t>(page - 1);
  // A table made read-only after relocation (RELRO) is written once more.
  if (mprotect(reinterpret_cast<void *>(start), static_cast<size_t>(page),
               PROT_READ | PROT_WRITE) != 0)
    return false;
  *slot = function;
  return true;
}

// Patches GDB's two calls, once; whether both go through the tap.
bool installed() {
  static const bool done = [] {
#if defined(__x86_64__)
    void **wait = gotSlotOf("waitpid");
    void **trace = gotSlotOf("ptrace");
    return wait && trace && patch(trace, reinterpret_cast<void *>(&tappedPtrace)) &&
           patch(wait, reinterpret_cast<void *>(&tappedWaitpid));
#else
    return false;
#endif
  }();
  return done;
}

} // namespace

WaitTap::Armed::Armed(int pid, int signo, Take take) {
  if (!installed())
    return;
  tapState.emplace(pid, signo, std::move(take));
  armed_ = true;
}

WaitTap::Armed::~Armed() {
  if (armed_)
    tapState.reset();
}

} // namespace strobe::gdb
