// The ELF images a process on this host has mapped, from /proc/PID/maps: the code at a pc (for
// the native unwinder) and the function symbol there (for Target::symbolize), the functions of a
// name in every module (for Target::resolve) and the place of a variable (for
// Target::dataAddress).
#pragma once

#include "native/CfiUnwinder.h"
#include "native/ElfImage.h"
#include "target/Target.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace strobe {

class ProcessModules {
public:
  ProcessModules(int pid, ReadMemory read) : pid_(pid), read_(std::move(read)) {}

  int pid() const { return pid_; }

  struct Code {
    ElfImage *image;
    uint64_t bias; // runtime address - link-time address
  };
  // The image whose executable mapping holds `pc`; the maps are re-read (at most every few
  // milliseconds) when no known mapping does.
  std::optional<Code> codeAt(uint64_t pc);
  // The ELF function symbol covering `pc` (see ElfImage::functionAt), its start at run time.
  std::optional<ElfImage::FunctionSymbol> functionAt(uint64_t pc);
  // Runtime entry addresses of every module's functions named exactly `name`.
  std::vector<uint64_t> functionsNamed(std::string_view name);
  // The runtime place of the data object named exactly `name` in the first module (in address
  // order, so the executable before its libraries) that defines one.
  std::optional<DataLocation> dataNamed(std::string_view name);
  // Where the kernel's vDSO is mapped: [first, second).
  std::optional<std::pair<uint64_t, uint64_t>> vdso();

private:
  struct Mapping {
    uint64_t start = 0, end = 0, offset = 0;
    uint64_t device = 0, inode = 0;
    bool executable = false;
    std::string path;
  };
  void reload();
  void reloadIfStale();
  ElfImage *imageFor(const Mapping &mapping);
  std::optional<uint64_t> biasOf(const Mapping &mapping);
  // Calls visit(image, load bias) once per mapped file, until it returns false.
  template <typename Visit> void forEachImage(Visit visit);

  int pid_;
  ReadMemory read_;
  std::vector<Mapping> mappings_; // ascending start
  // By (device, inode), or by path for the vDSO; null when the file cannot be used.
  std::map<std::pair<uint64_t, uint64_t>, std::unique_ptr<ElfImage>> files_;
  std::unique_ptr<ElfImage> vdso_;
  bool vdsoTried_ = false;
  std::chrono::steady_clock::time_point loadedAt_{};
};

} // namespace strobe
