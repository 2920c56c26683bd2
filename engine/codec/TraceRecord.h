// What the production diff-record codec (spec 001) stores per stop of one thread: a single-step
// record (the state AFTER one instruction ran) or a periodic sample (no instruction bytes).
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <utility>
#include <vector>

namespace strobe {

struct MemoryAccess {
  uint64_t address = 0;
  uint32_t size = 0; // bytes
  bool read = false;
  bool write = false;
  std::vector<uint8_t> readValue;    // `size` bytes, memory order, when `read`
  std::vector<uint8_t> writtenValue; // `size` bytes, memory order, when `write`

  friend bool operator==(const MemoryAccess &, const MemoryAccess &) = default;
};

// A record's memory accesses: a vector's interface, except that clear() keeps the accesses it
// held, and their values' storage, for the next ones. The decoder empties and refills one
// record's accesses at every record with memory, and moving them in and out of a vector had cost
// such a record about 14 ns, a quarter of its decoding.
class AccessList {
public:
  using iterator = std::vector<MemoryAccess>::iterator;
  using const_iterator = std::vector<MemoryAccess>::const_iterator;

  AccessList() = default;
  AccessList(std::initializer_list<MemoryAccess> accesses)
      : items_(accesses), size_(items_.size()) {}
  // Copies hold the accesses only, not the storage kept for reuse.
  AccessList(const AccessList &other) : items_(other.begin(), other.end()), size_(other.size_) {}
  AccessList &operator=(const AccessList &other) {
    if (this != &other) {
      items_.assign(other.begin(), other.end());
      size_ = other.size_;
    }
    return *this;
  }
  // A moved-from list is empty.
  AccessList(AccessList &&other) noexcept
      : items_(std::move(other.items_)), size_(std::exchange(other.size_, 0)) {
    other.items_.clear();
  }
  AccessList &operator=(AccessList &&other) noexcept {
    if (this != &other) {
      items_ = std::move(other.items_);
      size_ = std::exchange(other.size_, 0);
      other.items_.clear();
    }
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  MemoryAccess &operator[](size_t k) { return items_[k]; }
  const MemoryAccess &operator[](size_t k) const { return items_[k]; }
  MemoryAccess &at(size_t k) { return k < size_ ? items_[k] : outOfRange(); }
  const MemoryAccess &at(size_t k) const { return k < size_ ? items_[k] : outOfRange(); }
  iterator begin() { return items_.begin(); }
  iterator end() { return items_.begin() + static_cast<ptrdiff_t>(size_); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.begin() + static_cast<ptrdiff_t>(size_); }

  void clear() { size_ = 0; }
  void push_back(MemoryAccess access) { reuse() = std::move(access); }
  MemoryAccess &emplace_back() { return reuse() = MemoryAccess{}; }
  // The next access, as an earlier one left it (for storage): every field is the caller's to set.
  MemoryAccess &reuse() {
    if (size_ == items_.size())
      items_.emplace_back();
    return items_[size_++];
  }
  void resize(size_t count) {
    while (size_ < count)
      emplace_back();
    size_ = count;
  }
  // Removes the accesses for which pred holds, keeping the others' order.
  template <typename Pred> void eraseIf(Pred pred) {
    const iterator kept = std::remove_if(begin(), end(), pred);
    size_ = static_cast<size_t>(kept - items_.begin());
  }

  friend bool operator==(const AccessList &a, const AccessList &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

private:
  [[noreturn]] static MemoryAccess &outOfRange() {
    throw std::out_of_range("no such memory access");
  }

  std::vector<MemoryAccess> items_; // the first size_ are the list's
  size_t size_ = 0;
};

struct TraceRecord {
  std::vector<uint64_t> regs; // registerTable(isa).regs order, pc included
  // registerTable(isa).ext in 64-bit slots (a 16-byte register takes two, low half first); empty
  // when the trace does not record extended state.
  std::vector<uint64_t> ext;
  std::vector<uint8_t> instruction; // bytes of the instruction just executed; empty for samples
  // The memory that instruction accessed, its addresses computed from the previous record's
  // registers (the registers before it ran).
  AccessList memory;
  // The thread ran unrecorded between the previous record and this one (or a damaged stretch of
  // the stream was skipped): this record does not follow from the previous one.
  bool gap = false;

  friend bool operator==(const TraceRecord &, const TraceRecord &) = default;
};

} // namespace strobe
