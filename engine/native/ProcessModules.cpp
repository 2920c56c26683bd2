#include "native/ProcessModules.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <set>
#include <sys/sysmacros.h>

namespace strobe {
namespace {

constexpr auto kReloadInterval = std::chrono::milliseconds(20);
constexpr uint64_t kMaxVdsoBytes = 1 << 20;

} // namespace

void ProcessModules::reloadIfStale() {
  if (std::chrono::steady_clock::now() - loadedAt_ >= kReloadInterval)
    reload();
}

void ProcessModules::reload() {
  loadedAt_ = std::chrono::steady_clock::now();
  mappings_.clear();
  std::ifstream maps("/proc/" + std::to_string(pid_) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    Mapping m;
    char perms[5] = {};
    unsigned major = 0, minor = 0;
    int pathStart = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
                    &m.start, &m.end, perms, &m.offset, &major, &minor, &m.inode, &pathStart) < 7)
      continue;
    m.device = makedev(major, minor);
    m.executable = perms[2] == 'x';
    if (pathStart > 0 && static_cast<size_t>(pathStart) <= line.size())
      m.path = line.substr(pathStart);
    if (m.path.empty() || (m.path[0] != '/' && m.path != "[vdso]"))
      continue;
    mappings_.push_back(std::move(m));
  }
}

ElfImage *ProcessModules::imageFor(const Mapping &mapping) {
  if (mapping.path == "[vdso]") {
    if (!vdsoTried_ && mapping.end - mapping.start <= kMaxVdsoBytes) {
      vdsoTried_ = true;
      // The vDSO exists only in memory; its image is mapped as one piece, headers included.
      std::vector<uint8_t> bytes(mapping.end - mapping.start);
      if (read_(mapping.start, bytes.data(), bytes.size()))
        vdso_ = ElfImage::fromBytes(std::move(bytes));
    }
    return vdso_.get();
  }
  auto key = std::make_pair(mapping.device, mapping.inode);
  auto it = files_.find(key);
  if (it != files_.end())
    return it->second.get();
  // The path may name another file by now (rebuilt, or another mount namespace); map_files
  // opens exactly the mapped one where the kernel allows it.
  std::unique_ptr<ElfImage> image = ElfImage::open(mapping.path);
  if (!image || image->device() != mapping.device || image->inode() != mapping.inode) {
    char range[64];
    std::snprintf(range, sizeof range, "%" PRIx64 "-%" PRIx64, mapping.start, mapping.end);
    image = ElfImage::open("/proc/" + std::to_string(pid_) + "/map_files/" + range);
    if (image && (image->device() != mapping.device || image->inode() != mapping.inode))
      image.reset();
  }
  return files_.emplace(key, std::move(image)).first->second.get();
}

std::optional<std::pair<uint64_t, uint64_t>> ProcessModules::vdso() {
  reloadIfStale();
  for (const Mapping &m : mappings_)
    if (m.path == "[vdso]")
      return std::pair{m.start, m.end};
  return std::nullopt;
}

std::optional<uint64_t> ProcessModules::biasOf(const Mapping &mapping) {
  ElfImage *image = imageFor(mapping);
  if (!image)
    return std::nullopt;
  std::optional<uint64_t> linked = image->addressOfOffset(mapping.offset);
  if (!linked)
    return std::nullopt;
  return mapping.start - *linked;
}

std::optional<ProcessModules::Code> ProcessModules::codeAt(uint64_t pc) {
  auto find = [&]() -> const Mapping * {
    auto it = std::upper_bound(mappings_.begin(), mappings_.end(), pc,
                               [](uint64_t a, const Mapping &m) { return a < m.start; });
    if (it == mappings_.begin())
      return nullptr;
    --it;
    return pc < it->end && it->executable ? &*it : nullptr;
  };
  const Mapping *mapping = find();
  if (!mapping) {
    reloadIfStale();
    mapping = find();
  }
  if (!mapping)
    return std::nullopt;
  std::optional<uint64_t> bias = biasOf(*mapping);
  if (!bias)
    return std::nullopt;
  return Code{imageFor(*mapping), *bias};
}

std::optional<ElfImage::FunctionSymbol> ProcessModules::functionAt(uint64_t pc) {
  std::optional<Code> code = codeAt(pc);
  if (!code)
    return std::nullopt;
  std::optional<ElfImage::FunctionSymbol> symbol = code->image->functionAt(pc - code->bias);
  if (symbol)
    symbol->start += code->bias;
  return symbol;
}

template <typename Visit> void ProcessModules::forEachImage(Visit visit) {
  reloadIfStale();
  std::set<std::pair<uint64_t, std::string>> seen; // one image per file, at its first mapping
  for (const Mapping &mapping : mappings_) {
    if (!seen.emplace(mapping.inode, mapping.path).second)
      continue;
    if (std::optional<uint64_t> bias = biasOf(mapping))
      if (!visit(*imageFor(mapping), *bias))
        return;
  }
}

std::vector<uint64_t> ProcessModules::functionsNamed(std::string_view name) {
  std::vector<uint64_t> addresses;
  forEachImage([&](ElfImage &image, uint64_t bias) {
    for (uint64_t address : image.functionsNamed(name))
      if (std::find(addresses.begin(), addresses.end(), address + bias) == addresses.end())
        addresses.push_back(address + bias);
    return true;
  });
  return addresses;
}

std::optional<DataLocation> ProcessModules::dataNamed(std::string_view name) {
  std::optional<DataLocation> found;
  forEachImage([&](ElfImage &image, uint64_t bias) {
    if (std::optional<ElfImage::DataSymbol> symbol = image.dataNamed(name))
      found = DataLocation{symbol->address + bias, symbol->size};
    return !found;
  });
  return found;
}

} // namespace strobe
