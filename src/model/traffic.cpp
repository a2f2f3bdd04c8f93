#include "model/traffic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>
#include <cstdlib>

namespace cisa {

void KernelCost::add(const KernelCost& o) {
  dram_bytes += o.dram_bytes;
  dram_write_bytes += o.dram_write_bytes;
  l2_bytes += o.l2_bytes;
  flops_issued += o.flops_issued;
  flops_useful += o.flops_useful;
  launches += o.launches;
  ctas += o.ctas;
  wave_fill = 0;
  page_visits += o.page_visits;
  serial_steps = std::max(serial_steps, o.serial_steps);
  tile_rows = std::max(tile_rows, o.tile_rows);
  summed_queries = std::max(summed_queries, o.summed_queries);
}

int attention_tile_for(int rows, const KernelShape& sh) {
  int t = std::max(1, sh.attention_min_tile_rows);
  while (t < rows && t < sh.attention_tile_rows) t *= 2;
  return std::min(t, sh.attention_tile_rows);
}

void ByteCategories::add(const ByteCategories& o) {
  kv += o.kv;
  rep += o.rep;
  meta += o.meta;
  qo += o.qo;
  partials += o.partials;
  other += o.other;
}

void ForwardCost::add(const ForwardCost& o) {
  attention_dense.add(o.attention_dense);
  attention_cisa.add(o.attention_cisa);
  scoring.add(o.scoring);
  topk.add(o.topk);
  setup.add(o.setup);
  other.add(o.other);
  rep_update.add(o.rep_update);
  bytes_dense.add(o.bytes_dense);
  bytes_cisa.add(o.bytes_cisa);
  l2_kv_dense += o.l2_kv_dense;
  l2_kv_cisa += o.l2_kv_cisa;
  l2_rep += o.l2_rep;
  selections += o.selections;
  dense_positions += o.dense_positions;
  sparse_positions += o.sparse_positions;
  topk_rows += o.topk_rows;
  eligible_chunks_sum += o.eligible_chunks_sum;
  splits_dense = std::max(splits_dense, o.splits_dense);
  splits_cisa = std::max(splits_cisa, o.splits_cisa);
  setup_h2d_bytes += o.setup_h2d_bytes;
  cisa_dense_prefix_bytes += o.cisa_dense_prefix_bytes;
  cisa_decode_kernel = cisa_decode_kernel || o.cisa_decode_kernel;
}

std::int64_t floor_sum(std::int64_t n, std::int64_t m, std::int64_t a, std::int64_t b) {
  // Reduce a, b below m, then swap the roles of the axes (Euclid-like recursion, iterative).
  std::int64_t ans = 0;
  while (n > 0) {
    if (a >= m) {
      ans += (n - 1) * n / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      ans += n * (b / m);
      b %= m;
    }
    const std::int64_t y_max = a * n + b;
    if (y_max < m) break;
    n = y_max / m;
    b = y_max % m;
    std::swap(m, a);
  }
  return ans;
}

namespace {

using i64 = std::int64_t;

i64 ceil_div(i64 a, i64 b) {
  return (a + b - 1) / b;
}

// Dense tiling of positions [a, a+n) of one (sequence, KV group): rows = (position, head) pairs
// packed position-major into tiles of M rows; a tile streams the history up to its last
// position (causal block skipping), so all its rows share one K/V read.
// How the kernels cut query rows into tiles of M rows: whole positions (all r heads of each),
// floor(M / r) positions a tile, or ceil(r / M) tiles a position when r > M.
struct TileCut {
  i64 positions_per_tile, tiles_per_position;
};
TileCut tile_cut(int r, int M) {
  if (r <= M) return {std::max<i64>(1, M / r), 1};
  return {1, ceil_div(r, M)};
}

struct DenseTiles {
  double tiles = 0;              // row tiles
  double token_reads = 0;        // sum over tiles of tokens streamed
  double unique_tokens = 0;      // distinct tokens touched (a + n)
  double useful_token_rows = 0;  // sum over rows of tokens attended
  double min_tile_tokens = 0;
};

// packed: the r x n rows are packed across positions (GQA-folded query), M / r positions a tile
// on average and ceil(r n / M) tiles, instead of whole positions.
DenseTiles dense_tiles(i64 a, i64 n, int r, int M, bool packed) {
  DenseTiles t;
  if (n <= 0) return t;
  const auto [ppt, tpp] = tile_cut(r, M);
  const bool pack = packed && tpp == 1;
  const i64 nt = pack ? ceil_div(n * r, static_cast<i64>(M)) : ceil_div(n, ppt);
  const double step = pack ? static_cast<double>(M) / r : static_cast<double>(ppt);
  // tile j ends at position a + min((j+1) step, n) - 1 and streams that many + 1 tokens (packed:
  // to within a token of its last row's position)
  const double last_sum = static_cast<double>(nt - 1) * static_cast<double>(a) +
                          step * static_cast<double>(nt - 1) * static_cast<double>(nt) / 2.0 +
                          static_cast<double>(a + n);
  t.tiles = static_cast<double>(nt * tpp);
  t.token_reads = last_sum * static_cast<double>(tpp);
  t.unique_tokens = static_cast<double>(a + n);
  const double dn = static_cast<double>(n), da = static_cast<double>(a);
  t.useful_token_rows = static_cast<double>(r) * (dn * da + dn * (dn + 1.0) / 2.0);
  t.min_tile_tokens = static_cast<double>(a) + std::min(std::ceil(step), dn);
  return t;
}

// Row tiles of one QShare group of g positions, cut as dense_tiles cuts the dense path (tile_cut)
// and as the kernels' plan cuts its works
// (kernels/reference/cisa_plan.cpp add_works: floor(128 / r) positions a work). At r = 10, G = 25
// that is 12 + 12 + 1 positions in three 128-row tiles, not ceil(250 / 128) = 2 (held-out v15).
struct GroupTiles {
  double tiles = 0;  // row tiles (work items) of the group
  int rows = 0;      // the kernel's tile class for the fullest of them
};
GroupTiles group_tiles(i64 g, int r, int M, const KernelShape& sh) {
  const auto [ppt, tpp] = tile_cut(r, M);
  GroupTiles t;
  t.tiles = static_cast<double>(ceil_div(g, ppt) * tpp);
  t.rows = attention_tile_for(static_cast<int>(std::min<i64>(std::min(g, ppt) * r, M)), sh);
  return t;
}

// Sums over m QShare groups of length g starting at t0 = b, b+G, ..., b+(m-1)G.
struct GroupSums {
  double m = 0;
  double sum_n = 0;  // sum of N = floor(t0/c): full pages before each group's first page
  double sum_t0 = 0;
  double sum_tail = 0;  // tokens from the current page start to the group's last position
  double sum_tail_pages = 0;
  double sum_t0_mod_c = 0;
  double sum_attended = 0;  // sum over positions t of (t + 1)
};

GroupSums group_sums(i64 b, i64 m, i64 g, i64 G, i64 c) {
  GroupSums s;
  if (m <= 0) return s;
  const i64 sum_n = floor_sum(m, c, G, b);
  const i64 sum_last_page = floor_sum(m, c, G, b + g - 1);
  const double dm = static_cast<double>(m);
  s.m = dm;
  s.sum_n = static_cast<double>(sum_n);
  s.sum_t0 = dm * static_cast<double>(b) + static_cast<double>(G) * dm * (dm - 1.0) / 2.0;
  s.sum_tail = s.sum_t0 + dm * static_cast<double>(g) - static_cast<double>(c) * s.sum_n;
  s.sum_tail_pages = static_cast<double>(sum_last_page - sum_n) + dm;
  s.sum_t0_mod_c = s.sum_t0 - static_cast<double>(c) * s.sum_n;
  // positions t0 .. t0+g-1 of every group: sum (t+1) = g*t0 + g(g+1)/2
  const double dg = static_cast<double>(g);
  s.sum_attended = dg * s.sum_t0 + dm * dg * (dg + 1.0) / 2.0;
  return s;
}

// Dense work items of one (sequence, KV head) stream the same history in step (they start together
// and run at the MMA rate), so co-resident items share one DRAM read through L2; items that fall in
// a later wave of CTAs read it again. With `tiles` items per stream and one CTA per SM, laid out
// stream by stream, a stream spans on average 1 + (tiles - 1) / SMs waves.
double dense_stream_reads(double tiles, const KernelShape& sh) {
  if (tiles <= 1) return 1.0;
  return std::min(tiles, 1.0 + (tiles - 1.0) / static_cast<double>(std::max(1, sh.sms)));
}

int split_count(double units, double min_tile_tokens, i64 positions, const KernelShape& sh) {
  const double target = 0.8 * sh.sms;
  if (units <= 0 || units >= target) return 1;
  if (positions > 1 && sh.split_kv == SplitKv::decode) return 1;  // e.g. cuDNN: prefill grid without a KV split
  const double want = std::ceil(target / units);
  const double most = std::floor(min_tile_tokens / sh.split_min_tokens);
  return static_cast<int>(std::max(1.0, std::min(want, most)));
}

// FlashAttention-2's num_splits_heuristic (PyTorch flash_api.cpp, read as a fact): blocks =
// batch x KV heads x ceil(query rows / 64) (decode folds the group's heads into the query rows),
// slots = 2 x SMs (128-thread CTAs); no split when blocks fill 80 % of the slots, else the
// fewest pieces (at most 128, one per 128-key block for head dim 128) whose wave efficiency
// reaches 85 % of the best.
int fa2_split_count(double blocks, double kv_tokens, double head_dim, const KernelShape& sh) {
  const double slots = 2.0 * sh.sms;
  if (blocks <= 0 || blocks >= 0.8 * slots) return 1;
  const double block_n = head_dim <= 64 ? 256 : head_dim <= 128 ? 128 : 64;
  const double n_blocks = std::ceil(kv_tokens / block_n);
  const int most = static_cast<int>(std::min({128.0, slots, n_blocks}));
  auto efficiency = [&](int n) {
    const double waves = blocks * n / slots;
    return waves / std::ceil(waves);
  };
  // One pass (the same values as two passes over n: the best efficiency, then the first eligible n
  // reaching 85 % of it): n is eligible when ceil(n_blocks / n) differs from n - 1's; ineligible n
  // keep -1, below any threshold. An efficiency is at most 1 (ceil(w) >= w), so none after the
  // first 1 can raise the best, and the answer is among the n seen by then.
  double eff[129];
  double best = 0, prev_q = 0;
  int seen = 0;
  for (int n = 1; n <= most; ++n) {
    const double q = std::ceil(n_blocks / n);
    const bool eligible = n == 1 || q != prev_q;
    prev_q = q;
    eff[n] = -1;
    seen = n;
    if (!eligible) continue;
    eff[n] = efficiency(n);
    best = std::max(best, eff[n]);
    if (best == 1.0) break;
  }
  for (int n = 1; n <= seen; ++n)
    if (eff[n] >= 0.85 * best) return n;
  return 1;
}

// Share of a selection's random (not predecessor-shared) pages that another selection of the same
// sequence read recently enough to still be in L2. CTAs of one sequence progress at staggered
// points through their sorted page lists; the i-th selection finds
// a page in L2 when one of min(i, n) earlier ones chose it too (p = K / N_e, random choice), where
// n = how many selections' reads the cache still holds. The cache fills only with misses, so
// n = L2 size / (bytes one selection streams x (1 - q)), solved with q by fixed-point iteration.
// Averaged over the sequence's m selections: q = 1 - mean_i (1 - p)^min(i, n). With an unbounded
// cache this is the union of its selections, N_e (1 - (1 - p)^m) pages.
double shared_selected_in_l2(const GroupSums& s, double K, double W, double c, double kv_tok,
                             const KernelShape& sh) {
  if (s.m <= 0 || sh.l2_capacity_bytes <= 0) return 0.0;
  const double ne = s.sum_n / s.m - W;
  if (ne <= K) return 0.0;
  const double a = 1.0 - K / ne;
  const double w = std::floor(s.m);  // the sequence's selections, in order
  const double n0 = sh.l2_capacity_bytes / ((K + W) * c * kv_tok);
  double q = 0;
  double j_last = -1, a_j = 0;  // pow(a, j) of the last step: j (an integer) repeats as q settles
  for (int it = 0; it < 12; ++it) {  // monotone in q; converges in a few steps
    const double n = std::min(n0 / std::max(1e-3, 1.0 - q), w);
    const double j = std::min(w, std::ceil(n));  // selections with fewer than n predecessors
    if (j != j_last) a_j = std::pow(a, j_last = j);
    const double sum = (1.0 - a_j) / (1.0 - a) + (w - j) * (n == j ? a_j : std::pow(a, n));
    const double prev = q;
    q = std::clamp(1.0 - sum / w, 0.0, 1.0);
    if (q == prev) break;  // a fixed point: the remaining steps would repeat it (same result, no pow)
  }
  return q;
}

// Tokens of selected pages a sequence's m selections read at the least. Its CTAs span
// 1 + (m - 1) / SMs waves; the selections of one wave read the union of their random picks,
// N_e (1 - (1 - p)^w) pages with w = m / waves and p = (1 - o) K / N_e. Between waves the other
// sequences' pages evict a share e = min(1, union bytes / L2) of it, which is read again: the
// floor runs from union(m) (nothing evicted) to waves x union(w) (all evicted).
double selected_union_floor(const GroupSums& s, double K, double W, double c, double o,
                            double kv_tok, const KernelShape& sh) {
  if (s.m <= 0) return 0.0;
  const double ne = s.sum_n / s.m - W;
  if (ne <= K) return 0.0;
  const double slots = static_cast<double>(std::max(1, sh.sms));
  const double waves = std::min(s.m, 1.0 + (s.m - 1.0) / slots);
  const double a = 1.0 - (1.0 - o) * K / ne;
  const double all = ne * (1.0 - std::pow(a, s.m));
  const double per_wave = ne * (1.0 - std::pow(a, s.m / waves));
  const double e = sh.l2_capacity_bytes > 0 ? std::min(1.0, all * c * kv_tok / sh.l2_capacity_bytes) : 1.0;
  return ((1.0 - e) * all + e * waves * per_wave) * c;
}

// The two estimates above for one class of sparse groups, memoised per thread (the same values:
// a pure function of the key's words, doubles by their bits). They do not depend on the batch, so a
// sweep over it (or over the dense side) asks for the same keys again; their fixed-point iteration
// and pow calls were ~20 % of a sweep's evaluation. 4,096 sets of 4 entries (~1.4 MB a thread,
// touched as used): the bench's 1M sweep repeats a key 10,000 points later.
struct SelectedPages {
  double shared = 0;        // shared_selected_in_l2 (0 when the kernel does not share them)
  double floor_tokens = 0;  // selected_union_floor
};
SelectedPages selected_pages(const GroupSums& gs, double K, double W, double c, double o, double kv_tok,
                             const KernelShape& sh) {
  constexpr std::size_t kWords = 9, kSets = 4096, kWays = 4;
  struct Entry {
    std::uint64_t key[kWords];
    SelectedPages v;
  };
  auto bits = [](double v) {
    std::uint64_t b = 0;
    std::memcpy(&b, &v, sizeof b);
    return b;
  };
  // Everything the two functions read (gs.m and gs.sum_n of the sums).
  const std::uint64_t key[kWords] = {bits(gs.m), bits(gs.sum_n), bits(K), bits(W), bits(c), bits(o), bits(kv_tok),
                                     bits(sh.l2_capacity_bytes),
                                     static_cast<std::uint64_t>(static_cast<std::uint32_t>(sh.sms)) << 1 |
                                         static_cast<std::uint64_t>(sh.share_selected)};
  thread_local std::vector<Entry> cache(kSets * kWays);  // zero keys: gs.m = 0 never gets here
  thread_local std::size_t next_way = 0;
  std::uint64_t h = 0;
  for (std::size_t i = 0; i < kWords; ++i) h += (key[i] ^ (key[i] >> 29)) * (0x9E3779B97F4A7C15ULL + 2 * i);
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ULL;
  const std::size_t set = static_cast<std::size_t>(h >> 40) % kSets;
  Entry* e = cache.data() + set * kWays;
  for (std::size_t w = 0; w < kWays; ++w) {
    std::uint64_t diff = 0;
    for (std::size_t i = 0; i < kWords; ++i) diff |= e[w].key[i] ^ key[i];
    if (diff == 0) return e[w].v;
  }
  SelectedPages v;
  v.shared = sh.share_selected ? shared_selected_in_l2(gs, K, W, c, kv_tok, sh) : 0.0;
  v.floor_tokens = selected_union_floor(gs, K, W, c, o, kv_tok, sh);
  const std::size_t w = next_way++ % kWays;
  std::memcpy(e[w].key, key, sizeof key);
  e[w].v = v;
  return v;
}

}  // namespace

namespace {

// What every component of one forward shares: the geometry, the settings and where the forward
// crosses from the dense path (N_e <= K) to the sparse one.
struct Span {
  const Geometry& geo;
  const CisaConfig& cfg;
  i64 G, start, positions;
  int batch;
  int r;
  double d, d_r, b_kv, b_rep, b_act, rep_vectors, agg_dots, h, o, seqs, kv_tok, rows;
  i64 c, W, K;
  i64 ng, kstar, dense_n, m_sp, tail_len, m_full;
  bool short_last;

  Span(const Geometry& g, const CisaConfig& cf, int qshare_g, i64 s, i64 n, int b, const KernelShape& sh)
      : geo(g), cfg(cf), G(qshare_g), start(s), positions(n), batch(b) {
    r = g.heads_per_group();
    d = g.head_dim;
    d_r = cf.rep_dim > 0 ? cf.rep_dim : g.head_dim;
    b_kv = dtype_bytes(cf.kv_dtype);
    b_rep = dtype_bytes(cf.rep_dtype);
    b_act = 2.0;  // Q, O, index queries in BF16
    rep_vectors = cf.rep_kind == RepKind::minmax ? 2.0 : 1.0;
    agg_dots = cf.score_agg == ScoreAgg::max ? qshare_g : 1.0;
    c = cf.chunk_tokens;
    W = cf.window_pages;
    K = cf.budget_chunks;
    h = sh.l2_reuse;
    o = cf.selection_overlap;
    seqs = static_cast<double>(b) * g.kv_heads;  // (sequence, KV group) pairs
    kv_tok = 2.0 * d * b_kv;                      // K+V bytes per token
    rows = static_cast<double>(n) * r;
    ng = ceil_div(n, G);
    // First group whose eligible count N_e = floor(t0/c) - W exceeds K: t0 >= (K+W+1) c.
    const i64 first_sparse_t0 = (K + W + 1) * c;
    kstar = std::clamp<i64>(ceil_div(std::max<i64>(0, first_sparse_t0 - s), G), 0, ng);
    dense_n = std::min<i64>(kstar * G, n);
    m_sp = ng - kstar;            // sparse groups
    tail_len = n - (ng - 1) * G;  // length of the last group (1..G)
    m_full = (tail_len == G) ? m_sp : std::max<i64>(0, m_sp - 1);
    short_last = m_sp > 0 && tail_len != G;
  }
};

constexpr double kId = 4.0;  // int32 page IDs

// KV-length pieces of an attention grid: `splits` pieces per split work; the first `whole` works
// (0: none) run unsplit, in whole waves, before the split ones.
struct KvSplit {
  int splits = 1;
  double whole = 0;
};

// This project's kernels (attention.cu, attention_wave_plan): a grid of more works than half its
// CTA slots splits the KV length only to fill its last wave, either every work s ways or only the
// works past the last whole wave (k = works mod slots, into the slots the whole waves leave). In
// tile-times of one CTA (64-token KV tiles of the longest work): waves x (tiles per split + 4) +
// 36 per split CTA spread over the slots (its partials written and combined, fitted in session 6's
// A/B); at most 64 uniform splits or 16 tail splits of at least 64 tiles, taken when it saves more
// than 1 %.
KvSplit wave_split(double works, double slots, double tiles) {
  constexpr double kFixed = 4, kPartial = 36;
  constexpr int kMaxSplits = 64, kMaxTail = 16, kMinTiles = 64;
  auto cost = [&](int n) {
    return std::ceil(works * n / slots) * (std::ceil(tiles / n) + kFixed) + (n > 1 ? kPartial * works * n / slots : 0.0);
  };
  // The searches stop at the first n whose lower bound already exceeds what is to be beaten: with
  // ceil(x) >= x, cost(n) >= works / slots x (tiles + (kFixed + kPartial) n), which grows with n,
  // so no later n can win either (the same choice as trying every n:
  // tests/unit/test_split_search.cpp compares it with the full search). The 1e-9 margin covers the
  // rounding of either side.
  constexpr double kMargin = 1.0 - 1e-9;
  const double per = works / slots;
  const double c1 = cost(1);
  KvSplit best;
  double best_cost = c1;
  for (int n = 2; n <= kMaxSplits && std::floor(tiles / n) >= kMinTiles; ++n) {
    if (per * (tiles + (kFixed + kPartial) * n) * kMargin > best_cost) break;
    const double cn = cost(n);
    if (cn < best_cost) best_cost = cn, best.splits = n;
  }
  if (best_cost >= 0.99 * c1) best = KvSplit{}, best_cost = c1;
  const double full_waves = std::floor(works / slots), k = works - full_waves * slots;
  if (full_waves >= 1 && k > 0) {
    const double whole = full_waves * (tiles + kFixed), k_per = k / slots, c99 = 0.99 * c1;
    for (int n = 2; n <= kMaxTail && std::floor(tiles / n) >= kMinTiles; ++n) {
      if ((whole + k_per * (tiles + (kFixed + kPartial) * n)) * kMargin > std::min(best_cost, c99)) break;
      const double c = full_waves * (tiles + kFixed) + std::ceil(k * n / slots) * (std::ceil(tiles / n) + kFixed) +
                       kPartial * k * n / slots;
      if (c < best_cost && c < c99) best_cost = c, best = KvSplit{n, full_waves * slots};
    }
  }
  return best;
}

// KV-length pieces of a span's attention grid of `units` work items, by the implementation's
// policy (FA2 counts its own blocks: query rows in 64s per (sequence, KV head), keys up to L).
// `max_tokens`: the longest work item's KV length; `tile_rows`: the grid's tile class (128-row
// CTAs run one per SM, 64-row two; the wave rule is not applied to the mma.sync classes).
KvSplit kv_splits(const Span& s, double units, double min_tile_tokens, double max_tokens, int tile_rows,
                  const KernelShape& sh) {
  if (sh.split_kv == SplitKv::fa2)
    return {fa2_split_count(s.seqs * std::ceil(s.rows / 64.0), static_cast<double>(s.start + s.positions), s.d, sh), 0};
  const double slots = static_cast<double>(sh.sms) * (tile_rows > 64 ? 1.0 : 2.0);
  if (sh.split_kv == SplitKv::waves && tile_rows >= 64 && units * 2.0 > slots)
    return wave_split(units, slots, std::ceil(max_tokens / 64.0));
  return {split_count(units, min_tile_tokens, s.positions, sh), 0};
}

// SM fill of a grid whose first `whole` works run unsplit and the rest in S pieces (0 when its CTAs
// are alike): the whole works take whole waves of one CTA per SM, the tail's k x S pieces of 1/S
// the work take ceil(k S / SMs) waves of 1/S the length, not whole waves (held-out v33 on the
// H100: 530 dense works, 4 waves + 2 works split 16 ways, ran in 4.06 waves, not 5).
double grid_fill(double units, const KvSplit& ks, int sms) {
  if (ks.splits <= 1 || ks.whole <= 0 || sms <= 0) return 0.0;
  const double k = units - ks.whole, S = ks.splits;
  const double waves = std::ceil(ks.whole / sms) + std::ceil(k * S / sms) / S;
  return units / (waves * sms);
}

// Share of a grid's `units` works that are split (all, or the tail past `whole`).
double split_share(const KvSplit& k, double units) {
  return k.splits > 1 && units > 0 ? (units - std::min(k.whole, units)) / units : 0.0;
}

// An attention grid of `units` works cut by `ks`: its CTAs (the split works' pieces) and its fill.
void set_grid(KernelCost& k, double units, const KvSplit& ks, int sms) {
  k.ctas = units + (ks.splits - 1) * split_share(ks, units) * units;
  k.wave_fill = grid_fill(units, ks, sms);
}

// Dense attention over positions [start, start+n): the dense baseline (whole forward) or the
// dense prefix of a CISA forward. Adds to `a` and returns the (sequence, KV group) tiles.
struct DensePart {
  double kv_req = 0, kv_dram = 0, meta = 0, qo = 0, tiles = 0, min_tokens = 1e300;
};
DensePart dense_part(const Span& s, i64 n, const KernelShape& sh, KernelCost& a) {
  DensePart out;
  // Decode: a kernel packing fewer query heads than r runs several work items per KV group, each
  // streaming its history; how many of their re-reads hit L2 is the implementation's.
  const bool decode_tiles = n == 1 && sh.decode_tile_rows > 0 && s.r > sh.decode_tile_rows;
  const int M = decode_tiles ? sh.decode_tile_rows : sh.attention_tile_rows;
  const double h = decode_tiles ? s.h * sh.decode_tile_reuse : s.h;
  const DenseTiles t = dense_tiles(s.start, n, s.r, M, sh.dense_rows_packed && !decode_tiles);
  const double req = s.kv_tok * t.token_reads, uniq = s.kv_tok * t.unique_tokens;
  const double reads = uniq * dense_stream_reads(t.tiles, sh);
  out.kv_req = req;
  out.kv_dram = reads + (req - reads) * (1.0 - h);
  out.meta = kId * t.token_reads / static_cast<double>(s.c);
  out.qo = 2.0 * static_cast<double>(n) * s.r * s.d * s.b_act;
  out.tiles = t.tiles;
  out.min_tokens = t.min_tile_tokens;
  const int Md =
      decode_tiles ? M
      : sh.dense_rows_packed
          ? attention_tile_for(static_cast<int>(std::min<i64>(n * s.r, M)), sh)
          : attention_tile_for(static_cast<int>(std::min<i64>(n, std::max(1, M / s.r))) * s.r, sh);
  a.flops_issued += 4.0 * s.d * Md * t.token_reads;
  a.flops_useful += 4.0 * s.d * t.useful_token_rows;
  a.page_visits += t.token_reads / static_cast<double>(s.c);
  a.tile_rows = std::max(a.tile_rows, Md);
  a.launches += 1;
  return out;
}

double partials_bytes(int splits, double rows, double d) { return splits > 1 ? 2.0 * splits * rows * (d + 2.0) * 4.0 : 0.0; }

// Dense baseline: every position attends to its whole history.
void dense_attention_cost(const Span& s, const KernelShape& sh, ForwardCost& f) {
  KernelCost& a = f.attention_dense;
  const DensePart p = dense_part(s, s.positions, sh, a);
  const double units = s.seqs * p.tiles;
  const KvSplit ks = kv_splits(s, units, p.min_tokens, static_cast<double>(s.start + s.positions), a.tile_rows, sh);
  const int S = ks.splits;
  f.splits_dense = S;
  const double partials = partials_bytes(S, s.rows, s.d) * split_share(ks, units);
  a.l2_bytes = s.seqs * (p.kv_req + p.meta + p.qo + partials);
  a.dram_bytes = s.seqs * (p.kv_dram + p.meta + p.qo + partials);
  a.dram_write_bytes = s.seqs * (p.qo + partials) / 2.0;  // O and the partials are written, Q and partials read
  a.flops_issued *= s.seqs;
  a.flops_useful *= s.seqs;
  a.page_visits *= s.seqs;
  a.launches = S > 1 ? 2 : 1;
  set_grid(a, units, ks, sh.sms);
  f.l2_kv_dense = s.seqs * p.kv_req;
  f.bytes_dense.kv = s.seqs * p.kv_dram;
  f.bytes_dense.meta = s.seqs * p.meta;
  f.bytes_dense.qo = s.seqs * p.qo;
  f.bytes_dense.partials = s.seqs * partials;
}

// Sums over the sparse groups that scoring, top-k and setup need.
struct SparseSums {
  GroupSums all;
  double units = 0;  // attention work items per (sequence, KV group)
};

// CISA attention: the dense prefix (N_e <= K), then the sparse groups, each reading K selected +
// W window pages + its tail (own page, causally masked).
SparseSums cisa_attention_cost(const Span& s, const KernelShape& sh, ForwardCost& f) {
  KernelCost& ac = f.attention_cisa;
  const int M = sh.attention_tile_rows;
  const double h = s.h;
  const i64 c = s.c, W = s.W, K = s.K, G = s.G;
  double kv_req = 0, kv_dram = 0, meta = 0, qo = 0, min_tokens = 1e300;
  SparseSums out;
  if (s.dense_n > 0) {
    const DensePart p = dense_part(s, s.dense_n, sh, ac);
    kv_req += p.kv_req;
    kv_dram += p.kv_dram;
    meta += p.meta;
    qo += p.qo;
    out.units += p.tiles;
    min_tokens = std::min(min_tokens, p.min_tokens);
    f.cisa_dense_prefix_bytes = s.seqs * (p.kv_dram + p.meta + p.qo);
  }
  double sel_hit = 0;    // share of a selection's K pages served by L2 (last group class evaluated)
  double first_hit = 0;  // share of sel_hit the first group's correction takes (same class)
  if (s.m_sp > 0) {
    const double Kc = static_cast<double>(K * c), Wc = static_cast<double>(W * c);
    auto add_groups = [&](const GroupSums& gs, i64 g) {
      if (gs.m <= 0) return;
      const GroupTiles gt = group_tiles(g, s.r, M, sh);
      const double tiles = gt.tiles;
      const int Mt = gt.rows;
      const double tokens = gs.m * (Kc + Wc) + gs.sum_tail;  // sum over groups of tokens streamed
      kv_req += s.kv_tok * tokens * tiles;
      // DRAM: a group adds its g new window/tail tokens, the part of the window its co-resident
      // predecessor read that L2 misses, its selected pages less those shared with the
      // predecessor or found in L2 (shared_selected_in_l2, when the kernel's CTA order shares
      // them), and L2 misses of its extra row tiles. The first group is corrected below.
      // Every wave of CTAs that holds selections of this sequence reads at least the union of
      // their random picks (compulsory misses: between waves the other sequences' pages evict
      // them): floor_tokens (selected_union_floor). Both from the memo (selected_pages). The tile
      // class's schedule weighs the staggered estimate (at least the floor) against the convoy one
      // (the floor): KernelShape::selected_staggered.
      const SelectedPages sel = selected_pages(gs, static_cast<double>(K), static_cast<double>(W), static_cast<double>(c),
                                               s.o, s.kv_tok, sh);
      const double q = sel.shared;
      sel_hit = h * (s.o + (1.0 - s.o) * q);
      const double floor_tokens = sel.floor_tokens;
      const double w = sh.selected_staggered[tile_class_index(Mt)];
      const bool floor_bound = floor_tokens > gs.m * Kc * (1.0 - sel_hit) * (1.0 + 1e-9);
      const double staggered_tokens = floor_bound ? floor_tokens : gs.m * Kc * (1.0 - sel_hit);
      const double sel_tokens = w * staggered_tokens + (1.0 - w) * floor_tokens;
      first_hit = floor_bound ? 0.0 : w;
      kv_dram += s.kv_tok * (gs.m * static_cast<double>(g) + (1.0 - h) * (gs.m * Wc + gs.sum_t0_mod_c) +
                             sel_tokens + (tiles - 1.0) * tokens * (1.0 - h));
      ac.page_visits += tiles * (gs.m * static_cast<double>(K + W) + gs.sum_tail_pages);
      ac.tile_rows = std::max(ac.tile_rows, Mt);
      meta += kId * (gs.m * static_cast<double>(K + W) + gs.sum_tail_pages) * tiles;  // sparse block table
      qo += 2.0 * gs.m * static_cast<double>(g) * s.r * s.d * s.b_act;
      ac.flops_issued += 4.0 * s.d * Mt * tiles * tokens;
      ac.flops_useful += 4.0 * s.d * s.r *
                         (gs.m * static_cast<double>(g) * (Kc + Wc) + gs.sum_attended - static_cast<double>(g * c) * gs.sum_n);
      out.units += gs.m * tiles;
      min_tokens = std::min(min_tokens, Kc + Wc + 1.0);
      out.all.m += gs.m;
      out.all.sum_n += gs.sum_n;
      out.all.sum_tail_pages += gs.sum_tail_pages;
    };
    const i64 t0_first = s.start + s.kstar * G;
    add_groups(group_sums(t0_first, s.m_full, G, G, c), G);
    if (s.short_last) add_groups(group_sums(s.start + (s.ng - 1) * G, 1, s.tail_len, G, c), s.tail_len);
    // The first sparse group has no co-resident predecessor: it reads its whole region.
    const i64 g0 = (s.m_sp == 1 && s.short_last) ? s.tail_len : G;
    const double tail0 = static_cast<double>(t0_first + g0 - (t0_first / c) * c);
    const double incremental = static_cast<double>(g0) +
                               (1.0 - h) * (Wc + static_cast<double>(t0_first % c)) +
                               Kc * (1.0 - first_hit * sel_hit);
    kv_dram += s.kv_tok * ((Kc + Wc + tail0) - incremental);
    ac.launches += 1;
  }
  // The longest work: a sparse one (K + W pages and its own) or, before the dense point, the prefix.
  const double max_tokens = std::min(static_cast<double>(s.start + s.positions), static_cast<double>((K + W + 1) * c));
  const double units = s.seqs * out.units;
  const KvSplit ks = kv_splits(s, units, min_tokens, max_tokens, ac.tile_rows, sh);
  const int S = ks.splits;
  f.splits_cisa = S;
  const double partials = partials_bytes(S, s.rows, s.d) * split_share(ks, units);
  if (S > 1) ac.launches += 1;
  // An implementation whose decode walks the whole block-mask row pays a visit per page of the
  // context, selected or not (its bytes stay those of the selected pages).
  f.cisa_decode_kernel = s.positions == 1;
  if (sh.decode_visits_context && s.positions == 1 && s.m_sp > 0)
    ac.page_visits = out.units * std::ceil(static_cast<double>(s.start + 1) / static_cast<double>(c));
  ac.l2_bytes = s.seqs * (kv_req + meta + qo + partials);
  ac.dram_bytes = s.seqs * (kv_dram + meta + qo + partials);
  ac.dram_write_bytes = s.seqs * (qo + partials) / 2.0;
  if (s.m_sp == 0) f.cisa_dense_prefix_bytes = ac.dram_bytes;  // all of it on the dense path
  ac.flops_issued *= s.seqs;
  ac.flops_useful *= s.seqs;
  ac.page_visits *= s.seqs;
  set_grid(ac, units, ks, sh.sms);
  f.l2_kv_cisa = s.seqs * kv_req;
  f.bytes_cisa.kv = s.seqs * kv_dram;
  f.bytes_cisa.qo = s.seqs * qo;
  f.bytes_cisa.partials = s.seqs * partials;
  f.bytes_cisa.meta = s.seqs * meta;
  f.dense_positions = static_cast<double>(s.batch) * static_cast<double>(s.dense_n);
  f.sparse_positions = static_cast<double>(s.batch) * static_cast<double>(s.positions - s.dense_n);
  return out;
}

// Scoring: selections of one (sequence, KV group) stacked score_tile_rows at a time; each tile
// streams the representatives up to its last group's eligible count; earlier tiles' prefix
// re-reads hit L2 with probability h. Scores are written at score_bytes each.
void scoring_cost(const Span& s, const SparseSums& sp, const KernelShape& sh, ForwardCost& f) {
  const double msp = static_cast<double>(s.m_sp);
  const double sum_ne = sp.all.sum_n - msp * static_cast<double>(s.W);
  const i64 Ms = sh.score_tile_rows, G = s.G, c = s.c;
  const i64 nb_full = s.m_sp / Ms;
  double ne_last_sum = static_cast<double>(floor_sum(nb_full, c, Ms * G, s.start + (s.kstar + Ms - 1) * G)) -
                       static_cast<double>(nb_full * s.W);
  double rows_x_ne = static_cast<double>(Ms) * ne_last_sum;
  const double ne_final = static_cast<double>((s.start + (s.ng - 1) * G) / c - s.W);
  if (s.m_sp % Ms != 0) {
    ne_last_sum += ne_final;
    rows_x_ne += static_cast<double>(s.m_sp % Ms) * ne_final;
  }
  const double rep_vec = s.d_r * s.b_rep * s.rep_vectors;
  const double rep_req = rep_vec * ne_last_sum;
  const double rep_dram = rep_vec * (ne_final + (1.0 - s.h) * (ne_last_sum - ne_final));
  const double iq = static_cast<double>(s.positions - s.dense_n) * s.d_r * s.b_act;
  const double scores_w = sh.score_bytes * sum_ne;
  KernelCost& sc = f.scoring;
  sc.l2_bytes = s.seqs * (rep_req + iq + scores_w);
  sc.dram_bytes = s.seqs * (rep_dram + iq + scores_w);
  sc.dram_write_bytes = s.seqs * scores_w;
  sc.flops_useful = s.seqs * 2.0 * s.d_r * s.rep_vectors * s.agg_dots * sum_ne;
  // Prefill: every group of a launch runs on the warpgroups (half a tile of rows each) that its
  // largest group needs, so a launch with a group of more than half a tile computes whole tiles
  // for every group (kernels/src/scoring.cu score_kernel; the decode GEMV computes its rows only).
  if (s.positions > 1 && Ms > 1) {
    const i64 half = Ms / 2, biggest = std::min<i64>(s.m_sp, Ms);
    const double rows = static_cast<double>(std::min<i64>(Ms, (biggest + half - 1) / half * half));
    rows_x_ne = rows * ne_last_sum;
  }
  sc.flops_issued = s.seqs * 2.0 * s.d_r * s.rep_vectors * s.agg_dots * rows_x_ne;
  sc.launches = 1;
  sc.ctas = static_cast<double>(sh.sms);  // the eligible range is split to fill the GPU
  // A CTA walks up to score_tiles_per_cta tiles of representatives one after another.
  sc.serial_steps = std::min(static_cast<double>(sh.score_tiles_per_cta),
                             std::ceil(ne_final / std::max(1, sh.score_pages_per_tile)));
  // Prefill: a thread of sum_index_queries adds the G index queries of its selection in order.
  sc.summed_queries = s.positions > 1 ? static_cast<double>(G) : 0.0;
  f.l2_rep = s.seqs * rep_req;
  f.bytes_cisa.rep = s.seqs * rep_dram;
  f.bytes_cisa.meta += s.seqs * (iq + scores_w);
  f.selections = s.seqs * msp;
  f.topk_rows = f.selections;
  f.eligible_chunks_sum = s.seqs * sum_ne;
}

// Top-k: reads each row's scores, writes K physical page IDs (block-table lookups fused).
void topk_cost(const Span& s, const SparseSums& sp, const KernelShape& sh, ForwardCost& f) {
  const double msp = static_cast<double>(s.m_sp);
  const double sum_ne = sp.all.sum_n - msp * static_cast<double>(s.W);
  KernelCost& tk = f.topk;
  const double ids = kId * msp * static_cast<double>(s.K);
  const double tk_bytes = sh.score_bytes * sum_ne + 2.0 * ids;
  tk.l2_bytes = tk.dram_bytes = s.seqs * tk_bytes;
  tk.dram_write_bytes = s.seqs * ids;
  tk.launches = 1;
  tk.ctas = f.topk_rows;
  f.bytes_cisa.meta += s.seqs * tk_bytes;
}

// Setup: window and tail page IDs appended to each selection's sparse block table; the host plans
// the step and uploads its descriptors (descriptor_blob_bytes).
void setup_cost(const Span& s, const SparseSums& sp, const KernelShape& sh, ForwardCost& f) {
  KernelCost& su = f.setup;
  const double wt_ids = static_cast<double>(s.m_sp) * static_cast<double>(s.W) + sp.all.sum_tail_pages;
  su.l2_bytes = su.dram_bytes = s.seqs * 2.0 * kId * wt_ids;
  su.dram_write_bytes = s.seqs * kId * wt_ids;
  f.setup_h2d_bytes = descriptor_blob_bytes(f.selections, s.seqs * std::ceil(static_cast<double>(s.m_sp) / 128.0),
                                            s.seqs * sp.units);
  su.launches = 1;
  su.ctas = static_cast<double>(sh.sms);
  f.bytes_cisa.meta += s.seqs * 2.0 * kId * wt_ids;
}

// Other (CISA only): the index projection iq_t = W_idx x_t for sparse positions (cuBLAS), and the
// representative update for chunks this forward completes (reads their keys, writes reps): two
// kernels with their own shapes and fixed costs.
void other_cost(const Span& s, const KernelShape& sh, ForwardCost& f) {
  const double sp_pos = static_cast<double>(s.positions - s.dense_n);
  const Geometry& geo = s.geo;
  KernelCost& ot = f.other;
  if (sp_pos > 0) {
    const double w_idx = geo.kv_heads * s.d_r * geo.hidden * 2.0;  // once per forward
    const double x = static_cast<double>(s.batch) * sp_pos * geo.hidden * s.b_act;
    const double out = s.seqs * sp_pos * s.d_r * s.b_act;
    ot.l2_bytes = ot.dram_bytes = w_idx + x + out;
    ot.dram_write_bytes = out;
    ot.flops_useful = ot.flops_issued = s.seqs * sp_pos * 2.0 * geo.hidden * s.d_r;
    ot.launches = 1;
    // cuBLAS picks tiles and split-K that fill the SMs at every shape calibrate's grid measured
    // (m 128-1,024, n 512-65,536, k 2,688-8,192; NOTES session 11): no wave quantisation; its
    // skinny-GEMM rates are the implementation's projection figures.
    ot.ctas = static_cast<double>(sh.sms);
  }
  KernelCost& ru = f.rep_update;
  const i64 filled = (s.start + s.positions) / s.c - s.start / s.c;
  if (filled > 0) {
    const double items = s.seqs * static_cast<double>(filled);  // (chunk, KV head) pairs
    const double writes = items * s.d_r * s.b_rep * s.rep_vectors;
    ru.l2_bytes = ru.dram_bytes = items * static_cast<double>(s.c) * s.d * s.b_kv + writes;
    ru.dram_write_bytes = writes;
    ru.flops_useful = ru.flops_issued = items * static_cast<double>(s.c) * s.d;
    ru.launches = 1;
    ru.ctas = std::ceil(items / 8.0);  // one warp per (chunk, KV head), 8 warps per CTA (kernels/)
  }
  f.bytes_cisa.other = ot.dram_bytes + ru.dram_bytes;
}

// A kernel without GQA packing runs one work item per query head: the same cost as a geometry of
// q_heads KV groups of one head each, except that the heads of a group read the same pages, which
// co-resident CTAs find in L2 (EST, h): only one head's K/V bytes per group reach DRAM.
Geometry unpacked(const Geometry& g) {
  Geometry u = g;
  u.kv_heads = g.q_heads;
  return u;
}

}  // namespace

namespace {

ForwardCost dense_cost_of(const Geometry& geo, const CisaConfig& cfg, int qshare_g, i64 start, i64 positions,
                          int batch, const KernelShape& shape) {
  ForwardCost f;
  if (positions <= 0) return f;
  if (!shape.gqa_packing && geo.heads_per_group() > 1) {
    f = dense_cost_of(unpacked(geo), cfg, qshare_g, start, positions, batch, shape);
    const double r = geo.heads_per_group(), kv = f.bytes_dense.kv;
    f.bytes_dense.kv = kv / r;
    f.attention_dense.dram_bytes -= kv - kv / r;
    return f;
  }
  dense_attention_cost(Span(geo, cfg, qshare_g, start, positions, batch, shape), shape, f);
  return f;
}

// What the dense traffic reads: not the budget, G, window, overlap or representatives (a test holds
// the dense cost fixed while those change), so a sweep over them prices each dense forward once.
// Packed into words (doubles by their bits): keys compare and hash as 17 words.
struct DenseKey {
  static constexpr std::size_t kWords = 17;
  std::uint64_t w[kWords];
};

std::uint64_t pack2(std::int64_t lo, std::int64_t hi) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(lo)) | static_cast<std::uint64_t>(hi) << 32;
}
std::uint64_t bits_of(double v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// KernelShape::selected_staggered (0, 0.5 or 1 per class), two bits a class.
int staggered_bits(const KernelShape& x) {
  int b = 0;
  for (int i = 0; i < 4; ++i)
    b |= static_cast<int>(std::lround(2.0 * x.selected_staggered[i])) << (2 * i);
  return b;
}

// Every field (the static_assert asks whoever adds one to KernelShape to add it here).
static_assert(sizeof(KernelShape) == 144, "a KernelShape field was added: add it to dense_key");
DenseKey dense_key(const Geometry& geo, const CisaConfig& cfg, i64 start, i64 positions, int batch,
                   const KernelShape& x) {
  return DenseKey{
      {pack2(geo.q_heads, geo.kv_heads), pack2(geo.head_dim, geo.hidden),
       pack2(cfg.chunk_tokens, static_cast<int>(cfg.kv_dtype)), static_cast<std::uint64_t>(start),
       static_cast<std::uint64_t>(positions), pack2(batch, x.attention_tile_rows),
       pack2(x.attention_min_tile_rows, x.score_tile_rows),
       pack2(x.score_pages_per_tile, x.score_tiles_per_cta), pack2(x.topk_radix_passes, x.sms),
       bits_of(x.l2_reuse), pack2(x.split_min_tokens, static_cast<int>(x.split_kv)),
       pack2(int(x.decode_visits_context) | int(x.share_selected) << 1 | int(x.gqa_packing) << 2 |
                 int(x.dense_rows_packed) << 3 | staggered_bits(x) << 4,
             x.topk_cluster_above),
       bits_of(x.l2_capacity_bytes), bits_of(x.score_bytes),
       pack2(x.topk_few_rows_slice, x.topk_ctas_per_sm),
       static_cast<std::uint64_t>(static_cast<std::uint32_t>(x.decode_tile_rows)),
       bits_of(x.decode_tile_reuse)}};
}

bool same_key(const DenseKey& a, const DenseKey& b) {
  std::uint64_t diff = 0;
  for (std::size_t i = 0; i < DenseKey::kWords; ++i) diff |= a.w[i] ^ b.w[i];
  return diff == 0;
}

// Of the words that differ between the keys of a sweep (start, positions, batch, the geometry, chunk,
// tile rows, split policy, L2 reuse); same_key compares them all.
std::uint64_t key_hash(const DenseKey& k) {
  std::uint64_t h = 0;
  for (std::size_t i : {0, 1, 2, 3, 4, 5, 9, 10}) h += (k.w[i] ^ (k.w[i] >> 31)) * (0x9E3779B97F4A7C15ULL + 2 * i);
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ULL;
  return h ^ (h >> 32);
}

}  // namespace

namespace {

// What dense_cost_of sets (the rest of its ForwardCost keeps its defaults): what the memo keeps.
struct DenseResult {
  KernelCost attention;
  ByteCategories bytes;
  double l2_kv = 0, splits = 1;
};
// A field added to ForwardCost that dense_cost_of sets must be kept in DenseResult too.
static_assert(sizeof(ForwardCost) == 8 * (7 * 12 + 2 * 6 + 13),
              "ForwardCost changed: check DenseResult");

// Per thread (a sweep's points are priced on several threads): sets of 4 entries, so that the
// few implementations priced at every point (whose shapes may hash alike) do not evict each other.
// 8,192 entries: a sweep cycles through ~1,000 (context, batch, prefill) x 4 shapes between
// repeats; 256 entries missed ~all lookups of a 1M sweep. A set's 4 tags (the key's hash) share
// a cache line, and an entry keeps only the dense fields (~0.3 KB, ~2.5 MB a thread, touched as
// used): a lookup reads the tags' line and, on a match, one entry.
const DenseResult& dense_memo(const Geometry& geo, const CisaConfig& cfg, int qshare_g, i64 start, i64 positions,
                              int batch, const KernelShape& shape) {
  struct Entry {
    DenseKey key;
    DenseResult r;
  };
  constexpr std::size_t kSets = 2048, kWays = 4;
  struct alignas(32) Tags {
    std::uint64_t t[kWays] = {0, 0, 0, 0};  // 0: unused
  };
  thread_local std::vector<Tags> tags(kSets);
  thread_local std::vector<Entry> cache(kSets * kWays);
  thread_local std::size_t next_way = 0;
  const DenseKey key = dense_key(geo, cfg, start, positions, batch, shape);
  const std::uint64_t h = key_hash(key) | 1;
  const std::size_t set = static_cast<std::size_t>(h >> 40) % kSets;
  Tags& tg = tags[set];
  Entry* e = cache.data() + set * kWays;
  for (std::size_t w = 0; w < kWays; ++w)
    if (tg.t[w] == h && same_key(e[w].key, key)) return e[w].r;
  const std::size_t w = next_way++ % kWays;
  const ForwardCost f = dense_cost_of(geo, cfg, qshare_g, start, positions, batch, shape);
  e[w].r = DenseResult{f.attention_dense, f.bytes_dense, f.l2_kv_dense, f.splits_dense};
  e[w].key = key;
  tg.t[w] = h;
  return e[w].r;
}

void put_dense(ForwardCost& f, const DenseResult& r) {
  f.attention_dense = r.attention;
  f.bytes_dense = r.bytes;
  f.l2_kv_dense = r.l2_kv;
  f.splits_dense = r.splits;
}

}  // namespace

ForwardCost dense_forward_cost(const Geometry& geo, const CisaConfig& cfg, int qshare_g, i64 start, i64 positions,
                               int batch, const KernelShape& shape) {
  ForwardCost f;
  dense_forward_cost_into(f, geo, cfg, qshare_g, start, positions, batch, shape);
  return f;
}

void dense_forward_cost_into(ForwardCost& f, const Geometry& geo, const CisaConfig& cfg,
                             int qshare_g, i64 start, i64 positions, int batch,
                             const KernelShape& shape) {
  put_dense(f, dense_memo(geo, cfg, qshare_g, start, positions, batch, shape));
}

ForwardCost forward_cost(const Geometry& geo, const CisaConfig& cfg, int qshare_g, i64 start, i64 positions,
                         int batch, const KernelShape& shape) {
  ForwardCost f;
  if (positions <= 0) return f;
  put_dense(f, dense_memo(geo, cfg, qshare_g, start, positions, batch, shape));
  const Span s(geo, cfg, qshare_g, start, positions, batch, shape);
  SparseSums sp;
  if (!shape.gqa_packing && geo.heads_per_group() > 1) {
    // Attention per query head; the selection path (one indexer per KV group) is unchanged.
    ForwardCost a;
    sp = cisa_attention_cost(Span(unpacked(geo), cfg, qshare_g, start, positions, batch, shape), shape, a);
    const double r = geo.heads_per_group(), kv = a.bytes_cisa.kv;
    a.bytes_cisa.kv = kv / r;
    a.attention_cisa.dram_bytes -= kv - kv / r;
    f.attention_cisa = a.attention_cisa;
    f.cisa_dense_prefix_bytes = a.cisa_dense_prefix_bytes / r;
    f.bytes_cisa = a.bytes_cisa;
    f.l2_kv_cisa = a.l2_kv_cisa;
    f.splits_cisa = a.splits_cisa;
    f.cisa_decode_kernel = a.cisa_decode_kernel;
    f.dense_positions = a.dense_positions;
    f.sparse_positions = a.sparse_positions;
    sp.units *= r;  // setup uploads one descriptor per work item: r per (sequence, KV group)
  } else {
    sp = cisa_attention_cost(s, shape, f);
  }
  if (s.m_sp > 0) {
    scoring_cost(s, sp, shape, f);
    topk_cost(s, sp, shape, f);
    setup_cost(s, sp, shape, f);
  }
  other_cost(s, shape, f);
  return f;
}

// The step's descriptor blob as this project's kernels lay it out (kernels/src/cisa_step.cu): four
// sections, each padded to 256 bytes: scoring rows (5 int32 per selection), scoring groups (5 int32
// per run of at most 128 rows of one sequence and KV head), top-k rows (3 int32 per selection),
// attention work items (9 int32 each); 256 bytes at the least.
double descriptor_blob_bytes(double selections, double groups, double work_items) {
  auto section = [](double bytes) { return std::ceil(bytes / 256.0) * 256.0; };
  return std::max(256.0, section(kScoreRowBytes * selections) + section(kScoreGroupBytes * groups) +
                             section(kTopkRowBytes * selections) + section(kAttnWorkBytes * work_items));
}

// The split searches, for tests/unit/test_traffic.cpp (which declares these itself: model internals,
// not in a header).
namespace detail {
std::pair<int, double> wave_split_of(double works, double slots, double tiles) {
  const KvSplit k = wave_split(works, slots, tiles);
  return {k.splits, k.whole};
}
int fa2_split_count_of(double blocks, double kv_tokens, double head_dim, const KernelShape& sh) {
  return fa2_split_count(blocks, kv_tokens, head_dim, sh);
}
}  // namespace detail

}  // namespace cisa
