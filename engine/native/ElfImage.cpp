#include "native/ElfImage.h"

#include "native/ByteCursor.h"
#include "target/Demangle.h"

#include <algorithm>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

namespace strobe {
namespace {

// LLDB's preference among symbols of one address range: global, weak, then the others (local
// ones and its own .plt symbols).
constexpr unsigned kGlobalRank = 0, kWeakRank = 1, kOtherRank = 2;
// Where a symbol's table comes in LLDB's symbol order, in SizedFunction::order's top bits.
constexpr uint64_t kDynsymOrder = uint64_t{1} << 62, kPltOrder = uint64_t{1} << 63;

unsigned bindingRank(unsigned char info) {
  switch (ELF64_ST_BIND(info)) {
  case STB_GLOBAL:
    return kGlobalRank;
  case STB_WEAK:
    return kWeakRank;
  default:
    return kOtherRank;
  }
}

template <typename T> std::optional<T> recordAt(std::span<const uint8_t> bytes, uint64_t offset) {
  ByteCursor cursor(bytes);
  cursor.seek(offset);
  T value = cursor.read<T>();
  return cursor.ok() ? std::optional<T>(value) : std::nullopt;
}

// Calls visit(symbol, name, dynamic, offset in its table) for every named symbol of .symtab and
// .dynsym, until it returns false.
template <typename Visit> void forEachSymbol(std::span<const uint8_t> bytes, Visit visit) {
  auto header = recordAt<Elf64_Ehdr>(bytes, 0);
  if (!header || header->e_shentsize != sizeof(Elf64_Shdr))
    return;
  auto sectionAt = [&](unsigned i) {
    return recordAt<Elf64_Shdr>(bytes, header->e_shoff + uint64_t{i} * sizeof(Elf64_Shdr));
  };
  for (unsigned i = 0; i < header->e_shnum; ++i) {
    auto table = sectionAt(i);
    if (!table || (table->sh_type != SHT_SYMTAB && table->sh_type != SHT_DYNSYM) ||
        table->sh_entsize != sizeof(Elf64_Sym))
      continue;
    auto strings = sectionAt(table->sh_link);
    if (!strings || strings->sh_offset > bytes.size() ||
        strings->sh_size > bytes.size() - strings->sh_offset)
      continue;
    auto names = bytes.subspan(strings->sh_offset, strings->sh_size);
    for (uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= table->sh_size;
         offset += sizeof(Elf64_Sym)) {
      auto sym = recordAt<Elf64_Sym>(bytes, table->sh_offset + offset);
      if (!sym)
        break;
      ByteCursor cursor(names);
      cursor.seek(sym->st_name);
      std::string_view name = cursor.cstring();
      if (!cursor.ok() || name.empty())
        continue;
      if (!visit(*sym, name, table->sh_type == SHT_DYNSYM, offset))
        return;
    }
  }
}

} // namespace

std::unique_ptr<ElfImage> ElfImage::open(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return nullptr;
  struct stat st {};
  void *mapping = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > 0)
    mapping = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (mapping == MAP_FAILED)
    return nullptr;
  std::unique_ptr<ElfImage> image(new ElfImage);
  image->mapping_ = mapping;
  image->bytes_ = {static_cast<const uint8_t *>(mapping), static_cast<size_t>(st.st_size)};
  image->device_ = st.st_dev;
  image->inode_ = st.st_ino;
  return image->parse() ? std::move(image) : nullptr;
}

std::unique_ptr<ElfImage> ElfImage::fromBytes(std::vector<uint8_t> bytes) {
  std::unique_ptr<ElfImage> image(new ElfImage);
  image->owned_ = std::move(bytes);
  image->bytes_ = image->owned_;
  return image->parse() ? std::move(image) : nullptr;
}

ElfImage::~ElfImage() {
  if (mapping_)
    munmap(mapping_, bytes_.size());
}

bool ElfImage::parse() {
  auto header = recordAt<Elf64_Ehdr>(bytes_, 0);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
      header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_ident[EI_DATA] != ELFDATA2LSB ||
      header->e_phentsize != sizeof(Elf64_Phdr))
    return false;
  for (unsigned i = 0; i < header->e_phnum; ++i) {
    auto ph = recordAt<Elf64_Phdr>(bytes_, header->e_phoff + uint64_t{i} * sizeof(Elf64_Phdr));
    if (!ph)
      return false;
    if (ph->p_type == PT_LOAD)
      loads_.push_back({ph->p_vaddr, ph->p_offset, ph->p_filesz});
    else if (ph->p_type == PT_GNU_EH_FRAME)
      ehFrameHdr_ = ph->p_vaddr;
  }
  return !loads_.empty();
}

std::optional<uint64_t> ElfImage::addressOfOffset(uint64_t fileOffset) const {
  // Mappings start at page boundaries, which may lie before the segment's first file byte.
  const Segment *best = nullptr;
  for (const Segment &s : loads_)
    if ((s.offset & ~uint64_t{0xfff}) <= fileOffset && fileOffset < s.offset + s.fileSize)
      best = &s;
  if (!best)
    return std::nullopt;
  return best->vaddr - best->offset + fileOffset;
}

std::span<const uint8_t> ElfImage::bytesFrom(uint64_t address) const {
  for (const Segment &s : loads_) {
    if (address < s.vaddr || address - s.vaddr >= s.fileSize)
      continue;
    uint64_t offset = s.offset + (address - s.vaddr);
    uint64_t end = s.offset + s.fileSize;
    if (end > bytes_.size() || offset >= end)
      return {};
    return bytes_.subspan(offset, end - offset);
  }
  return {};
}

std::vector<uint64_t> ElfImage::functionsNamed(std::string_view name) {
  if (!symbolsIndexed_)
    indexSymbols();
  auto it = functions_.find(name);
  return it == functions_.end() ? std::vector<uint64_t>{} : it->second;
}

void ElfImage::indexSymbols() {
  symbolsIndexed_ = true;
  forEachSymbol(bytes_, [&](const Elf64_Sym &sym, std::string_view symbolName, bool dynamic,
                            uint64_t offset) {
    unsigned type = ELF64_ST_TYPE(sym.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
        sym.st_value == 0)
      return true;
    if (sym.st_size > 0) {
      uint64_t order = (dynamic ? kDynsymOrder : 0) | offset;
      byAddress_.push_back(
          {sym.st_value, sym.st_size, bindingRank(sym.st_info), order, symbolName, false});
    }
    if (type != STT_FUNC) // an indirect function's symbol names its resolver
      return true;
    std::vector<uint64_t> &addresses = functions_[symbolName];
    if (std::find(addresses.begin(), addresses.end(), sym.st_value) == addresses.end())
      addresses.push_back(sym.st_value);
    return true;
  });
  indexPltEntries();
  auto key = [](const SizedFunction &f) { return std::tie(f.start, f.size, f.rank, f.order); };
  std::sort(byAddress_.begin(), byAddress_.end(),
            [&](const SizedFunction &a, const SizedFunction &b) { return key(a) < key(b); });
  reach_.reserve(byAddress_.size());
  for (const SizedFunction &f : byAddress_)
    reach_.push_back(std::max(reach_.empty() ? 0 : reach_.back(), f.start + f.size));
}

std::optional<ElfImage::FunctionSymbol> ElfImage::functionAt(uint64_t address) {
  if (!symbolsIndexed_)
    indexSymbols();
  auto after = std::upper_bound(byAddress_.begin(), byAddress_.end(), address,
                                [](uint64_t a, const SizedFunction &f) { return a < f.start; });
  // Every function covering `address` starts before `after` and ends past it, and so do the
  // reaches of all entries from it on: walk back until the reach falls short.
  const SizedFunction *best = nullptr;
  for (size_t i = after - byAddress_.begin(); i > 0 && reach_[i - 1] > address; --i)
    if (const SizedFunction &f = byAddress_[i - 1]; address - f.start < f.size)
      best = &f;
  if (!best)
    return std::nullopt;
  std::string name(best->name);
  if (best->plt)
    name += "@plt";
  return FunctionSymbol{demangledName(name), best->start, best->size};
}

// The entries of .plt as LLDB reads them: .rela.plt relocates one jump slot per entry, in entry
// order, after the resolver's own entry (PLT0); an entry whose relocation is no jump slot (an
// IRELATIVE one, for a local indirect function) stays unnamed.
void ElfImage::indexPltEntries() {
  auto header = recordAt<Elf64_Ehdr>(bytes_, 0);
  if (!header)
    return;
  uint32_t jumpSlot = header->e_machine == EM_X86_64    ? R_X86_64_JUMP_SLOT
                      : header->e_machine == EM_AARCH64 ? R_AARCH64_JUMP_SLOT
                                                        : 0;
  auto sectionAt = [&](unsigned i) {
    return recordAt<Elf64_Shdr>(bytes_, header->e_shoff + uint64_t{i} * sizeof(Elf64_Shdr));
  };
  auto contents = [&](const Elf64_Shdr &section) -> std::span<const uint8_t> {
    if (section.sh_offset > bytes_.size() || section.sh_size > bytes_.size() - section.sh_offset)
      return {};
    return bytes_.subspan(section.sh_offset, section.sh_size);
  };
  auto sectionNames = sectionAt(header->e_shstrndx);
  if (!jumpSlot || !sectionNames)
    return;
  std::optional<Elf64_Shdr> plt, relocations;
  for (unsigned i = 0; i < header->e_shnum; ++i) {
    auto section = sectionAt(i);
    if (!section)
      return;
    ByteCursor cursor(contents(*sectionNames));
    cursor.seek(section->sh_name);
    std::string_view name = cursor.cstring();
    if (cursor.ok() && name == ".plt")
      plt = section;
    else if (cursor.ok() && name == ".rela.plt" && section->sh_type == SHT_RELA &&
             section->sh_entsize == sizeof(Elf64_Rela))
      relocations = section;
  }
  if (!plt || !relocations)
    return;
  auto symbols = sectionAt(relocations->sh_link);
  if (!symbols || symbols->sh_entsize != sizeof(Elf64_Sym))
    return;
  auto strings = sectionAt(symbols->sh_link);
  if (!strings)
    return;
  std::span<const uint8_t> names = contents(*strings);
  uint64_t count = relocations->sh_size / sizeof(Elf64_Rela);
  uint64_t align = plt->sh_addralign;
  uint64_t entrySize = align ? (plt->sh_entsize + align - 1) / align * align : plt->sh_entsize;
  if (entrySize <= 4) // no entry size recorded: entries as large as PLT0, which is at least one
    entrySize = align ? plt->sh_size / align / (count + 1) * align : plt->sh_size / (count + 1);
  if (count == 0 || entrySize == 0 || count > plt->sh_size / entrySize)
    return;
  uint64_t first = plt->sh_addr + plt->sh_size - count * entrySize;
  for (uint64_t i = 0; i < count; ++i) {
    auto relocation = recordAt<Elf64_Rela>(contents(*relocations), i * sizeof(Elf64_Rela));
    if (!relocation)
      break;
    if (ELF64_R_TYPE(relocation->r_info) != jumpSlot)
      continue;
    auto sym = recordAt<Elf64_Sym>(contents(*symbols),
                                   uint64_t{ELF64_R_SYM(relocation->r_info)} * sizeof(Elf64_Sym));
    if (!sym)
      continue;
    ByteCursor cursor(names);
    cursor.seek(sym->st_name);
    std::string_view name = cursor.cstring();
    if (cursor.ok() && !name.empty())
      byAddress_.push_back(
          {first + i * entrySize, entrySize, kOtherRank, kPltOrder | i, name, true});
  }
}

std::optional<ElfImage::DataSymbol> ElfImage::dataNamed(std::string_view name) const {
  // Looked up once per command, so a scan, not an index that would stay in memory.
  std::optional<DataSymbol> global, local;
  forEachSymbol(bytes_, [&](const Elf64_Sym &sym, std::string_view symbolName, bool, uint64_t) {
    if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx == SHN_UNDEF ||
        sym.st_shndx == SHN_ABS || sym.st_value == 0 || symbolName != name)
      return true;
    DataSymbol found{sym.st_value, sym.st_size};
    if (ELF64_ST_BIND(sym.st_info) != STB_LOCAL) {
      global = found;
      return false;
    }
    if (!local)
      local = found;
    return true;
  });
  return global ? global : local;
}

} // namespace strobe
