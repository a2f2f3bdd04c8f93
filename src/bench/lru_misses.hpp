// Misses of a fully associative LRU cache over a trace of line ids, for several capacities at once
// (the L2 trace simulation of analysis/l2_trace_sim.py; NOTES "Session 24"). An access hits when the
// distinct lines touched since the same line's previous access number fewer than the capacity (its
// LRU stack distance). Distances come from a Fenwick tree over access positions in which only each
// line's latest access is marked: O(n log n) for the whole trace, whatever the capacities.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace cisa {

inline std::vector<std::int64_t> lru_misses(const std::vector<std::uint32_t>& trace,
                                            const std::vector<std::int64_t>& capacities) {
  const std::int64_t n = static_cast<std::int64_t>(trace.size());
  std::uint32_t max_id = 0;
  for (const std::uint32_t x : trace) max_id = x > max_id ? x : max_id;
  std::vector<std::int64_t> last(n > 0 ? std::size_t{max_id} + 1 : 0, -1);
  std::vector<std::int32_t> marks(static_cast<std::size_t>(n) + 1, 0);
  auto add = [&](std::int64_t i, int v) {
    for (++i; i <= n; i += i & -i) marks[static_cast<std::size_t>(i)] += v;
  };
  auto prefix = [&](std::int64_t i) {  // marks in [0, i]
    std::int64_t s = 0;
    for (++i; i > 0; i -= i & -i) s += marks[static_cast<std::size_t>(i)];
    return s;
  };
  // Histogram of stack distances, capped at the largest capacity (every larger one misses alike).
  std::int64_t cap_max = 0;
  for (const std::int64_t c : capacities) cap_max = c > cap_max ? c : cap_max;
  std::vector<std::int64_t> at(static_cast<std::size_t>(cap_max) + 1, 0);  // at[d]: hits at distance d
  std::int64_t beyond = 0;                                                // cold or distance >= cap_max
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t& prev = last[trace[static_cast<std::size_t>(i)]];
    if (prev < 0) {
      ++beyond;
    } else {
      const std::int64_t d = prefix(i - 1) - prefix(prev);
      if (d < cap_max) ++at[static_cast<std::size_t>(d)]; else ++beyond;
      add(prev, -1);
    }
    add(i, 1);
    prev = i;
  }
  std::vector<std::int64_t> misses;
  misses.reserve(capacities.size());
  for (const std::int64_t c : capacities) {
    std::int64_t m = beyond;
    for (std::int64_t d = c > 0 ? c : 0; d < cap_max; ++d) m += at[static_cast<std::size_t>(d)];
    misses.push_back(m);
  }
  return misses;
}

// A fully associative cache of `capacity` lines over ids < n that evicts a uniformly random line
// (seeded: repeatable): access() says whether the line was there and inserts it when not.
class RandomEvictionCache {
 public:
  RandomEvictionCache(std::size_t n, std::int64_t capacity, std::uint64_t seed)
      : where_(n, -1), cap_(capacity > 0 ? capacity : 0), rng_(seed) {}
  bool access(std::uint32_t x) {
    if (where_[x] >= 0) return true;
    if (cap_ == 0) return false;
    if (static_cast<std::int64_t>(lines_.size()) < cap_) {
      where_[x] = static_cast<std::int64_t>(lines_.size());
      lines_.push_back(x);
    } else {
      const auto k = static_cast<std::size_t>(rng_() % static_cast<std::uint64_t>(cap_));
      where_[lines_[k]] = -1;
      lines_[k] = x;
      where_[x] = static_cast<std::int64_t>(k);
    }
    return false;
  }
  std::mt19937_64& rng() { return rng_; }  // the same stream for the caller's other draws

 private:
  std::vector<std::int64_t> where_;  // slot of a line, -1 when out
  std::vector<std::uint32_t> lines_;
  std::int64_t cap_;
  std::mt19937_64 rng_;
};

// Misses of a fully associative cache that evicts a uniformly random line (seeded: repeatable), for
// each capacity: the L2 trace simulation's other policy. Unlike LRU it keeps part of a cyclic scan
// longer than the cache (LRU keeps none), which is what a sliding set of staggered readers is.
inline std::vector<std::int64_t> random_replacement_misses(const std::vector<std::uint32_t>& trace,
                                                           const std::vector<std::int64_t>& capacities,
                                                           std::uint64_t seed) {
  std::uint32_t max_id = 0;
  for (const std::uint32_t x : trace) max_id = x > max_id ? x : max_id;
  std::vector<std::int64_t> misses;
  misses.reserve(capacities.size());
  for (const std::int64_t cap : capacities) {
    RandomEvictionCache cache(trace.empty() ? 0 : std::size_t{max_id} + 1, cap, seed);
    std::int64_t m = 0;
    for (const std::uint32_t x : trace)
      if (!cache.access(x)) ++m;
    misses.push_back(m);
  }
  return misses;
}

}  // namespace cisa
