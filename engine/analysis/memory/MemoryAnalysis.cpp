#include "analysis/memory/MemoryAnalysis.h"

#include <algorithm>
#include <map>

namespace strobe {

UsageReplay::UsageReplay(const Capture &capture, const MemoryAnalysisOptions &options)
    : capture_(capture), options_(options), attributor_(capture, options.attribution) {}

Charge &UsageReplay::chargeFor(std::vector<std::pair<KeyId, Charge>> &units, KeyId key) {
  for (auto &[id, charge] : units)
    if (id == key)
      return charge;
  return units.emplace_back(key, Charge{}).second;
}

void UsageReplay::run(const std::function<void(const ChargedEvent &)> &visit) {
  const std::vector<AllocEvent> &events = capture_.allocEvents;
  ChargedEvent charged;
  for (size_t i = 0; i < events.size(); ++i) {
    HeapEffect effect = ledger_.apply(events[i], i);
    const std::vector<KeyId> &callers = attributor_.keysOf(events[i]);
    charged.event = &events[i];
    charged.callers = &callers;
    charged.units.clear();

    Charge &whole = charged.whole = Charge{};
    whole.delta = effect.delta();
    whole.call = effect.call;
    whole.untracked = effect.untracked;
    whole.allocatedBytes = effect.createdBytes;
    whole.liveBytesDelta = effect.delta();
    whole.liveBlocksDelta = effect.created ? 1 : 0;

    for (KeyId key : callers) {
      Charge &c = chargeFor(charged.units, key);
      c.call = effect.call;
      c.untracked = effect.untracked;
      if (effect.created) {
        c.delta += static_cast<int64_t>(effect.createdBytes);
        c.allocatedBytes += effect.createdBytes;
        c.liveBlocksDelta += 1;
        c.liveBytesDelta += static_cast<int64_t>(effect.createdBytes);
      }
    }
    for (const HeapEffect::Release &r : effect.released) {
      auto bytes = static_cast<int64_t>(r.bytes);
      whole.freedBytes += r.bytes;
      whole.liveBlocksDelta -= r.whole ? 1 : 0;
      const std::vector<KeyId> &owners = attributor_.keysOf(events[r.ownerEvent]);
      for (KeyId key : owners) {
        Charge &c = chargeFor(charged.units, key);
        c.liveBytesDelta -= bytes;
        c.liveBlocksDelta -= r.whole ? 1 : 0;
      }
      for (KeyId key : options_.frees == FreesMode::Owner ? owners : callers) {
        Charge &c = chargeFor(charged.units, key);
        c.delta -= bytes;
        c.freedBytes += r.bytes;
      }
    }
    visit(charged);
  }
}

namespace {

// Rows of per-unit usage, kept in order of first appearance.
class UsageRows {
public:
  HeapUsage &operator[](KeyId key) {
    auto [it, fresh] = index_.try_emplace(key, rows_.size());
    if (fresh)
      rows_.push_back({key, {}});
    return rows_[it->second].usage;
  }
  std::vector<KeyUsage> take() {
    index_.clear();
    return std::move(rows_);
  }
  bool empty() const { return rows_.empty(); }

private:
  std::map<KeyId, size_t> index_;
  std::vector<KeyUsage> rows_;
};

std::vector<MemoryKey> keysOf(const Attributor &attributor) {
  std::vector<MemoryKey> keys;
  for (KeyId id = 0; id < attributor.keyCount(); ++id)
    keys.push_back(attributor.key(id));
  return keys;
}

} // namespace

UsageTable usageByKey(const Capture &capture, const MemoryAnalysisOptions &options) {
  UsageReplay replay(capture, options);
  UsageTable table;
  UsageRows rows;
  replay.run([&](const ChargedEvent &e) {
    table.total.apply(e.whole);
    for (const auto &[key, charge] : e.units)
      rows[key].apply(charge);
  });
  table.rows = rows.take();
  table.keys = keysOf(replay.attributor());
  return table;
}

InvocationTable usageByInvocation(const Capture &capture, const MemoryAnalysisOptions &options) {
  UsageReplay replay(capture, options);
  InvocationTable table;
  replay.run([&](const ChargedEvent &e) {
    table.total.apply(e.whole);
    if (table.rows.empty() || table.rows.back().keys != *e.callers)
      table.rows.push_back({*e.callers, {}, e.event->timeNs, e.event->timeNs, 0});
    InvocationRow &row = table.rows.back();
    row.usage.apply(e.whole);
    row.endNs = e.event->timeNs;
    ++row.events;
  });
  table.keys = keysOf(replay.attributor());
  return table;
}

IntervalTable usageByInterval(const Capture &capture, const MemoryAnalysisOptions &options,
                              uint64_t widthNs) {
  UsageReplay replay(capture, options);
  IntervalTable table;
  table.widthNs = std::max<uint64_t>(widthNs, 1);
  std::map<KeyId, int64_t> running;
  UsageRows rows;
  IntervalBlock block;
  auto close = [&] {
    if (rows.empty())
      return;
    block.rows = rows.take();
    block.cumulative.assign(running.begin(), running.end());
    table.blocks.push_back(std::move(block));
    block = {};
  };
  replay.run([&](const ChargedEvent &e) {
    uint64_t start = e.event->timeNs / table.widthNs * table.widthNs;
    if (!rows.empty() && start != block.startNs)
      close();
    block.startNs = start;
    table.total.apply(e.whole);
    block.total.apply(e.whole);
    for (const auto &[key, charge] : e.units) {
      rows[key].apply(charge);
      running[key] += charge.delta;
    }
  });
  close();
  table.keys = keysOf(replay.attributor());
  return table;
}

LeakTable liveBlocksByStack(const Capture &capture, const MemoryAnalysisOptions &options) {
  UsageReplay replay(capture, options);
  replay.run([](const ChargedEvent &) {});
  const std::vector<AllocEvent> &events = capture.allocEvents;
  std::map<std::vector<uint64_t>, LeakGroup> byStack;
  auto add = [&](size_t event, uint64_t bytes) {
    LeakGroup &group = byStack[events[event].stack];
    if (group.blocks == 0) {
      group.stack = events[event].stack;
      group.function = events[event].function;
      group.keys = replay.attributor().keysOf(events[event]);
    }
    group.bytes += bytes;
    ++group.blocks;
  };
  for (const auto &[pointer, block] : replay.ledger().blocks())
    add(block.event, block.size);
  for (const auto &[start, region] : replay.ledger().regions())
    add(region.event, region.end - start);

  LeakTable table;
  for (auto &[stack, group] : byStack) {
    table.bytes += group.bytes;
    table.blocks += group.blocks;
    table.groups.push_back(std::move(group));
  }
  std::stable_sort(table.groups.begin(), table.groups.end(),
                   [](const LeakGroup &a, const LeakGroup &b) {
                     return a.bytes != b.bytes ? a.bytes > b.bytes : a.blocks > b.blocks;
                   });
  table.keys = keysOf(replay.attributor());
  return table;
}

} // namespace strobe
