#include "analysis/memory/Attribution.h"

#include "analysis/Profile.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fmt/format.h>

namespace strobe {
namespace {

constexpr std::array<std::string_view, 10> kStackRoots = {"_start",
                                                          "__libc_start_main",
                                                          "__libc_start_main_impl",
                                                          "__libc_start_call_main",
                                                          "start_thread",
                                                          "clone",
                                                          "__clone",
                                                          "clone3",
                                                          "__clone3",
                                                          "thread_start"};

std::string fileName(const std::string &path) {
  return std::filesystem::path(path).filename().string();
}

// "operator new" matches "operator new(unsigned long)" but not "operator new[](unsigned long)".
bool namesFunction(std::string_view entry, std::string_view function) {
  if (!function.starts_with(entry))
    return false;
  return function.size() == entry.size() || function[entry.size()] == '(';
}

// Functions that begin a thread's stack: the walk outward stops below them. `main` itself is the
// program's own code and can be a key.
bool isStackRoot(std::string_view function) {
  return std::find(kStackRoots.begin(), kStackRoots.end(), function) != kStackRoots.end();
}

} // namespace

const std::vector<std::string> &defaultTransparentFunctions() {
  static const std::vector<std::string> list = {
      "operator new",
      "operator new[]",
      "operator delete",
      "operator delete[]",
      "_Znwm",
      "_Znam",
      "_ZnwmRKSt9nothrow_t",
      "_ZnamRKSt9nothrow_t",
      "_ZnwmSt11align_val_t",
      "_ZnamSt11align_val_t",
      "_ZnwmSt11align_val_tRKSt9nothrow_t",
      "_ZnamSt11align_val_tRKSt9nothrow_t",
      "strdup",
      "strndup",
      "__strdup",
      "__strndup",
      "wcsdup",
  };
  return list;
}

Attributor::Attributor(const Capture &capture, AttributionOptions options)
    : capture_(capture), options_(std::move(options)) {
  executable_ = capture.header.program;
  if (executable_.empty() && !capture.modules.empty())
    executable_ = capture.modules.front().path;
}

const std::vector<KeyId> &Attributor::keysOf(const AllocEvent &event) {
  if (options_.by == KeyBy::Thread) {
    auto [it, fresh] = byThread_.try_emplace(event.tid);
    if (fresh)
      it->second = {intern({{}, {}, event.tid})};
    return it->second;
  }
  auto it = byStack_.find(event.stack);
  if (it == byStack_.end())
    it = byStack_.emplace(event.stack, attribute(event.stack)).first;
  return it->second;
}

Attributor::Frame Attributor::frame(const std::vector<uint64_t> &stack, size_t index) const {
  Frame f;
  // Frames past the first are return addresses: the call that made them sits just before.
  f.pc = index == 0 ? stack[index] : stack[index] - 1;
  f.module = capture_.moduleFor(f.pc);
  f.symbol = index == 0 ? capture_.symbolFor(stack[0]) : capture_.callerSymbol(stack[index]);
  return f;
}

bool Attributor::isExecutable(const Frame &f) const {
  return f.module && f.module->path == executable_;
}

bool Attributor::isTransparent(const Frame &f) const {
  if (!f.symbol || f.symbol->function.empty())
    return false;
  std::string_view function = f.symbol->function;
  std::string module = f.module ? fileName(f.module->path) : std::string(kUnknown);
  for (const std::string &entry : options_.transparent) {
    size_t bang = entry.find('!');
    if (bang == std::string::npos
            ? namesFunction(entry, function)
            : entry.compare(0, bang, module) == 0 &&
                  namesFunction(std::string_view(entry).substr(bang + 1), function))
      return true;
  }
  return false;
}

KeyId Attributor::keyFor(const Frame &f) {
  MemoryKey key;
  key.module = f.module ? f.module->path : std::string(kUnknown);
  if (options_.by == KeyBy::Function) {
    if (f.symbol && !f.symbol->function.empty())
      key.function = f.symbol->function;
    else
      key.function = fmt::format("{:#x}", f.pc - (f.module ? f.module->bias : 0));
  }
  return intern(std::move(key));
}

KeyId Attributor::intern(MemoryKey key) {
  auto [it, fresh] = ids_.try_emplace(key, static_cast<KeyId>(keys_.size()));
  if (fresh)
    keys_.push_back(std::move(key));
  return it->second;
}

std::vector<KeyId> Attributor::attribute(const std::vector<uint64_t> &stack) {
  // Frame 0 is the allocator itself. The candidates run from its caller outward to main, or to
  // just below the routine that started the thread; wrappers are not candidates.
  std::vector<Frame> candidates;
  for (size_t i = 1; i < stack.size(); ++i) {
    Frame f = frame(stack, i);
    std::string_view function = f.symbol ? std::string_view(f.symbol->function) : "";
    if (isStackRoot(function))
      break;
    if (!isTransparent(f))
      candidates.push_back(f);
    if (function == "main")
      break;
  }
  if (candidates.empty())
    return {keyFor(stack.size() > 1 ? frame(stack, 1) : frame(stack, 0))};

  std::vector<const Frame *> libraries;
  for (const Frame &f : candidates)
    if (!isExecutable(f))
      libraries.push_back(&f);
  // An allocation the executable made itself belongs to the function that made it.
  if (libraries.empty())
    return {keyFor(candidates.front())};

  switch (options_.mode) {
  case AttributionMode::First:
    return {keyFor(*libraries.back())};
  case AttributionMode::Last:
    return {keyFor(candidates.front())};
  case AttributionMode::All:
    break;
  }
  std::vector<KeyId> keys;
  for (const Frame *f : libraries) {
    KeyId id = keyFor(*f);
    if (std::find(keys.begin(), keys.end(), id) == keys.end())
      keys.push_back(id);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

} // namespace strobe
