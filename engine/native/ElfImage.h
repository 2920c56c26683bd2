// A 64-bit little-endian ELF image as its file holds it (or, for the vDSO, as memory holds it):
// what the native unwinder and symbol lookup need, read in place from a read-only mapping.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace strobe {

class ElfImage {
public:
  // Null when the file cannot be opened or is not a 64-bit little-endian ELF file.
  static std::unique_ptr<ElfImage> open(const std::string &path);
  static std::unique_ptr<ElfImage> fromBytes(std::vector<uint8_t> bytes);
  ~ElfImage();
  ElfImage(const ElfImage &) = delete;
  ElfImage &operator=(const ElfImage &) = delete;

  // The identity of the opened file, to check it is the one a process mapped.
  uint64_t device() const { return device_; }
  uint64_t inode() const { return inode_; }

  // Link-time address of the byte at `fileOffset` (through the PT_LOAD segment holding it).
  std::optional<uint64_t> addressOfOffset(uint64_t fileOffset) const;
  // Everything from `address` to the end of its segment's file bytes.
  std::span<const uint8_t> bytesFrom(uint64_t address) const;
  // Link-time address of .eh_frame_hdr (PT_GNU_EH_FRAME).
  std::optional<uint64_t> ehFrameHdr() const { return ehFrameHdr_; }
  // Link-time entry addresses of the functions whose symbol is exactly `name` (.symtab and
  // .dynsym, any binding); indirect functions are left out, since their symbol names a resolver.
  std::vector<uint64_t> functionsNamed(std::string_view name);

  struct FunctionSymbol {
    std::string name; // as target/Demangle.h shows it
    uint64_t start;   // link-time
    uint64_t size;
  };
  // The function whose symbol (STT_FUNC or STT_GNU_IFUNC, defined, size > 0) covers the link-time
  // `address`, or the .plt entry, named NAME@plt after the function its jump slot binds. Where
  // several do, the one LLDB's symbol table picks, so that both debuggers name the code alike: the
  // lowest start, then the smallest size, then global before weak before local, then .symtab
  // before .dynsym, then table order.
  std::optional<FunctionSymbol> functionAt(uint64_t address);

  struct DataSymbol {
    uint64_t address; // link-time
    uint64_t size;
  };
  // The data object (STT_OBJECT, defined) whose symbol is exactly `name`, a global one before a
  // file-local one; thread-local variables have no single address and are left out.
  std::optional<DataSymbol> dataNamed(std::string_view name) const;

private:
  struct Segment {
    uint64_t vaddr, offset, fileSize;
  };
  ElfImage() = default;
  bool parse();
  void indexSymbols();
  void indexPltEntries();

  std::span<const uint8_t> bytes_;
  void *mapping_ = nullptr; // mmap of the file, or null when the bytes are owned
  std::vector<uint8_t> owned_;
  uint64_t device_ = 0, inode_ = 0;
  std::vector<Segment> loads_;
  std::optional<uint64_t> ehFrameHdr_;
  bool symbolsIndexed_ = false;
  std::unordered_map<std::string_view, std::vector<uint64_t>> functions_;
  struct SizedFunction {
    uint64_t start, size;
    unsigned rank;  // the preferred binding first: 0 global, 1 weak, 2 local
    uint64_t order; // .symtab entries, then .dynsym entries, then .plt ones, in table order
    std::string_view name;
    bool plt;
  };
  std::vector<SizedFunction> byAddress_; // ascending (start, size, rank, order)
  std::vector<uint64_t> reach_;          // reach_[i]: the highest end of byAddress_[0..i]
};

} // namespace strobe
