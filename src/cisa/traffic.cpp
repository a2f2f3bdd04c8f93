#include "cisa/traffic.hpp"

#include <algorithm>
#include <cmath>

namespace cisa {

void KernelCost::add(const KernelCost& o) {
  dram_bytes += o.dram_bytes;
  dram_write_bytes += o.dram_write_bytes;
  l2_bytes += o.l2_bytes;
  flops_issued += o.flops_issued;
  flops_useful += o.flops_useful;
  launches += o.launches;
  ctas += o.ctas;
  page_visits += o.page_visits;
  serial_steps = std::max(serial_steps, o.serial_steps);
  tile_rows = std::max(tile_rows, o.tile_rows);
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
  bytes_dense.add(o.bytes_dense);
  bytes_cisa.add(o.bytes_cisa);
  l2_kv_dense += o.l2_kv_dense;
  l2_kv_cisa += o.l2_kv_cisa;
  l2_rep += o.l2_rep;
  selections += o.selections;
  dense_positions += o.dense_positions;
  sparse_positions += o.sparse_positions;
  topk_rows += o.topk_rows;
  topk_elements += o.topk_elements;
  splits_dense = std::max(splits_dense, o.splits_dense);
  splits_cisa = std::max(splits_cisa, o.splits_cisa);
  setup_h2d_bytes += o.setup_h2d_bytes;
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
struct DenseTiles {
  double tiles = 0;              // row tiles
  double token_reads = 0;        // sum over tiles of tokens streamed
  double unique_tokens = 0;      // distinct tokens touched (a + n)
  double useful_token_rows = 0;  // sum over rows of tokens attended
  double min_tile_tokens = 0;
};

DenseTiles dense_tiles(i64 a, i64 n, int r, int M) {
  DenseTiles t;
  if (n <= 0) return t;
  const i64 ppt = r <= M ? std::max<i64>(1, M / r) : 1;  // positions per tile
  const i64 tpp = r <= M ? 1 : ceil_div(r, M);           // tiles per position (r > M)
  const i64 nt = ceil_div(n, ppt);
  // tile j ends at position a + min((j+1) ppt, n) - 1 and streams that many + 1 tokens
  const double last_sum =
      static_cast<double>(nt - 1) * static_cast<double>(a) +
      static_cast<double>(ppt) * static_cast<double>(nt - 1) * static_cast<double>(nt) / 2.0 +
      static_cast<double>(a + n);
  t.tiles = static_cast<double>(nt * tpp);
  t.token_reads = last_sum * static_cast<double>(tpp);
  t.unique_tokens = static_cast<double>(a + n);
  const double dn = static_cast<double>(n), da = static_cast<double>(a);
  t.useful_token_rows = static_cast<double>(r) * (dn * da + dn * (dn + 1.0) / 2.0);
  t.min_tile_tokens = static_cast<double>(a + std::min(ppt, n));
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

int split_count(double units, double min_tile_tokens, const KernelShape& sh) {
  const double target = 0.8 * sh.sms;
  if (units <= 0 || units >= target) return 1;
  const double want = std::ceil(target / units);
  const double most = std::floor(min_tile_tokens / sh.split_min_tokens);
  return static_cast<int>(std::max(1.0, std::min(want, most)));
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
  if (s.m <= 0 || sh.l2_bytes <= 0) return 0.0;
  const double ne = s.sum_n / s.m - W;
  if (ne <= K) return 0.0;
  const double a = 1.0 - K / ne;
  const double w = std::floor(s.m);  // the sequence's selections, in order
  const double n0 = sh.l2_bytes / ((K + W) * c * kv_tok);
  double q = 0;
  for (int it = 0; it < 12; ++it) {  // monotone in q; converges in a few steps
    const double n = std::min(n0 / std::max(1e-3, 1.0 - q), w);
    const double j = std::min(w, std::ceil(n));  // selections with fewer than n predecessors
    const double sum = (1.0 - std::pow(a, j)) / (1.0 - a) + (w - j) * std::pow(a, n);
    q = std::clamp(1.0 - sum / w, 0.0, 1.0);
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
  const double e = sh.l2_bytes > 0 ? std::min(1.0, all * c * kv_tok / sh.l2_bytes) : 1.0;
  return ((1.0 - e) * all + e * waves * per_wave) * c;
}

}  // namespace

ForwardCost forward_cost(const Geometry& geo, const CisaConfig& cfg, int qshare_g, i64 start,
                         i64 positions, int batch, const KernelShape& sh) {
  ForwardCost f;
  if (positions <= 0) return f;
  const int r = geo.heads_per_group();
  const double d = geo.head_dim;
  const double d_r = cfg.rep_dim > 0 ? cfg.rep_dim : geo.head_dim;
  const double b_kv = dtype_bytes(cfg.kv_dtype), b_rep = dtype_bytes(cfg.rep_dtype);
  const double b_act = 2.0;  // Q, O, index queries in BF16
  const double rep_vectors = cfg.rep_kind == RepKind::minmax ? 2.0 : 1.0;
  const double agg_dots = cfg.score_agg == ScoreAgg::max ? qshare_g : 1.0;
  const i64 c = cfg.chunk_tokens, W = cfg.window_pages, K = cfg.budget_chunks, G = qshare_g;
  const int M = sh.attention_tile_rows;
  const double h = sh.l2_reuse, o = cfg.selection_overlap;
  const double seqs = static_cast<double>(batch) * geo.kv_heads;  // (sequence, KV group) pairs
  const double kv_tok = 2.0 * d * b_kv;                           // K+V bytes per token
  const double id = 4.0, score = 4.0;                             // int32 page IDs, fp32 scores
  const double n = static_cast<double>(positions);
  const double rows = n * r;

  // ---------------- dense baseline ----------------
  {
    const DenseTiles t = dense_tiles(start, positions, r, M);
    const int Md =
        attention_tile_for(static_cast<int>(std::min<i64>(positions, std::max(1, M / r))) * r, sh);
    const double units = seqs * t.tiles;
    const int S = split_count(units, t.min_tile_tokens, sh);
    f.splits_dense = S;
    KernelCost& a = f.attention_dense;
    const double req = kv_tok * t.token_reads;
    const double uniq = kv_tok * t.unique_tokens;
    const double reads = uniq * dense_stream_reads(t.tiles, sh);
    const double kv_dram = reads + (req - reads) * (1.0 - h);
    const double bt = id * t.token_reads / static_cast<double>(c);
    const double qo = 2.0 * rows * d * b_act;
    const double partials = S > 1 ? 2.0 * S * rows * (d + 2.0) * 4.0 : 0.0;
    a.l2_bytes = seqs * (req + bt + qo + partials);
    a.dram_bytes = seqs * (kv_dram + bt + qo + partials);
    a.dram_write_bytes =
        seqs * (qo + partials) / 2.0;  // O and the partials are written, Q and partials read
    a.flops_issued = seqs * 4.0 * d * Md * t.token_reads;
    a.page_visits = seqs * t.token_reads / static_cast<double>(c);
    a.tile_rows = Md;
    a.flops_useful = seqs * 4.0 * d * t.useful_token_rows;
    a.launches = S > 1 ? 2 : 1;
    a.ctas = units * S;
    f.l2_kv_dense = seqs * req;
    f.bytes_dense.kv = seqs * kv_dram;
    f.bytes_dense.meta = seqs * bt;
    f.bytes_dense.qo = seqs * qo;
    f.bytes_dense.partials = seqs * partials;
  }

  // ---------------- CISA ----------------
  const i64 ng = ceil_div(positions, G);
  // First group whose eligible count N_e = floor(t0/c) - W exceeds K: t0 >= (K+W+1) c.
  const i64 first_sparse_t0 = (K + W + 1) * c;
  const i64 kstar = std::clamp<i64>(ceil_div(std::max<i64>(0, first_sparse_t0 - start), G), 0, ng);
  const i64 dense_n = std::min<i64>(kstar * G, positions);
  const i64 m_sp = ng - kstar;                    // sparse groups
  const i64 tail_len = positions - (ng - 1) * G;  // length of the last group (1..G)
  const i64 m_full = (tail_len == G) ? m_sp : std::max<i64>(0, m_sp - 1);
  const bool short_last = m_sp > 0 && tail_len != G;

  f.dense_positions = seqs / geo.kv_heads * static_cast<double>(dense_n);
  f.sparse_positions = seqs / geo.kv_heads * static_cast<double>(positions - dense_n);

  KernelCost& ac = f.attention_cisa;
  double kv_req = 0, kv_dram = 0, meta = 0, qo = 0, units = 0, min_tokens = 1e300;
  // Dense prefix (N_e <= K): the ordinary dense kernel over those positions.
  if (dense_n > 0) {
    const DenseTiles t = dense_tiles(start, dense_n, r, M);
    const double req = kv_tok * t.token_reads, uniq = kv_tok * t.unique_tokens;
    kv_req += req;
    const double reads = uniq * dense_stream_reads(t.tiles, sh);
    kv_dram += reads + (req - reads) * (1.0 - h);
    meta += id * t.token_reads / static_cast<double>(c);
    qo += 2.0 * static_cast<double>(dense_n) * r * d * b_act;
    const int Md =
        attention_tile_for(static_cast<int>(std::min<i64>(dense_n, std::max(1, M / r))) * r, sh);
    ac.flops_issued += 4.0 * d * Md * t.token_reads;
    ac.flops_useful += 4.0 * d * t.useful_token_rows;
    ac.page_visits += t.token_reads / static_cast<double>(c);
    ac.tile_rows = std::max(ac.tile_rows, Md);
    units += t.tiles;
    min_tokens = std::min(min_tokens, t.min_tile_tokens);
    ac.launches += 1;
  }
  // Sparse groups: K selected + W window pages + the tail (own page, causally masked).
  GroupSums sums_all;
  double sel_hit = 0;  // share of a selection's K pages served by L2 (last group class evaluated)
  bool floor_bound =
      false;  // the sequence's selected reads are the per-wave union (already complete)
  if (m_sp > 0) {
    const double Kc = static_cast<double>(K * c), Wc = static_cast<double>(W * c);
    auto add_groups = [&](const GroupSums& s, i64 g) {
      if (s.m <= 0) return;
      const double tiles = static_cast<double>(ceil_div(g * r, M));
      const int Mt = attention_tile_for(static_cast<int>(std::min<i64>(g * r, M)), sh);
      const double tokens = s.m * (Kc + Wc) + s.sum_tail;  // sum over groups of tokens streamed
      kv_req += kv_tok * tokens * tiles;
      // DRAM: a group adds its g new window/tail tokens, the part of the window its co-resident
      // predecessor read that L2 misses, its selected pages less those shared with the
      // predecessor or found in L2 (shared_selected_in_l2), and L2 misses of its extra row tiles.
      // The first group is corrected below.
      const double q = shared_selected_in_l2(s, static_cast<double>(K), static_cast<double>(W),
                                             static_cast<double>(c), kv_tok, sh);
      sel_hit = h * (o + (1.0 - o) * q);
      // Every wave of CTAs that holds selections of this sequence reads at least the union of
      // their random picks (compulsory misses: between waves the other sequences' pages evict
      // them).
      const double floor_tokens = selected_union_floor(
          s, static_cast<double>(K), static_cast<double>(W), static_cast<double>(c), o, kv_tok, sh);
      floor_bound = floor_tokens > s.m * Kc * (1.0 - sel_hit) * (1.0 + 1e-9);
      const double sel_tokens = floor_bound ? floor_tokens : s.m * Kc * (1.0 - sel_hit);
      kv_dram += kv_tok * (s.m * static_cast<double>(g) + (1.0 - h) * (s.m * Wc + s.sum_t0_mod_c) +
                           sel_tokens + (tiles - 1.0) * tokens * (1.0 - h));
      ac.page_visits += tiles * (s.m * static_cast<double>(K + W) + s.sum_tail_pages);
      ac.tile_rows = std::max(ac.tile_rows, Mt);
      meta +=
          id * (s.m * static_cast<double>(K + W) + s.sum_tail_pages) * tiles;  // sparse block table
      qo += 2.0 * s.m * static_cast<double>(g) * r * d * b_act;
      ac.flops_issued += 4.0 * d * Mt * tiles * tokens;
      ac.flops_useful += 4.0 * d * r *
                         (s.m * static_cast<double>(g) * (Kc + Wc) + s.sum_attended -
                          static_cast<double>(g * c) * s.sum_n);
      units += s.m * tiles;
      min_tokens = std::min(min_tokens, Kc + Wc + 1.0);
      sums_all.m += s.m;
      sums_all.sum_n += s.sum_n;
      sums_all.sum_tail_pages += s.sum_tail_pages;
    };
    const i64 t0_first = start + kstar * G;
    add_groups(group_sums(t0_first, m_full, G, G, c), G);
    if (short_last) add_groups(group_sums(start + (ng - 1) * G, 1, tail_len, G, c), tail_len);
    // The first sparse group has no co-resident predecessor: it reads its whole region.
    const i64 g0 = (m_sp == 1 && short_last) ? tail_len : G;
    const double tail0 = static_cast<double>(t0_first + g0 - (t0_first / c) * c);
    const double incremental = static_cast<double>(g0) +
                               (1.0 - h) * (Wc + static_cast<double>(t0_first % c)) +
                               Kc * (1.0 - (floor_bound ? 0.0 : sel_hit));
    kv_dram += kv_tok * ((Kc + Wc + tail0) - incremental);
    ac.launches += 1;
  }
  const int S = split_count(seqs * units, min_tokens, sh);
  f.splits_cisa = S;
  const double partials = S > 1 ? 2.0 * S * rows * (d + 2.0) * 4.0 : 0.0;
  if (S > 1) ac.launches += 1;
  ac.l2_bytes = seqs * (kv_req + meta + qo + partials);
  ac.dram_bytes = seqs * (kv_dram + meta + qo + partials);
  ac.dram_write_bytes = seqs * (qo + partials) / 2.0;
  ac.flops_issued *= seqs;
  ac.flops_useful *= seqs;
  ac.page_visits *= seqs;
  ac.ctas = seqs * units * S;
  f.l2_kv_cisa = seqs * kv_req;
  f.bytes_cisa.kv = seqs * kv_dram;
  f.bytes_cisa.qo = seqs * qo;
  f.bytes_cisa.partials = seqs * partials;
  f.bytes_cisa.meta = seqs * meta;

  if (m_sp > 0) {
    const double msp = static_cast<double>(m_sp);
    const double sum_ne = sums_all.sum_n - msp * static_cast<double>(W);
    f.selections = seqs * msp;
    f.topk_rows = f.selections;
    f.topk_elements = seqs * sum_ne;

    // Scoring: selections of one (sequence, KV group) stacked Ms at a time; each tile streams
    // the representatives up to its last group's eligible count; earlier tiles' prefix re-reads
    // hit L2 with probability h.
    const i64 Ms = sh.score_tile_rows;
    const i64 nb_full = m_sp / Ms;
    const i64 k0 = kstar;
    double ne_last_sum =
        static_cast<double>(floor_sum(nb_full, c, Ms * G, start + (k0 + Ms - 1) * G)) -
        static_cast<double>(nb_full * W);
    double rows_x_ne = static_cast<double>(Ms) * ne_last_sum;
    const double ne_final = static_cast<double>((start + (ng - 1) * G) / c - W);
    if (m_sp % Ms != 0) {
      ne_last_sum += ne_final;
      rows_x_ne += static_cast<double>(m_sp % Ms) * ne_final;
    }
    const double rep_vec = d_r * b_rep * rep_vectors;
    const double rep_req = rep_vec * ne_last_sum;
    const double rep_dram = rep_vec * (ne_final + (1.0 - h) * (ne_last_sum - ne_final));
    const double iq = static_cast<double>(positions - dense_n) * d_r * b_act;
    const double scores_w = score * sum_ne;
    KernelCost& sc = f.scoring;
    sc.l2_bytes = seqs * (rep_req + iq + scores_w);
    sc.dram_bytes = seqs * (rep_dram + iq + scores_w);
    sc.dram_write_bytes = seqs * scores_w;
    sc.flops_useful = seqs * 2.0 * d_r * rep_vectors * agg_dots * sum_ne;
    sc.flops_issued = seqs * 2.0 * d_r * rep_vectors * agg_dots * rows_x_ne;
    sc.launches = 1;
    sc.ctas = static_cast<double>(sh.sms);  // the eligible range is split to fill the GPU
    // A CTA walks up to score_tiles_per_cta tiles of representatives one after another.
    sc.serial_steps = std::min(static_cast<double>(sh.score_tiles_per_cta),
                               std::ceil(ne_final / std::max(1, sh.score_pages_per_tile)));
    f.l2_rep = seqs * rep_req;
    f.bytes_cisa.rep = seqs * rep_dram;
    f.bytes_cisa.meta += seqs * (iq + scores_w);

    // Top-k: reads each row's scores, writes K physical page IDs (block-table lookups fused).
    KernelCost& tk = f.topk;
    const double tk_bytes = score * sum_ne + 2.0 * id * msp * static_cast<double>(K);
    tk.l2_bytes = tk.dram_bytes = seqs * tk_bytes;
    tk.dram_write_bytes = seqs * id * msp * static_cast<double>(K);
    tk.launches = 1;
    tk.ctas = f.topk_rows;
    f.bytes_cisa.meta += seqs * tk_bytes;

    // Setup: window and tail page IDs appended to each selection's sparse block table.
    KernelCost& su = f.setup;
    const double wt_ids = msp * static_cast<double>(W) + sums_all.sum_tail_pages;
    su.l2_bytes = su.dram_bytes = seqs * 2.0 * id * wt_ids;
    su.dram_write_bytes = seqs * id * wt_ids;
    // The host plans the step and uploads its descriptors: per selection a scoring row (5 int32)
    // and a top-k row (3 int32), per attention work item 9 int32 (this project's kernels/ layout).
    f.setup_h2d_bytes = f.selections * (5.0 + 3.0) * 4.0 + seqs * units * 9.0 * 4.0;
    su.launches = 1;
    su.ctas = static_cast<double>(sh.sms);
    f.bytes_cisa.meta += seqs * 2.0 * id * wt_ids;
  }

  // Other (CISA only): index projection iq_t = W_idx x_t for sparse positions, and the
  // representative update for chunks this forward completes (reads their keys, writes reps).
  {
    KernelCost& ot = f.other;
    const double sp_pos = static_cast<double>(positions - dense_n);
    double bytes = 0;
    if (sp_pos > 0) {
      const double w_idx = geo.kv_heads * d_r * geo.hidden * 2.0;  // once per forward
      const double x = static_cast<double>(batch) * sp_pos * geo.hidden * b_act;
      const double out = seqs * sp_pos * d_r * b_act;
      bytes += w_idx + x + out;
      ot.flops_useful += seqs * sp_pos * 2.0 * geo.hidden * d_r;
      ot.launches += 1;
    }
    const i64 filled = (start + positions) / c - start / c;
    if (filled > 0) {
      bytes += seqs * static_cast<double>(filled) *
               (static_cast<double>(c) * d * b_kv + d_r * b_rep * rep_vectors);
      ot.flops_useful += seqs * static_cast<double>(filled) * static_cast<double>(c) * d;
      ot.launches += 1;
    }
    ot.flops_issued = ot.flops_useful;
    ot.l2_bytes = ot.dram_bytes = bytes;
    ot.dram_write_bytes =
        (sp_pos > 0 ? seqs * sp_pos * d_r * b_act : 0.0) +
        seqs * static_cast<double>(std::max<i64>(0, filled)) * d_r * b_rep * rep_vectors;
    // cuBLAS computes the index projection [kv_heads*d_r] x [batch*positions] in 128 x 128 output
    // tiles (EST), so a skinny projection keeps only part of the SMs' tensor cores busy; with few
    // tiles it splits the reduction, so at least enough CTAs stream to saturate HBM (half the SMs).
    const double tiles = std::ceil(geo.kv_heads * d_r / 128.0) *
                         std::ceil(static_cast<double>(batch) * sp_pos / 128.0);
    ot.ctas = sp_pos > 0 ? std::max(tiles, std::ceil(0.5 * sh.sms)) : static_cast<double>(sh.sms);
    f.bytes_cisa.other = bytes;
  }
  return f;
}

}  // namespace cisa
