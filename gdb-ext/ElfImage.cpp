#include "ElfImage.h"

#include "ByteCursor.h"

#include <algorithm>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace strobe::gdb {
namespace {

template <typename T> std::optional<T> recordAt(std::span<const uint8_t> bytes, uint64_t offset) {
  ByteCursor cursor(bytes);
  cursor.seek(offset);
  T value = cursor.read<T>();
  return cursor.ok() ? std::optional<T>(value) : std::nullopt;
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
  auto header = recordAt<Elf64_Ehdr>(bytes_, 0);
  if (!header || header->e_shentsize != sizeof(Elf64_Shdr))
    return;
  auto sectionAt = [&](unsigned i) {
    return recordAt<Elf64_Shdr>(bytes_, header->e_shoff + uint64_t{i} * sizeof(Elf64_Shdr));
  };
  for (unsigned i = 0; i < header->e_shnum; ++i) {
    auto table = sectionAt(i);
    if (!table || (table->sh_type != SHT_SYMTAB && table->sh_type != SHT_DYNSYM) ||
        table->sh_entsize != sizeof(Elf64_Sym))
      continue;
    auto strings = sectionAt(table->sh_link);
    if (!strings || strings->sh_offset > bytes_.size() ||
        strings->sh_size > bytes_.size() - strings->sh_offset)
      continue;
    auto names = bytes_.subspan(strings->sh_offset, strings->sh_size);
    for (uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= table->sh_size;
         offset += sizeof(Elf64_Sym)) {
      auto sym = recordAt<Elf64_Sym>(bytes_, table->sh_offset + offset);
      if (!sym)
        break;
      if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
          sym->st_value == 0)
        continue;
      ByteCursor cursor(names);
      cursor.seek(sym->st_name);
      std::string_view symbolName = cursor.cstring();
      if (!cursor.ok() || symbolName.empty())
        continue;
      std::vector<uint64_t> &addresses = functions_[symbolName];
      if (std::find(addresses.begin(), addresses.end(), sym->st_value) == addresses.end())
        addresses.push_back(sym->st_value);
    }
  }
}

} // namespace strobe::gdb
