// The L2 trace simulation's LRU engine against a plain list-based LRU cache, on fresh random traces
// with reuse at every distance, for capacities from 0 to past the trace's distinct lines.
#include <algorithm>
#include <cstdint>
#include <list>
#include <random>
#include <vector>

#include "bench/lru_misses.hpp"
#include "catch.hpp"

namespace {

std::int64_t list_lru_misses(const std::vector<std::uint32_t>& trace, std::int64_t capacity) {
  std::list<std::uint32_t> lines;  // most recent first
  std::int64_t misses = 0;
  for (const std::uint32_t x : trace) {
    const auto it = std::find(lines.begin(), lines.end(), x);
    if (it == lines.end()) {
      ++misses;
      lines.push_front(x);
      if (static_cast<std::int64_t>(lines.size()) > capacity) lines.pop_back();
    } else {
      lines.splice(lines.begin(), lines, it);
    }
  }
  return misses;
}

}  // namespace

TEST_CASE("lru_misses matches a list LRU at every capacity", "[l2_trace]") {
  std::mt19937 rng(std::random_device{}());
  for (int round = 0; round < 20; ++round) {
    // A sliding hot set (like lockstep readers of sorted page lists) mixed with uniform picks.
    const int distinct = 20 + static_cast<int>(rng() % 200);
    std::vector<std::uint32_t> trace(2000 + rng() % 2000);
    for (std::size_t i = 0; i < trace.size(); ++i) {
      const auto base = static_cast<std::uint32_t>(i * distinct / trace.size());
      trace[i] = rng() % 3 == 0 ? static_cast<std::uint32_t>(rng() % static_cast<unsigned>(distinct))
                                : base + static_cast<std::uint32_t>(rng() % 8);
    }
    const std::vector<std::int64_t> caps = {0, 1, 2, 3, 5, 8, 13, 40, 100, 1000};
    const std::vector<std::int64_t> got = cisa::lru_misses(trace, caps);
    REQUIRE(got.size() == caps.size());
    for (std::size_t c = 0; c < caps.size(); ++c) {
      INFO("round " << round << " capacity " << caps[c]);
      CHECK(got[c] == list_lru_misses(trace, caps[c]));
    }
    CHECK(got.front() == static_cast<std::int64_t>(trace.size()));  // capacity 0: every access misses
  }
}

TEST_CASE("lru_misses of an empty trace", "[l2_trace]") {
  CHECK(cisa::lru_misses({}, {0, 4}) == std::vector<std::int64_t>{0, 0});
}

TEST_CASE("random_replacement_misses: the capacities where any policy agrees", "[l2_trace]") {
  std::mt19937 rng(std::random_device{}());
  std::vector<std::uint32_t> trace(3000);
  for (auto& x : trace) x = static_cast<std::uint32_t>(rng() % 150);  // NOLINT: < 150 fits
  std::vector<std::uint32_t> sorted = trace;
  std::sort(sorted.begin(), sorted.end());
  const auto distinct = static_cast<std::int64_t>(std::unique(sorted.begin(), sorted.end()) - sorted.begin());
  const std::vector<std::int64_t> caps = {0, 1, 40, distinct, distinct + 10};
  const std::vector<std::int64_t> got = cisa::random_replacement_misses(trace, caps, rng());
  CHECK(got[0] == static_cast<std::int64_t>(trace.size()));  // nothing kept
  CHECK(got[1] == list_lru_misses(trace, 1));                  // one line: every policy is LRU
  CHECK(got[2] > distinct);                                    // 40 of 150 lines: some re-reads
  CHECK(got[2] < static_cast<std::int64_t>(trace.size()));     // and some hits
  CHECK(got[3] == distinct);                                   // everything fits: cold misses only
  CHECK(got[4] == distinct);
  // Seeded: the same seed gives the same misses.
  CHECK(cisa::random_replacement_misses(trace, {40}, 5) == cisa::random_replacement_misses(trace, {40}, 5));
}
