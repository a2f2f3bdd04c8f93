// A closed-loop schedule of one CISA prefill attention launch (NOTES "Session 25"): the CTAs are
// dispatched in grid order to a fixed number of slots; each walks its page list a KV tile at a time,
// and a tile takes max(visit time, its missed pages at the CTA's share of the DRAM read rate), with
// the misses decided by one random-eviction cache shared by all CTAs. So the schedule is made by
// the bytes, not read from a record: a CTA ahead of its stream misses and slows, one behind hits and
// catches up (convoys hold), and CTAs of streams that miss more finish later (the dispatch staggers).
// Pure: numbers in, numbers out; the trace simulation's third engine (analysis/l2_trace_sim.py
// --schedule closed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <utility>
#include <vector>

#include "lru_misses.hpp"

namespace cisa {

struct ClosedLoopParams {
  std::int64_t slots = 1;           // CTAs resident at once
  std::int64_t pages_per_tile = 1;  // pages a KV tile reads
  std::int64_t capacity = 0;        // cache lines (pages)
  double visit_s = 0;               // a tile's visit time (the SM's share: no DRAM)
  double page_read_s = 0;           // one missed page at the whole read rate (page bytes / rate)
  double jitter = 0;                // relative spread of a tile's time (N(0, jitter), clipped at 0)
  double cta_spread = 0;            // relative spread of a CTA's pace (one N(0, cta_spread) factor per CTA)
  bool demand_share = false;        // DRAM shared among the CTAs missing now (else among all resident)
  std::uint64_t seed = 7;
};

struct ClosedLoopResult {
  std::int64_t reads = 0, misses = 0;
  double makespan_s = 0;
  std::vector<double> start_s, end_s;  // per CTA
};

// ctas[c]: CTA c's page ids (dense, < the largest id + 1) in reading order; grid order = index order.
inline ClosedLoopResult closed_loop_schedule(const std::vector<std::vector<std::uint32_t>>& ctas,
                                             const ClosedLoopParams& p) {
  ClosedLoopResult r;
  const std::size_t n = ctas.size();
  r.start_s.assign(n, 0.0);
  r.end_s.assign(n, 0.0);
  std::uint32_t max_id = 0;
  for (const auto& c : ctas)
    for (const std::uint32_t x : c) max_id = std::max(max_id, x);
  RandomEvictionCache cache(n > 0 ? std::size_t{max_id} + 1 : 0, p.capacity, p.seed);
  std::mt19937_64& rng = cache.rng();
  std::normal_distribution<double> noise(0.0, 1.0);
  const std::size_t ppt = static_cast<std::size_t>(std::max<std::int64_t>(1, p.pages_per_tile));
  // events: (time, CTA); each CTA's next tile starts at its event
  using Event = std::pair<double, std::size_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::vector<std::size_t> pos(n, 0);
  std::vector<double> pace(n, 1.0);
  std::vector<char> missing(n, 0);  // the CTA's current tile missed (demand_share)
  std::size_t n_missing = 0;
  if (p.cta_spread > 0)
    for (double& f : pace) f = std::max(0.25, 1.0 + p.cta_spread * noise(rng));
  std::size_t next = 0, active = 0;
  auto dispatch = [&](double t) {
    if (next >= n) return;
    r.start_s[next] = t;
    events.push({t, next++});
    ++active;
  };
  for (std::int64_t s = 0; s < p.slots; ++s) dispatch(0.0);
  while (!events.empty()) {
    const auto [t, c] = events.top();
    events.pop();
    const auto& pages = ctas[c];
    if (pos[c] >= pages.size()) {  // done: its slot takes the next CTA
      r.end_s[c] = t;
      r.makespan_s = std::max(r.makespan_s, t);
      --active;
      dispatch(t);
      continue;
    }
    if (missing[c]) {
      missing[c] = 0;
      --n_missing;
    }
    const std::size_t end = std::min(pages.size(), pos[c] + ppt);
    std::int64_t missed = 0;
    for (std::size_t i = pos[c]; i < end; ++i) {
      ++r.reads;
      if (!cache.access(pages[i])) ++missed;
    }
    r.misses += missed;
    if (missed > 0 && p.demand_share) {
      missing[c] = 1;
      ++n_missing;
    }
    const double share = static_cast<double>(std::max<std::size_t>(1, p.demand_share ? n_missing : active));
    double d = std::max(p.visit_s * static_cast<double>(end - pos[c]) / static_cast<double>(ppt),
                        static_cast<double>(missed) * p.page_read_s * share);
    d *= pace[c];
    if (p.jitter > 0) d *= std::max(0.0, 1.0 + p.jitter * noise(rng));
    pos[c] = end;
    events.push({t + d, c});
  }
  return r;
}

}  // namespace cisa
