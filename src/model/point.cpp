#include "model/point.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cisa {

namespace {
[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw std::invalid_argument(field + ": " + what);
}
}  // namespace

void validate_point(const Point& p) {
  const Geometry& g = p.geo;
  const CisaConfig& c = p.cisa;
  const Workload& w = p.work;
  if (g.q_heads < 1) bad("geometry.q_heads", "must be >= 1");
  if (g.kv_heads < 1) bad("geometry.kv_heads", "must be >= 1");
  if (g.q_heads % g.kv_heads != 0)
    bad("geometry.q_heads", "must be a multiple of kv_heads (" + std::to_string(g.q_heads) + " % " +
                                std::to_string(g.kv_heads) + " != 0): GQA groups hold whole heads");
  if (g.head_dim < 8 || g.head_dim > 1024 || g.head_dim % 8 != 0)
    bad("geometry.head_dim", "must be a multiple of 8 in [8, 1024], got " + std::to_string(g.head_dim));
  if (g.hidden < 1) bad("geometry.hidden", "must be >= 1");
  if (c.chunk_tokens < 1 || c.chunk_tokens > 4096)
    bad("cisa.chunk", "must be in [1, 4096] tokens, got " + std::to_string(c.chunk_tokens));
  if (c.window_pages < 0) bad("cisa.window", "must be >= 0 pages");
  if (c.budget_chunks < 1) bad("cisa.budget", "must be >= 1 chunk, got " + std::to_string(c.budget_chunks));
  if (c.rep_dim < 0 || c.rep_dim > 4096) bad("cisa.rep_dim", "must be in [0, 4096] (0 = head_dim)");
  if (!(c.selection_overlap >= 0.0 && c.selection_overlap <= 1.0))
    bad("cisa.selection_overlap", "must be in [0, 1]");
  if (w.context_tokens < 1 || w.context_tokens > (std::int64_t{1} << 31))
    bad("workload.context", "must be in [1, 2^31] tokens, got " + std::to_string(w.context_tokens));
  if (w.batch < 1 || w.batch > 65536) bad("workload.batch", "must be in [1, 65536]");
  const int P = positions_per_forward(w);
  if (w.phase == Phase::terminal_prefill || w.phase == Phase::full_prefill) {
    if (w.prefill_tokens < 1) bad("workload.prefill_tokens", "must be >= 1");
    if (w.phase == Phase::terminal_prefill && w.prefill_tokens > w.context_tokens)
      bad("workload.prefill_tokens", "P = " + std::to_string(w.prefill_tokens) +
                                         " exceeds the context of " + std::to_string(w.context_tokens));
    if (w.phase == Phase::full_prefill && w.context_tokens / w.prefill_tokens > 4'000'000)
      bad("workload.prefill_tokens", "too many forwards (context / P > 4e6)");
    if (c.qshare_g < 1 || c.qshare_g > w.prefill_tokens)
      bad("cisa.G", "QShare G must be in [1, P = " + std::to_string(w.prefill_tokens) + "], got " +
                        std::to_string(c.qshare_g));
  }
  if (w.phase == Phase::mtp) {
    if (w.mtp_tokens < 1 || w.mtp_tokens > 64) bad("workload.mtp_tokens", "must be in [1, 64]");
    if (w.mtp_tokens > w.context_tokens) bad("workload.mtp_tokens", "exceeds the context");
  }
  if (P < 1) bad("workload", "no positions per forward");
}

namespace {

constexpr int kLo = static_cast<int>(Bound::lo), kPt = static_cast<int>(Bound::point),
              kHi = static_cast<int>(Bound::hi);

bool same_traffic(const KernelShape& a, const KernelShape& b) {
  return a.attention_tile_rows == b.attention_tile_rows &&
         a.attention_min_tile_rows == b.attention_min_tile_rows && a.gqa_packing == b.gqa_packing &&
         a.split_min_tokens == b.split_min_tokens && a.split_kv == b.split_kv &&
         a.decode_visits_context == b.decode_visits_context &&
         a.dense_rows_packed == b.dense_rows_packed && a.share_selected == b.share_selected &&
         std::equal(a.selected_staggered, a.selected_staggered + 4, b.selected_staggered) &&
         a.score_bytes == b.score_bytes && a.score_tile_rows == b.score_tile_rows &&
         a.sms == b.sms && a.l2_capacity_bytes == b.l2_capacity_bytes &&
         a.decode_tile_rows == b.decode_tile_rows && a.decode_tile_reuse == b.decode_tile_reuse;
}

// The dense side of a one-forward point (the fastest candidate, its band ends and traffic, the
// CISA implementation's own dense kernel): a function of the pricing and of what the dense
// traffic reads (dense_key in traffic.cpp: not the budget, G, window or overlap), so a sweep
// over those prices it once. The last answers are kept per thread, found by a hash.
struct DenseSideKey {
  std::uint64_t pricing = 0;  // PointPricing::id
  std::int64_t start = 0, n = 0;
  int q_heads = 0, kv_heads = 0, head_dim = 0, hidden = 0, chunk = 0, kv_dtype = 0, batch = 0;
  bool operator==(const DenseSideKey&) const = default;
};
struct DenseSide {
  std::size_t best = 0;
  std::array<double, 3> best_times{};  // lo, point, hi (Bound order)
  std::array<double, 3> own{};
  KernelCost attention;
  ByteCategories bytes;
  double l2_kv = 0, splits = 1;
};
struct DenseSideCache {
  static constexpr std::size_t kSlots = 64;
  std::array<DenseSideKey, kSlots> keys{};
  std::array<DenseSide, kSlots> sides{};
  static std::size_t slot(const DenseSideKey& k) {
    std::uint64_t h = k.pricing;
    for (std::int64_t v :
         {k.start, k.n, std::int64_t(k.q_heads) << 32 | std::uint32_t(k.kv_heads),
          std::int64_t(k.head_dim) << 32 | std::uint32_t(k.hidden),
          std::int64_t(k.chunk) << 32 | std::uint32_t(k.kv_dtype), std::int64_t(k.batch)})
      h = (h ^ static_cast<std::uint64_t>(v)) * 0x9E3779B97F4A7C15ULL;
    return static_cast<std::size_t>(h >> 58);
  }
};

}  // namespace

Prediction predict(const Point& p, const PointPricing& pr) {
  Prediction out;
  const Workload& w = p.work;
  out.qshare_g = effective_qshare(p.cisa, w);
  const std::int64_t L = w.context_tokens;
  const std::size_t nd = pr.dense.size();
  std::array<ComponentTimes, 3> cisa{};
  // One forward (all phases but full_prefill): the dense candidates' lo / hi ends are priced for
  // the fastest one only, once it is known (the same sums: each is 0 + one forward's time).
  const bool one_forward = w.phase != Phase::full_prefill;
  // Reused per thread: a sweep prices millions of points (no allocation or zero-fill per point).
  thread_local std::vector<std::array<double, 3>> dense;
  thread_local std::vector<ForwardCost> dense_cost, dense_scratch;
  thread_local std::vector<const ForwardCost*> dense_last;  // one forward: each candidate's traffic
  // dense_scratch, f_own and f_dense_bound only ever hold a dense_forward_cost (its dense fields
  // written in place, the others at their defaults).
  thread_local ForwardCost f_pt, f_bound, f_own, f_dense_bound;
  std::int64_t last_start = 0, last_n = 0;
  dense.assign(nd, {0.0, 0.0, 0.0});
  if (!one_forward) dense_cost.assign(nd, ForwardCost{});
  dense_scratch.resize(nd);
  dense_last.resize(nd);
  std::array<double, 3> own{0.0, 0.0, 0.0};
  auto dense_of = [&](const std::array<Pricing, 3>& d, std::int64_t start, std::int64_t n,
                      ForwardCost& scratch) -> const ForwardCost& {
    if (same_traffic(d[kPt].shape, pr.cisa[kPt].shape)) return f_pt;
    dense_forward_cost_into(scratch, p.geo, p.cisa, out.qshare_g, start, n, w.batch, d[kPt].shape);
    return scratch;
  };
  // A dense candidate's traffic at bound b: the point's, unless its structure differs there (an
  // unknown L2 sharing between a KV group's decode work items).
  auto dense_at = [&](const std::array<Pricing, 3>& d, int b, const ForwardCost& fd, std::int64_t start,
                      std::int64_t n) -> const ForwardCost& {
    if (b == kPt || same_traffic(d[b].shape, d[kPt].shape)) return fd;
    dense_forward_cost_into(f_dense_bound, p.geo, p.cisa, out.qshare_g, start, n, w.batch,
                            d[b].shape);
    return f_dense_bound;
  };
  // One forward: the dense side from the cache when this thread priced it last (the CISA side is
  // priced in full below; `dense_side` skips the dense loops of run()).
  thread_local DenseSideCache side_cache;
  DenseSideKey side_key;
  DenseSide* side = nullptr;
  bool side_hit = false;
  if (one_forward && nd > 0 && pr.id.value != 0) {
    const std::int64_t n = w.phase == Phase::decode ? 1
                           : w.phase == Phase::mtp  ? w.mtp_tokens
                                                    : w.prefill_tokens;
    side_key = DenseSideKey{pr.id.value,
                            L - n,
                            n,
                            p.geo.q_heads,
                            p.geo.kv_heads,
                            p.geo.head_dim,
                            p.geo.hidden,
                            p.cisa.chunk_tokens,
                            static_cast<int>(p.cisa.kv_dtype),
                            w.batch};
    const std::size_t k = DenseSideCache::slot(side_key);
    side = &side_cache.sides[k];
    side_hit = side_cache.keys[k] == side_key;
    if (!side_hit) side_cache.keys[k] = DenseSideKey{};  // filled below, once priced
  }
  auto run = [&](std::int64_t start, std::int64_t n) {
    // CISA: the traffic depends on the bound only through the implementation's structure
    // (an unknown L2 sharing); the times through every rate.
    f_pt = forward_cost(p.geo, p.cisa, out.qshare_g, start, n, w.batch, pr.cisa[kPt].shape);
    for (int b : {kPt, kLo, kHi}) {
      const Pricing& c = pr.cisa[b];
      const ForwardCost& f = (b == kPt || same_traffic(c.shape, pr.cisa[kPt].shape))
                                 ? f_pt
                                 : (f_bound = forward_cost(p.geo, p.cisa, out.qshare_g, start, n, w.batch, c.shape));
      cisa[b].add(cisa_times(f, c.shape, c.rates));
    }
    out.cost.add(f_pt);  // the point estimate's traffic (the lo / hi ends differ in time only)
    last_start = start, last_n = n;
    out.forwards += 1;
    if (side_hit) return;
    for (std::size_t i = 0; i < nd; ++i) {
      const ForwardCost& fd = dense_of(pr.dense[i], start, n, dense_scratch[i]);
      for (int b : {kPt, kLo, kHi})
        if (b == kPt || !one_forward)
          dense[i][b] += dense_attention_time(dense_at(pr.dense[i], b, fd, start, n), pr.dense[i][b].rates);
      if (one_forward)
        dense_last[i] = &fd;
      else
        dense_cost[i].add(fd);
    }
    if (pr.has_own) {
      const ForwardCost& fo = dense_of(pr.own, start, n, f_own);
      for (int b = 0; b < 3; ++b) own[b] += dense_attention_time(dense_at(pr.own, b, fo, start, n), pr.own[b].rates);
    }
  };
  switch (w.phase) {
    case Phase::terminal_prefill: run(L - w.prefill_tokens, w.prefill_tokens); break;
    case Phase::decode: run(L - 1, 1); break;
    case Phase::mtp: run(L - w.mtp_tokens, w.mtp_tokens); break;
    case Phase::full_prefill:
      for (std::int64_t s = 0; s < L; s += w.prefill_tokens) run(s, std::min<std::int64_t>(w.prefill_tokens, L - s));
      break;
  }
  // The baseline: the fastest dense candidate at the point estimate.
  std::size_t best = 0;
  for (std::size_t i = 1; i < nd; ++i)
    if (dense[i][kPt] < dense[best][kPt]) best = i;
  if (side_hit) {
    best = side->best;
    dense[best] = side->best_times;
    own = side->own;
    out.cost.attention_dense = side->attention;
    out.cost.bytes_dense = side->bytes;
    out.cost.l2_kv_dense = side->l2_kv;
    out.cost.splits_dense = side->splits;
  } else if (nd > 0) {
    if (one_forward)
      for (int b : {kLo, kHi})
        dense[best][b] += dense_attention_time(dense_at(pr.dense[best], b, *dense_last[best], last_start, last_n),
                                               pr.dense[best][b].rates);
    const ForwardCost& fd = one_forward ? *dense_last[best] : dense_cost[best];
    out.cost.attention_dense = fd.attention_dense;
    out.cost.bytes_dense = fd.bytes_dense;
    out.cost.l2_kv_dense = fd.l2_kv_dense;
    out.cost.splits_dense = fd.splits_dense;
    if (side) {
      *side = DenseSide{best,           dense[best],    own, fd.attention_dense, fd.bytes_dense,
                        fd.l2_kv_dense, fd.splits_dense};
      side_cache.keys[DenseSideCache::slot(side_key)] = side_key;
    }
  }
  if (nd > 0) {
    out.dense_impl = pr.dense[best][kPt].impl;
    out.dense.attention = dense[best][kPt];
    out.dense_lo.attention = dense[best][kLo];
    out.dense_hi.attention = dense[best][kHi];
  }
  out.cisa_impl = pr.cisa[kPt].impl;
  out.cisa = cisa[kPt];
  out.cisa_lo = cisa[kLo];
  out.cisa_hi = cisa[kHi];
  if (pr.has_own) {
    out.dense_own_attention = own[kPt];
    out.dense_own_lo = own[kLo];
    out.dense_own_hi = own[kHi];
  }
  CeilingInput ci{L, p.cisa.budget_chunks, p.cisa.qshare_g, p.cisa.chunk_tokens, p.cisa.window_pages};
  out.ceilings = compute_ceilings(ci);
  return out;
}

}  // namespace cisa
