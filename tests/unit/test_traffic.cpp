// The time view of traffic: closed forms against hand-computed bytes and against a direct
// group-by-group loop on fresh random geometries.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <thread>

#include "catch.hpp"
#include "cisa_kernels/attention.hpp"
#include "cisa_kernels/scoring.hpp"
#include "cisa_kernels/topk.hpp"
#include "model/roofline.hpp"
#include "model/traffic.hpp"

using namespace cisa;
using i64 = std::int64_t;

namespace {

bool rel_close(double a, double b, double tol = 1e-9) {
  return std::fabs(a - b) <= tol * std::max({1.0, std::fabs(a), std::fabs(b)});
}

KernelShape shape(double h = 1.0) {
  KernelShape s;
  s.l2_reuse = h;
  s.sms = 132;
  return s;
}

// Small geometry for hand counts: r = 4, d = 8, c = 4, W = 2, K = 3.
Geometry tiny_geo() {
  Geometry g;
  g.q_heads = 4;
  g.kv_heads = 1;
  g.head_dim = 8;
  g.hidden = 16;
  return g;
}
CisaConfig tiny_cfg(int G) {
  CisaConfig c;
  c.chunk_tokens = 4;
  c.window_pages = 2;
  c.budget_chunks = 3;
  c.qshare_g = G;
  return c;
}

std::mt19937_64& rng() {
  static std::mt19937_64 r = [] {
    const auto seed = std::random_device{}();
    std::cout << "test_traffic random seed " << seed << "\n";
    return std::mt19937_64(seed);
  }();
  return r;
}
i64 uniform(i64 lo, i64 hi) { return std::uniform_int_distribution<i64>(lo, hi)(rng()); }

}  // namespace

TEST_CASE("floor_sum equals the direct sum", "[traffic]") {
  for (int trial = 0; trial < 2000; ++trial) {
    const i64 n = uniform(0, 300), m = uniform(1, 50), a = uniform(0, 200), b = uniform(0, 5000);
    i64 direct = 0;
    for (i64 i = 0; i < n; ++i) direct += (a * i + b) / m;
    REQUIRE(floor_sum(n, m, a, b) == direct);
  }
}

TEST_CASE("decode bytes by hand: L = 40, c = 4, W = 2, K = 3", "[traffic]") {
  // One position t = 39: N = 9 full pages, N_e = 7 > K, tail = 4 tokens (page 9).
  const ForwardCost f = forward_cost(tiny_geo(), tiny_cfg(1), 1, 39, 1, 1, shape());
  const double tok = 2 * 8 * 2;  // K+V bytes per token
  CHECK(f.bytes_dense.kv == 40 * tok);
  CHECK(f.bytes_cisa.kv == (3 * 4 + 2 * 4 + 4) * tok);  // selected + window + tail
  CHECK(f.bytes_cisa.rep == 7 * 8 * 2);                 // N_e reps of d_r = 8 in bf16
  CHECK(f.bytes_dense.meta == 4 * 40 / 4);              // block table entries read
  // sparse block table 4*(K+W+1) + index query 8*2 + scores 4*7 written + (4*7 read + 2*4*K IDs)
  // + setup 2*4*(W+1)
  CHECK(f.bytes_cisa.meta == 4 * 6 + 16 + 28 + (28 + 24) + 24);
  CHECK(f.bytes_dense.qo == 2 * 4 * 8 * 2);
  CHECK(f.selections == 1);
  CHECK(f.eligible_chunks_sum == 7);
  CHECK(f.splits_dense == 1);
  CHECK(f.attention_dense.flops_useful == 4.0 * 8 * 4 * 40);
  CHECK(f.attention_dense.flops_issued == 4.0 * 8 * 16 * 40);  // 4 rows padded to the smallest (16-row) tile
  CHECK(f.attention_dense.tile_rows == 16);
  CHECK(f.attention_dense.page_visits == 40.0 / 4);          // one work item streams 10 pages
}

TEST_CASE("prefill bytes by hand: two QShare groups share window and tail in L2", "[traffic]") {
  // Positions 36..39, G = 2: groups {36,37} and {38,39}, both with N = 9, N_e = 7 > K = 3.
  const double tok = 2 * 8 * 2;
  const ForwardCost f = forward_cost(tiny_geo(), tiny_cfg(2), 2, 36, 4, 1, shape(1.0));
  CHECK(f.l2_kv_cisa == (22 + 24) * tok);       // each group streams K c + W c + tail
  CHECK(f.bytes_cisa.kv == (22 + 2 + 12) * tok);  // the 2nd adds its 2 new tail tokens and its selection
  CHECK(f.bytes_dense.kv == 40 * tok);
  CHECK(f.bytes_cisa.rep == 7 * 8 * 2);         // one scoring tile: reps up to the last group's N_e

  // No L2 reuse: every request goes to DRAM.
  const ForwardCost g = forward_cost(tiny_geo(), tiny_cfg(2), 2, 36, 4, 1, shape(0.0));
  CHECK(g.bytes_cisa.kv == g.l2_kv_cisa);

  // Half of the second group's selection overlaps the first's.
  CisaConfig cfg = tiny_cfg(2);
  cfg.selection_overlap = 0.5;
  const ForwardCost o = forward_cost(tiny_geo(), cfg, 2, 36, 4, 1, shape(1.0));
  CHECK(o.bytes_cisa.kv == (22 + 2 + 6) * tok);
}

TEST_CASE("the first group past N_e > K splits a block into dense prefix and sparse suffix", "[traffic]") {
  // K = 3, W = 2, c = 4: sparse once floor(t0/4) >= 6, i.e. t0 >= 24.
  const ForwardCost f = forward_cost(tiny_geo(), tiny_cfg(2), 2, 16, 16, 1, shape());
  CHECK(f.dense_positions == 8);   // positions 16..23
  CHECK(f.sparse_positions == 8);  // 24..31 in 4 groups
  CHECK(f.selections == 4);
}

namespace {
// Direct loop over QShare groups with the same L2 model, for comparison with the closed forms.
struct Direct {
  double kv_req = 0, kv_dram = 0, rep_req = 0, sum_ne = 0, groups = 0, dense_n = 0, useful = 0;
};
Direct direct_cisa(const Geometry& geo, const CisaConfig& cfg, i64 G, i64 s, i64 n, double h, int M,
                   int Ms) {
  Direct d;
  const i64 c = cfg.chunk_tokens, W = cfg.window_pages, K = cfg.budget_chunks, r = geo.heads_per_group();
  const double tok = 2.0 * geo.head_dim * 2.0;
  std::vector<i64> ne_sparse;
  bool first = true;
  i64 dense_end = s;
  for (i64 t0 = s; t0 < s + n; t0 += G) {
    const i64 g = std::min(G, s + n - t0), t1 = t0 + g - 1, N = t0 / c, Ne = N - W;
    if (Ne <= K) {
      dense_end = t1 + 1;
      continue;
    }
    // whole positions a tile: floor(M / r) of them, or ceil(r / M) tiles a position when r > M
    const i64 ppt = r <= M ? std::max<i64>(1, M / r) : 1, tpp = r <= M ? 1 : (r + M - 1) / M;
    const i64 tail = t1 + 1 - N * c, tokens = K * c + W * c + tail, tiles = (g + ppt - 1) / ppt * tpp;
    d.kv_req += tok * static_cast<double>(tokens * tiles);
    double dram = first ? static_cast<double>(tokens)
                        : static_cast<double>(g) + (1 - h) * static_cast<double>(W * c + t0 % c) +
                              static_cast<double>(K * c) * (1 - cfg.selection_overlap * h);
    dram += static_cast<double>((tiles - 1) * tokens) * (1 - h);
    d.kv_dram += tok * dram;
    for (i64 t = t0; t <= t1; ++t) d.useful += 4.0 * geo.head_dim * static_cast<double>(r * (K * c + W * c + t + 1 - N * c));
    ne_sparse.push_back(Ne);
    d.sum_ne += static_cast<double>(Ne);
    d.groups += 1;
    first = false;
  }
  // Dense prefix, tiled like the dense kernel.
  const i64 dn = dense_end - s;
  if (dn > 0) {
    const i64 ppt = r <= M ? std::max<i64>(1, M / r) : 1;
    const i64 tpp = r <= M ? 1 : (r + M - 1) / M;  // tiles per position when r > M
    double req = 0, tiles = 0;
    for (i64 a = s; a < dense_end; a += ppt) {
      const i64 last = std::min(a + ppt, dense_end) - 1;
      req += tok * static_cast<double>((last + 1) * tpp);
      tiles += static_cast<double>(tpp);
      for (i64 t = a; t <= last; ++t) d.useful += 4.0 * geo.head_dim * static_cast<double>(r * (t + 1));
    }
    d.kv_req += req;
    // Work items of one stream in later waves of CTAs (132 SMs) read the history again.
    const double reads = tok * static_cast<double>(dense_end) * std::min(tiles, 1.0 + (tiles - 1.0) / 132.0);
    d.kv_dram += reads + (req - reads) * (1 - h);
  }
  d.dense_n = static_cast<double>(dn);
  for (std::size_t b = 0; b < ne_sparse.size(); b += static_cast<std::size_t>(Ms))
    d.rep_req += static_cast<double>(ne_sparse[std::min(ne_sparse.size(), b + static_cast<std::size_t>(Ms)) - 1]) *
                 geo.head_dim * 2.0;
  return d;
}
}  // namespace

TEST_CASE("closed forms equal a direct group loop on random geometries", "[traffic]") {
  for (int trial = 0; trial < 400; ++trial) {
    Geometry geo;
    geo.kv_heads = static_cast<int>(uniform(1, 3));
    geo.q_heads = geo.kv_heads * static_cast<int>(std::vector<i64>{1, 4, 10, 16, 32, 48, 128}[uniform(0, 6)]);
    geo.head_dim = 8 * static_cast<int>(uniform(1, 16));
    CisaConfig cfg;
    cfg.chunk_tokens = static_cast<int>(uniform(1, 32));
    cfg.window_pages = static_cast<int>(uniform(0, 40));
    cfg.budget_chunks = uniform(1, 200);
    cfg.selection_overlap = static_cast<double>(uniform(0, 10)) / 10.0;
    const i64 G = uniform(1, 40);
    const i64 n = uniform(1, 700);
    const i64 s = uniform(0, 20000);
    const int batch = static_cast<int>(uniform(1, 5));
    KernelShape sh = shape(static_cast<double>(uniform(0, 4)) / 4.0);
    sh.attention_tile_rows = static_cast<int>(std::vector<i64>{16, 64, 128}[uniform(0, 2)]);
    sh.score_tile_rows = static_cast<int>(uniform(1, 70));
    const ForwardCost f = forward_cost(geo, cfg, static_cast<int>(G), s, n, batch, sh);
    const Direct d = direct_cisa(geo, cfg, G, s, n, sh.l2_reuse, sh.attention_tile_rows, sh.score_tile_rows);
    const double seqs = batch * geo.kv_heads;
    INFO("trial " << trial << " G=" << G << " s=" << s << " n=" << n << " c=" << cfg.chunk_tokens
                  << " W=" << cfg.window_pages << " K=" << cfg.budget_chunks << " r=" << geo.heads_per_group());
    REQUIRE(rel_close(f.l2_kv_cisa, seqs * d.kv_req));
    REQUIRE(rel_close(f.bytes_cisa.kv, seqs * d.kv_dram));
    REQUIRE(rel_close(f.l2_rep, seqs * d.rep_req));
    REQUIRE(rel_close(f.eligible_chunks_sum, seqs * d.sum_ne));
    REQUIRE(rel_close(f.selections, seqs * d.groups));
    REQUIRE(rel_close(f.dense_positions, batch * d.dense_n));
    REQUIRE(rel_close(f.attention_cisa.flops_useful, seqs * d.useful));
  }
}

TEST_CASE("the kernel's tile rule: smallest power of two >= rows between 16 and the maximum", "[traffic]") {
  KernelShape sh;
  sh.attention_tile_rows = 128;
  sh.attention_min_tile_rows = 16;
  CHECK(attention_tile_for(1, sh) == 16);
  CHECK(attention_tile_for(16, sh) == 16);
  CHECK(attention_tile_for(17, sh) == 32);
  CHECK(attention_tile_for(64, sh) == 64);
  CHECK(attention_tile_for(65, sh) == 128);
  CHECK(attention_tile_for(1000, sh) == 128);
}

namespace {
// One KV head of 4 query heads, d = 128, W = 128 (the Inkling per-rank shape) with budget K.
Geometry inkling_geo() {
  Geometry g;
  g.q_heads = 4;
  g.kv_heads = 1;
  g.head_dim = 128;
  return g;
}
CisaConfig budget_cfg(std::int64_t k) {
  CisaConfig c;
  c.budget_chunks = k;
  c.window_pages = 128;
  return c;
}
}  // namespace

TEST_CASE("random selections shared in L2 only when the cache can hold them", "[traffic]") {
  const Geometry g = inkling_geo();
  const CisaConfig c = budget_cfg(2048);
  KernelShape sh;
  sh.l2_capacity_bytes = 0;  // no L2: every selection reads its pages
  const ForwardCost none = forward_cost(g, c, 4, 1 << 20, 512, 4, sh);
  sh.l2_capacity_bytes = 60e6;
  const ForwardCost some = forward_cost(g, c, 4, 1 << 20, 512, 4, sh);
  sh.l2_capacity_bytes = 1e12;  // a cache holding everything: each page read once per sequence
  const ForwardCost lots = forward_cost(g, c, 4, 1 << 20, 512, 4, sh);
  CHECK(some.bytes_cisa.kv < none.bytes_cisa.kv);
  CHECK(lots.bytes_cisa.kv < some.bytes_cisa.kv);
  // Requested bytes do not depend on the cache; DRAM bytes never exceed them.
  CHECK(some.l2_kv_cisa == none.l2_kv_cisa);
  CHECK(lots.bytes_cisa.kv <= lots.l2_kv_cisa);
  // With an unbounded cache the selected pages are the union of a sequence's 128 selections,
  // N_e (1 - (1 - K/N_e)^128) pages, plus windows and tails.
  const double ne = 65536 - 128, page = 16 * 2 * 128 * 2.0;
  const double uni = 4 * ne * page * (1 - std::pow(1 - 2048.0 / ne, 128));
  CHECK(lots.bytes_cisa.kv >= 0.98 * uni);
  CHECK(lots.bytes_cisa.kv <= uni + 4 * 128 * 140 * page);
}

namespace {
Rates test_rates() {
  Rates r{};
  r.basis = Basis::calibrated;
  r.read_bw_Bps = 4e12;
  r.write_bw_Bps = 2e12;
  r.gemm_flops = r.attention_flops = 500e12;
  r.attention_read_Bps = 4e12;
  r.scoring_read_bw_Bps = 4e12;
  r.scoring_write_bw_Bps = 2e12;
  r.launch_s = 4e-6;
  r.attention_floor_s = r.scoring_floor_s = r.topk_floor_s = r.projection_floor_s = 10e-6;
  r.setup_latency_s = 5e-6;
  r.setup_Bps = 50e9;
  r.topk_keys_per_s_per_sm = 1e9;
  r.topk_l2_keys_per_s_per_sm = 2e9;
  r.topk_ids_per_s_per_sm = 1e8;
  for (double& x : r.attention_page_s) x = 0.0;
  r.l2_capacity_bytes = 60e6;
  r.l2_reuse = 1.0;
  r.sms = 132;
  return r;
}
}  // namespace

TEST_CASE("roofline: reads and writes at their own rates, a floor per launch, page visits", "[roofline]") {
  const Rates r = test_rates();
  KernelCost k;
  k.dram_bytes = 6e9;
  k.dram_write_bytes = 2e9;
  k.ctas = 132;
  k.launches = 2;
  const ClassRates cls{r.read_bw_Bps, r.write_bw_Bps, 10e-6};
  CHECK(kernel_time(k, r.attention_flops, r, cls) == Approx(4e9 / 4e12 + 2e9 / 2e12 + 2 * 10e-6));
  // Fewer CTAs than keep HBM busy (half the SMs): bandwidth scales down with them.
  KernelCost few = k;
  few.ctas = 33;
  CHECK(kernel_time(few, r.attention_flops, r, cls) == Approx(2.0 * (4e9 / 4e12 + 2e9 / 2e12) + 2 * 10e-6));
  // Page visits served from L2: 132e6 visits x 100 ns / 132 SMs = 0.1 s binds.
  KernelCost pv = k;
  pv.page_visits = 132e6;
  ClassRates with_pages = cls;
  with_pages.page_s = 100e-9;
  CHECK(kernel_time(pv, r.attention_flops, r, with_pages) == Approx(0.1 + 2 * 10e-6));
  // A CTA's chain of 4 dependent load steps (2 us each) adds to the streaming time: fill/drain.
  KernelCost chain = k;
  chain.serial_steps = 4;
  ClassRates with_steps = cls;
  with_steps.step_s = 2e-6;
  CHECK(kernel_time(chain, r.attention_flops, r, with_steps) ==
        Approx(4e9 / 4e12 + 2e9 / 2e12 + 4 * 2e-6 + 2 * 10e-6));
}

TEST_CASE("roofline: setup is one host-to-device copy; top-k adds its output pass and reads scores from L2 when they fit", "[roofline]") {
  const Rates r = test_rates();
  ForwardCost f;
  f.setup.launches = 1;
  f.setup_h2d_bytes = 1e6;
  CHECK(setup_time(f, r) == Approx(5e-6 + 1e6 / 50e9));
  f.topk.launches = 1;
  f.topk_rows = 132;                // one wave
  f.eligible_chunks_sum = 132 * 1000.0;   // N_e = 1,000
  f.topk.dram_write_bytes = 132 * 4.0 * 500;  // K = 500 page IDs written per row
  f.topk.dram_bytes = f.topk.dram_write_bytes + 4.0 * f.eligible_chunks_sum;
  KernelShape sh;  // fp32 scores, 4 radix passes
  REQUIRE(topk_scores_in_l2(f, sh, r));  // 0.5 MB of scores
  CHECK(topk_time(f, sh, r) == Approx(1000.0 * 4 / 2e9 + 500 / 1e8 + 10e-6));
  f.eligible_chunks_sum = 132 * 100000.0;  // 53 MB of scores: past half the L2, read from DRAM
  REQUIRE_FALSE(topk_scores_in_l2(f, sh, r));
  CHECK(topk_time(f, sh, r) == Approx(100000.0 * 4 / 1e9 + 500 / 1e8 + 10e-6));
  sh.score_bytes = 2;  // 16-bit keys: the same scores fit in L2 again
  REQUIRE(topk_scores_in_l2(f, sh, r));
  // Scores in L2 never pass slower than from DRAM: an L2 figure below the DRAM-path rate (as the
  // decode-fitted one is on both Hoppers) prices them at the DRAM-path rate.
  f.eligible_chunks_sum = 132 * 1000.0;
  Rates slow_l2 = r;
  slow_l2.topk_l2_keys_per_s_per_sm = 0.5 * r.topk_keys_per_s_per_sm;
  CHECK(topk_time(f, sh, slow_l2) == Approx(1000.0 * 4 / 1e9 + 500 / 1e8 + 10e-6));
  CHECK(topk_time(f, sh, slow_l2) < topk_time(f, sh, [&] {
          Rates dram = slow_l2;
          dram.topk_l2_keys_per_s_per_sm = 0.25 * r.topk_keys_per_s_per_sm;
          dram.topk_keys_per_s_per_sm = 0.5 * r.topk_keys_per_s_per_sm;
          return dram;
        }()));
}

TEST_CASE("top-k CTAs per row: a 2-CTA cluster past 32,768 keys, 16,384-key slices when few rows fit", "[roofline]") {
  ForwardCost f;
  f.topk_rows = 16;
  f.eligible_chunks_sum = 16 * 65408.0;
  f.topk.dram_write_bytes = 16 * 4.0 * 4096;
  KernelShape sh;  // 132 SMs
  CHECK(topk_work(f, sh).ctas == 16);  // no cluster, no slices: one CTA per row
  sh.topk_cluster_above = 32768;
  CHECK(topk_work(f, sh).ctas == 32);
  sh.topk_few_rows_slice = 16384;
  const TopkWork w = topk_work(f, sh);
  CHECK(w.ctas == 64);  // 4 slices per row, 64 CTAs <= 132 SMs
  CHECK(w.keys_per_cta == Approx(65408.0 / 4));
  CHECK(w.ids_per_cta == Approx(4096.0 / 4));
  f.topk_rows = 64;  // 256 CTAs would not fit one per SM: back to the 2-CTA cluster
  f.eligible_chunks_sum = 64 * 65408.0;
  CHECK(topk_work(f, sh).ctas == 128);
  f.topk_rows = 40;  // 40 x 2 slices of 16,384 fit: 2 per row either way
  f.eligible_chunks_sum = 40 * 30000.0;
  CHECK(topk_work(f, sh).ctas == 80);
}

TEST_CASE("top-k waves: co-resident CTAs share a wave; the busiest SM carries their keys and IDs", "[roofline]") {
  ForwardCost f;
  f.topk_rows = 8192;
  f.eligible_chunks_sum = 8192 * 8080.0;
  f.topk.dram_write_bytes = 8192 * 4.0 * 4226;
  f.topk.launches = 1;
  KernelShape sh;  // 132 SMs
  sh.topk_radix_passes = 2;
  TopkWork w = topk_work(f, sh);
  CHECK(w.waves == 63);  // one CTA per SM: ceil(8192 / 132)
  CHECK(w.per_sm == 1);
  sh.topk_ctas_per_sm = 2;
  w = topk_work(f, sh);
  CHECK(w.waves == 32);  // ceil(8192 / 264)
  CHECK(w.per_sm == 2);  // ceil(8192 / (132 x 32)) = 2
  const TopkTerms t = topk_terms(w, sh);
  CHECK(t.key_passes == Approx(32 * 2 * 8080.0 * 2));
  CHECK(t.ids == Approx(32 * 2 * 4226.0));
  CHECK(t.cluster_waves == 0);
  // One wave of 128 rows: one CTA per SM although two could share one.
  f.topk_rows = 128;
  f.eligible_chunks_sum = 128 * 8080.0;
  f.topk.dram_write_bytes = 128 * 4.0 * 4226;
  w = topk_work(f, sh);
  CHECK(w.waves == 1);
  CHECK(w.per_sm == 1);
  // The time: floor + the terms at the rates (the memory bound far below here).
  Rates r;
  r.sms = 132;
  r.read_bw_Bps = 4e12;
  r.bw_saturation_sm_fraction = 0.5;
  r.topk_keys_per_s_per_sm = 8e9;
  r.topk_l2_keys_per_s_per_sm = 8e9;
  r.topk_ids_per_s_per_sm = 1e9;
  r.topk_cta_s = 4e-6;
  r.topk_cluster_s = 1e-6;
  r.topk_floor_s = 6e-6;
  f.topk.dram_bytes = 1e6;
  f.topk_rows = 32;  // 4-CTA clusters: three other CTAs to merge with
  f.eligible_chunks_sum = 32 * 65408.0;
  f.topk.dram_write_bytes = 32 * 4.0 * 4226;
  sh.topk_few_rows_slice = 16384;
  sh.topk_cluster_above = 32768;
  w = topk_work(f, sh);
  REQUIRE(w.cluster == 4);
  CHECK(topk_time(f, sh, r) == Approx(6e-6 + 4e-6 + 3 * 1e-6 + 65408.0 / 4 * 2 / 8e9 + 4226.0 / 4 / 1e9));
  // The per-CTA form (a card that measured it): each CTA of the cluster pays the row's whole list
  // per wave, so the output pass does not shrink with the cluster (the phase clocks at four K).
  const TopkTerms t4 = topk_terms(w, sh);
  CHECK(t4.row_ids == Approx(4226.0));
  CHECK(t4.ids == Approx(4226.0 / 4));
  r.topk_ids_per_s_per_cta = 2e9;
  CHECK(topk_id_time(t4, r) == Approx(4226.0 / 2e9));
  CHECK(topk_time(f, sh, r) == Approx(6e-6 + 4e-6 + 3 * 1e-6 + 65408.0 / 4 * 2 / 8e9 + 4226.0 / 2e9));
  // Two waves of 2-CTA clusters, two CTAs an SM: waves x the row's list, whatever shares the SM.
  f.topk_rows = 256;
  f.eligible_chunks_sum = 256 * 65408.0;
  f.topk.dram_write_bytes = 256 * 4.0 * 4226;
  const TopkWork w2 = topk_work(f, sh);
  REQUIRE(w2.cluster == 2);
  REQUIRE(w2.waves == 2);
  CHECK(topk_terms(w2, sh).row_ids == Approx(2 * 4226.0));
  CHECK(topk_terms(w2, sh).ids == Approx(2 * 2 * 4226.0 / 2));
}

TEST_CASE("a sequence's selections read at least the union of their picks once per wave of CTAs", "[traffic]") {
  const Geometry g = inkling_geo();
  const CisaConfig c = budget_cfg(4096);
  KernelShape sh;
  sh.sms = 132;
  sh.l2_capacity_bytes = 60e6;  // the H200's L2: a 128K sequence's pages (66 MB) just do not fit
  // 128K context, G = 1: 512 selections per sequence with K / N_e ~ 0.5 span 1 + 511/132 waves.
  const ForwardCost f = forward_cost(g, c, 1, 131072 - 512, 512, 2, sh);
  const double ne = 131072.0 / 16 - 128 - 16, page = 16 * 2 * 128 * 2.0;
  const double waves = 1.0 + 511.0 / 132.0;
  const double per_wave = ne * (1.0 - std::pow(1.0 - 4096.0 / ne, 512.0 / waves));
  CHECK(f.bytes_cisa.kv >= 2 * 0.99 * waves * per_wave * page);  // two sequences
  // Without eviction between waves (an L2 far larger than the sequence) one union suffices.
  sh.l2_capacity_bytes = 1e12;
  const ForwardCost big = forward_cost(g, c, 1, 131072 - 512, 512, 2, sh);
  CHECK(big.bytes_cisa.kv < 0.5 * f.bytes_cisa.kv);
}

// dense_forward_cost keeps recent results per thread, keyed without the budget, G, window, overlap
// and representatives: this holds only while the dense traffic does not read them. Each value is
// computed on a fresh thread (an empty cache), on random configurations.
TEST_CASE("the dense cost does not depend on CISA's knobs (its cache key leaves them out)", "[traffic]") {
  std::mt19937 g(std::random_device{}());
  auto fresh = [](const Geometry& geo, const CisaConfig& cfg, int G, i64 start, i64 n, int batch, const KernelShape& sh) {
    ForwardCost f;
    std::thread t([&] { f = dense_forward_cost(geo, cfg, G, start, n, batch, sh); });
    t.join();
    return f;
  };
  for (int trial = 0; trial < 40; ++trial) {
    Geometry geo;
    geo.kv_heads = 1 + static_cast<int>(g() % 4);
    geo.q_heads = geo.kv_heads * (1 + static_cast<int>(g() % 12));
    CisaConfig a;
    a.budget_chunks = 64 + g() % 4096;
    a.window_pages = static_cast<int>(g() % 256);
    a.qshare_g = 1 + static_cast<int>(g() % 32);
    CisaConfig b = a;
    b.budget_chunks = 64 + g() % 4096;
    b.window_pages = static_cast<int>(g() % 256);
    b.selection_overlap = 0.3;
    b.rep_dim = 64;
    b.rep_kind = RepKind::minmax;
    b.score_agg = ScoreAgg::max;
    KernelShape sh = shape(g() % 2 ? 1.0 : 0.5);
    sh.gqa_packing = g() % 2;
    sh.split_kv = g() % 3 == 0 ? SplitKv::fa2 : SplitKv::always;
    const i64 L = 8192 + static_cast<i64>(g() % 500000), n = 1 + static_cast<i64>(g() % 2048);
    const int batch = 1 + static_cast<int>(g() % 16), Gb = 1 + static_cast<int>(g() % 32);
    const ForwardCost fa = fresh(geo, a, a.qshare_g, L - n, n, batch, sh);
    const ForwardCost fb = fresh(geo, b, Gb, L - n, n, batch, sh);
    const ForwardCost cached = dense_forward_cost(geo, b, Gb, L - n, n, batch, sh);
    for (const ForwardCost* f : {&fb, &cached}) {
      CHECK(f->attention_dense.dram_bytes == fa.attention_dense.dram_bytes);
      CHECK(f->attention_dense.dram_write_bytes == fa.attention_dense.dram_write_bytes);
      CHECK(f->attention_dense.l2_bytes == fa.attention_dense.l2_bytes);
      CHECK(f->attention_dense.flops_issued == fa.attention_dense.flops_issued);
      CHECK(f->attention_dense.flops_useful == fa.attention_dense.flops_useful);
      CHECK(f->attention_dense.ctas == fa.attention_dense.ctas);
      CHECK(f->attention_dense.page_visits == fa.attention_dense.page_visits);
      CHECK(f->attention_dense.tile_rows == fa.attention_dense.tile_rows);
      CHECK(f->bytes_dense.total() == fa.bytes_dense.total());
      CHECK(f->splits_dense == fa.splits_dense);
      CHECK(f->l2_kv_dense == fa.l2_kv_dense);
    }
  }
}

// The `waves` split policy mirrors kernels/src/attention.cu attention_wave_plan (its host test
// test_wave_splits holds the same cases): 256 works of 128 rows stay whole; of 2,048 works of
// 16,384 tiles on 132 slots, the 1,980 in whole waves stay whole and the last 68 split 15 ways.
TEST_CASE("waves: a large grid splits the KV length only to fill its last wave", "[traffic]") {
  CisaConfig cfg;
  KernelShape sh = shape(1.0);
  const i64 L = (i64(1) << 20) + 512;
  auto splits = [&](int q_heads, SplitKv policy) {
    Geometry geo;
    geo.q_heads = q_heads;
    geo.kv_heads = 1;
    sh.split_kv = policy;
    return dense_forward_cost(geo, cfg, 1, L - 512, 512, 16, sh).splits_dense;
  };
  CHECK(splits(4, SplitKv::waves) == 1);   // dense Inkling: 16 x 16 works of 32 positions
  CHECK(splits(32, SplitKv::waves) == 15);  // dense Ultra: 16 x 128 works of 4 positions
  CHECK(splits(32, SplitKv::always) == 1);
  // Split pieces write partials: the split grid moves more bytes than the whole one.
  Geometry ultra;
  ultra.q_heads = 32;
  sh.split_kv = SplitKv::waves;
  const ForwardCost w = dense_forward_cost(ultra, cfg, 1, L - 512, 512, 16, sh);
  sh.split_kv = SplitKv::always;
  const ForwardCost a = dense_forward_cost(ultra, cfg, 1, L - 512, 512, 16, sh);
  CHECK(w.bytes_dense.partials > 0);
  CHECK(a.bytes_dense.partials == 0);
  CHECK(a.attention_dense.ctas == 2048);
  CHECK(w.attention_dense.ctas == 1980 + 68 * 15);
  // Only the 68 tail works write partials: 2 x 15 pieces x 128 rows x (128 + 2) fp32 each.
  CHECK(w.bytes_dense.partials == Approx(68.0 * 2 * 15 * 128 * 130 * 4));
  // Its SM fill: 15 whole waves, then 68 x 15 pieces of 1/15 the work in ceil(1,020 / 132) = 8
  // waves of 1/15 the length (not the 23 whole waves 3,000 alike CTAs would take).
  CHECK(w.attention_dense.wave_fill == Approx(2048.0 / ((15.0 + 8.0 / 15.0) * 132.0)));
  CHECK(a.attention_dense.wave_fill == 0);  // CTAs alike: the roofline's ctas / (waves x SMs)
  {
    // The roofline takes it: a compute-bound grid of 560 CTAs, 528 whole and 32 sixteenth pieces
    // (held-out v33's dense r 11 point), runs in 4 + 1/16 waves, not ceil(560 / 132) = 5.
    Rates rates;
    rates.sms = 132;
    rates.read_bw_Bps = rates.write_bw_Bps = 4e12;
    rates.bw_saturation_sm_fraction = 0.5;
    KernelCost k;
    k.launches = 1;
    k.ctas = 560;
    k.flops_issued = 1e12;
    const ClassRates cls{4e12, 4e12, 0.0};
    CHECK(kernel_time(k, 1e15, rates, cls) == Approx(1e-3 * 5 * 132 / 560));
    k.wave_fill = 530.0 / ((4 + 1.0 / 16) * 132);
    CHECK(kernel_time(k, 1e15, rates, cls) == Approx(1e-3 * (4 + 1.0 / 16) * 132 / 530));
  }
  // CISA Ultra G 4 (K 4,096, W 128): 2,048 works of 1,057 tiles, the last 68 in 5 pieces.
  CisaConfig c4;
  c4.budget_chunks = 4096;
  c4.window_pages = 128;
  c4.qshare_g = 4;
  sh.split_kv = SplitKv::waves;
  const ForwardCost g4 = forward_cost(ultra, c4, 4, L - 512, 512, 16, sh);
  CHECK(g4.splits_cisa == 5);
  CHECK(g4.attention_cisa.ctas == Approx(1980 + 68 * 5));
}

// The descriptor blob of kernels/src/cisa_step.cu: four sections padded to 256 bytes, of the
// kernels' own structs (a field added to one of them changes the copy the model prices: session 10's
// three AttnWork fields went unnoticed until held-out v10's small decode copies). A decode step of
// 5 (sequence, KV head) pairs fits 1,024 bytes; 6 need a 512-byte work section.
TEST_CASE("setup: the descriptor blob's layout and the small-copy latency", "[traffic]") {
  CHECK(kScoreRowBytes == sizeof(cisa::kernels::ScoreRow));
  CHECK(kScoreGroupBytes == sizeof(cisa::kernels::ScoreGroup));
  CHECK(kTopkRowBytes == sizeof(cisa::kernels::TopkRow));
  CHECK(kAttnWorkBytes == sizeof(cisa::kernels::AttnWork));
  CHECK(descriptor_blob_bytes(0, 0, 0) == 256);
  CHECK(descriptor_blob_bytes(5, 5, 5) == 1024);
  CHECK(descriptor_blob_bytes(6, 6, 6) == 1280);
  CHECK(descriptor_blob_bytes(7, 7, 7) == 1280);
  CHECK(descriptor_blob_bytes(64, 64, 64) == 1280 + 1280 + 768 + 3072);
  Rates r;
  r.setup_latency_s = 7.5e-6;
  r.setup_small_latency_s = 3.6e-6;
  r.setup_Bps = 55e9;
  r.setup_inline_bytes = 1024;
  ForwardCost f;
  f.setup.launches = 1;
  f.setup_h2d_bytes = 1024;
  CHECK(setup_time(f, r) == Approx(3.6e-6 + 1024 / 55e9));
  f.setup_h2d_bytes = 1280;
  CHECK(setup_time(f, r) == Approx(7.5e-6 + 1280 / 55e9));
  // Two forwards (full prefill): two copies, each priced by its own size.
  f.setup.launches = 2;
  f.setup_h2d_bytes = 2048;
  CHECK(setup_time(f, r) == Approx(2 * 3.6e-6 + 2048 / 55e9));
  // No inline size: every copy at the step latency.
  r.setup_inline_bytes = 0;
  CHECK(setup_time(f, r) == Approx(2 * 7.5e-6 + 2048 / 55e9));
}

#ifdef CISA_HAVE_KERNEL_PLAN
#include "cisa_kernels/cisa_step.hpp"

TEST_CASE("setup: the model's descriptor blob equals the kernels' plan, any r and G", "[traffic]") {
  // The blob counts score rows, score groups and attention work items; the kernels' plan cuts a
  // group's positions into works of floor(128 / r) whole positions. Fresh random geometries, many
  // with r not dividing 128 and G r > 128 (held-out v15: r = 10, G = 25 is three works, not two).
  for (int trial = 0; trial < 60; ++trial) {
    const int r = static_cast<int>(uniform(1, 40)), kv = static_cast<int>(uniform(1, 3));
    const int G = static_cast<int>(uniform(1, 32)), K = static_cast<int>(uniform(8, 200));
    const int W = static_cast<int>(uniform(1, 16)), batch = static_cast<int>(uniform(1, 3));
    // Every position sparse. On the dense path the plan and the model part ways (NOTES session 15):
    // the plan makes one dense work list per QShare group inside the attention launch, the model
    // tiles the dense positions together in a launch of their own; and a group crossing the onset
    // is split at the exact position by the plan (method section 2), kept whole by the model.
    const i64 onset = static_cast<i64>(K + W + 1) * 16, positions = uniform(1, 300);
    const i64 start = onset + uniform(0, 4000);
    Geometry geo;
    geo.q_heads = r * kv;
    geo.kv_heads = kv;
    geo.head_dim = 128;
    geo.hidden = 1024;
    CisaConfig cfg;
    cfg.chunk_tokens = 16;
    cfg.window_pages = W;
    cfg.budget_chunks = K;
    cfg.qshare_g = G;
    const ForwardCost f = forward_cost(geo, cfg, G, start, positions, batch, shape());
    kernels::StepBatch b;
    b.history.assign(static_cast<std::size_t>(batch), static_cast<int>(start));
    b.new_tokens.assign(static_cast<std::size_t>(batch), static_cast<int>(positions));
    b.kv_heads = kv;
    b.r = r;
    kernels::StepConfig c;
    c.window_pages = W;
    c.budget = K;
    c.qshare_g = G;
    const kernels::CisaPlan plan = kernels::plan_cisa_step(b, c);
    REQUIRE(plan.score_rows.size() == static_cast<std::size_t>(f.selections));
    INFO("r " << r << " kv " << kv << " G " << G << " K " << K << " W " << W << " batch " << batch
              << " start " << start << " positions " << positions << " works " << plan.work.size());
    CHECK(f.setup_h2d_bytes == descriptor_blob_bytes(static_cast<double>(plan.score_rows.size()),
                                                     static_cast<double>(plan.score_groups.size()),
                                                     static_cast<double>(plan.work.size())));
  }
}
#endif
