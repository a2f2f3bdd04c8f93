// The closed-loop schedule engine (the trace simulation's --schedule closed) on hand-checkable
// launches and on fresh random page lists: reads, misses and times follow from its rules.
#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "bench/closed_loop_schedule.hpp"
#include "catch.hpp"

using cisa::closed_loop_schedule;
using cisa::ClosedLoopParams;

namespace {

std::vector<std::vector<std::uint32_t>> random_lists(std::mt19937& rng, int ctas, int len, int ids) {
  std::vector<std::vector<std::uint32_t>> v(static_cast<std::size_t>(ctas));
  for (auto& c : v) {
    c.resize(static_cast<std::size_t>(len));
    for (auto& x : c) x = static_cast<std::uint32_t>(rng() % static_cast<unsigned>(ids));
  }
  return v;
}

}  // namespace

TEST_CASE("closed loop: one slot runs the CTAs one after another at the visit time", "[l2_trace]") {
  std::mt19937 rng(std::random_device{}());
  const int ctas = 2 + static_cast<int>(rng() % 6), tiles = 1 + static_cast<int>(rng() % 9);
  ClosedLoopParams p;
  p.slots = 1;
  p.pages_per_tile = 4;
  p.capacity = 1 << 20;
  p.visit_s = 1e-6;
  p.page_read_s = 1e-12;  // never binds
  const auto lists = random_lists(rng, ctas, tiles * 4, 1000);
  const auto r = closed_loop_schedule(lists, p);
  CHECK(r.reads == ctas * tiles * 4);
  REQUIRE(r.start_s.size() == static_cast<std::size_t>(ctas));
  for (int c = 0; c < ctas; ++c) {
    CHECK(r.start_s[static_cast<std::size_t>(c)] == Approx(c * tiles * 1e-6));
    CHECK(r.end_s[static_cast<std::size_t>(c)] == Approx((c + 1) * tiles * 1e-6));
  }
  CHECK(r.makespan_s == Approx(ctas * tiles * 1e-6));
}

TEST_CASE("closed loop: a cache that holds everything misses each distinct page once", "[l2_trace]") {
  std::mt19937 rng(std::random_device{}());
  for (int round = 0; round < 10; ++round) {
    const int ctas = 1 + static_cast<int>(rng() % 40), len = 1 + static_cast<int>(rng() % 50);
    const auto lists = random_lists(rng, ctas, len, 200);
    std::set<std::uint32_t> distinct;
    for (const auto& c : lists) distinct.insert(c.begin(), c.end());
    ClosedLoopParams p;
    p.slots = 1 + static_cast<std::int64_t>(rng() % 8);
    p.pages_per_tile = 1 + static_cast<std::int64_t>(rng() % 4);
    p.capacity = 200;
    p.visit_s = 1e-7;
    p.page_read_s = 1e-8;
    const auto big = closed_loop_schedule(lists, p);
    CHECK(big.misses == static_cast<std::int64_t>(distinct.size()));
    p.capacity = 0;  // no cache: every read misses
    const auto none = closed_loop_schedule(lists, p);
    CHECK(none.misses == none.reads);
    CHECK(none.reads == static_cast<std::int64_t>(ctas) * len);
    // Misses only add time, but the schedule they make is not monotone in them (an order effect),
    // so the bound checked is the visits': no CTA finishes before its pages' visit time (a part tile
    // costs its share of the visit time).
    for (std::size_t c = 0; c < lists.size(); ++c) {
      const double tiles = static_cast<double>(lists[c].size()) / static_cast<double>(p.pages_per_tile);
      CHECK(none.end_s[c] - none.start_s[c] >= tiles * p.visit_s * (1 - 1e-12));
      CHECK(big.end_s[c] - big.start_s[c] >= tiles * p.visit_s * (1 - 1e-12));
    }
  }
}

TEST_CASE("closed loop: a missed tile takes its pages at the read rate shared by the resident CTAs",
          "[l2_trace]") {
  // Two CTAs, two slots, disjoint pages, no cache: both miss every page; each tile of 2 pages takes
  // 2 x page time x 2 resident CTAs (above the visit time), so each CTA ends at tiles x 4 x page time.
  ClosedLoopParams p;
  p.slots = 2;
  p.pages_per_tile = 2;
  p.capacity = 0;
  p.visit_s = 1e-9;
  p.page_read_s = 1e-6;
  const std::vector<std::vector<std::uint32_t>> lists{{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}};
  const auto r = closed_loop_schedule(lists, p);
  CHECK(r.misses == 12);
  CHECK(r.end_s[0] == Approx(3 * 4e-6));
  CHECK(r.end_s[1] == Approx(3 * 4e-6));
  // Shared among the CTAs missing now instead: the same here (both always miss) ...
  p.demand_share = true;
  CHECK(closed_loop_schedule(lists, p).makespan_s == Approx(3 * 4e-6).epsilon(0.34));
  // ... but with one list, the CTA behind hits and leapfrogs: CTA 0 misses tile 1 alone (2 pages x
  // 1 us), CTA 1 hits it (visit 0.1 us), misses tile 2 while CTA 0 still misses (2 x 1 us x 2
  // missing: ends at 0.1 + 4 us); CTA 0 then hits tile 2 (ends at 2 + 0.1 us).
  const std::vector<std::vector<std::uint32_t>> same{{0, 1, 2, 3}, {0, 1, 2, 3}};
  p.capacity = 100;
  p.visit_s = 1e-7;
  const auto s = closed_loop_schedule(same, p);
  CHECK(s.misses == 4);
  CHECK(s.end_s[0] == Approx(2.1e-6));
  CHECK(s.end_s[1] == Approx(4.1e-6));
}
