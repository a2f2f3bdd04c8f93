// GPU tests of every kernel against the CPU references (fresh random inputs each run, printed seed;
// poisoned outputs; ragged lengths; r in {4,16,32}; G in {1,4,16,32}; K >= N_e; planted pages).
// Exits 77 (CTest: skipped) with the reason printed when no CUDA device is usable.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <map>
#include <numeric>
#include <set>

#include "cisa_kernels/cisa_step.hpp"
#include "cisa_kernels/reference.hpp"
#include "cisa_kernels/representatives.hpp"
#include "harness.cuh"

using namespace cisa::kernels;
using harness::DevBuf;

namespace {

int g_fail = 0, g_checks = 0;
int g_early_launches = 0;  // direct paged_attention launches that took the early part

void expect(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok) {
    ++g_fail;
    std::printf("FAIL: %s\n", what.c_str());
  }
}

double rel_err(const std::vector<float>& a, const std::vector<float>& ref, const std::vector<char>* use = nullptr,
               bool* nan = nullptr) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (use && !(*use)[i]) continue;
    if (std::isnan(a[i]) || std::isinf(a[i])) {
      if (nan) *nan = true;
      continue;
    }
    num += (double(a[i]) - ref[i]) * (double(a[i]) - ref[i]);
    den += double(ref[i]) * ref[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

std::mt19937_64 g_rng;

void test_representatives() {
  const int kvh = 2;
  const long long np = 777;
  const size_t n = np * 16 * kvh * 128;
  DevBuf<bf16_bits> k(n), reps(np * kvh * 128);
  harness::fill_normal(k.p, n, g_rng(), 1.0f);
  reps.poison();
  PagedKV kv{k.p, k.p, np, kvh};
  rebuild_representatives(kv, reps.p, nullptr);
  HCHECK(cudaDeviceSynchronize());
  const auto hk = k.download();
  PagedKV hkv{hk.data(), hk.data(), np, kvh};
  const auto ref = ref::representatives(hkv);
  bool nan = false;
  const double e = rel_err(harness::to_float(reps.download()), ref, nullptr, &nan);
  std::printf("representatives rebuild: rel err %.3g\n", e);
  expect(!nan && e < 5e-3, "representatives rebuild");
  // incremental: poison, update a subset, check that subset
  reps.poison();
  std::vector<int> ids = {5, 0, 776, 300, 42};
  DevBuf<int> dids(ids);
  update_representatives(kv, dids.p, static_cast<int>(ids.size()), reps.p, nullptr);
  HCHECK(cudaDeviceSynchronize());
  const auto got = harness::to_float(reps.download());
  std::vector<char> use(got.size(), 0);
  for (int id : ids)
    for (int i = 0; i < kvh * 128; ++i) use[static_cast<size_t>(id) * kvh * 128 + i] = 1;
  nan = false;
  const double e2 = rel_err(got, ref, &use, &nan);
  std::printf("representatives update: rel err %.3g\n", e2);
  expect(!nan && e2 < 5e-3, "representatives update");
}

// Top-k on its own, fp32 scores and 16-bit keys: random rows at full size, heavy ties (quantised
// scores), all-equal rows, K close to N, a ragged batch of rows (clusters of 4 with short and empty
// slices), every launch shape of topk_plan (1-4 CTAs per row, 16,384 or 32,768 keys per CTA), a score
// stride that is not a multiple of the 16-byte vector (unaligned rows), against the reference with its
// tie rule (lower index first). Outputs poisoned; fresh random inputs per run.
void check_topk(const std::string& name, const std::vector<std::vector<float>>& sc, int stride, int k, bool keys16,
                const std::vector<int>& ids, const DevBuf<int>& dtab) {
  const int nr = static_cast<int>(sc.size());
  std::vector<TopkRow> rows;
  std::vector<float> host(static_cast<size_t>(nr) * stride, 0.0f);
  std::vector<std::uint16_t> hkeys(host.size(), 0);
  int extra = 0;
  for (int i = 0; i < nr; ++i) {
    const int n = static_cast<int>(sc[static_cast<size_t>(i)].size());
    const int add = std::min(3, static_cast<int>(ids.size()) - n);
    extra = std::max(extra, add);
    rows.push_back(TopkRow{0, n, n + add});
    for (int j = 0; j < n; ++j) {
      const float x = sc[static_cast<size_t>(i)][static_cast<size_t>(j)];
      host[static_cast<size_t>(i) * stride + j] = keys16 ? score_from_key16(score_key16(x)) : x;
      hkeys[static_cast<size_t>(i) * stride + j] = score_key16(x);
    }
  }
  DevBuf<float> ds(host);
  DevBuf<std::uint16_t> dk(hkeys);
  DevBuf<TopkRow> dr(rows);
  const int ostride = k + extra;
  DevBuf<int> dout(static_cast<size_t>(nr) * ostride);
  dout.poison();
  TopkArgs a;
  if (keys16)
    a.score_keys = dk.p;
  else
    a.scores = ds.p;
  a.score_stride = stride;
  a.rows = dr.p;
  a.table = BlockTable{dtab.p, static_cast<int>(ids.size())};
  a.out = dout.p;
  a.out_stride = ostride;
  a.k = k;
  a.rows_host = &rows;
  topk_select(a, nullptr);
  HCHECK(cudaDeviceSynchronize());
  const auto got = dout.download();
  BlockTable ht{ids.data(), static_cast<int>(ids.size())};
  size_t mism = 0;
  for (int i = 0; i < nr; ++i) {
    const auto want = ref::sparse_row(host.data() + static_cast<size_t>(i) * stride, rows[static_cast<size_t>(i)], k, ht);
    for (size_t j = 0; j < want.size(); ++j) mism += got[static_cast<size_t>(i) * ostride + j] != want[j];
  }
  const std::string tag = "topk " + name + (keys16 ? " (16-bit keys)" : " (fp32)");
  int max_ne = 0;
  for (const auto& r : rows) max_ne = std::max(max_ne, r.n_e);
  const TopkPlan plan = topk_plan(max_ne, nr, keys16);
  std::printf("%s: %d rows, cluster %d x %d keys, mismatches %zu\n", tag.c_str(), nr, plan.cluster, plan.slice, mism);
  expect(mism == 0, tag);
}

// The wave-filling KV split (host policy of the launches with many equal works): no split when
// the waves are already full or the last wave is nearly full (dense Inkling prefill and CISA g32:
// 256 works on 132 SMs); otherwise the works past the last whole wave split into the slots left
// (tail split: CISA Ultra g4, 2,048 works of 1,057 tiles; dense Ultra, 2,048 of 16,384; 140 works),
// the tail then taking about its share of a wave.
void test_wave_splits() {
  auto plan = [](int n, int tiles) { return attention_wave_plan(n, 132, tiles); };
  expect(plan(264, 16384).splits == 1, "wave split: full waves");
  expect(plan(256, 16384).splits == 1, "wave split: last wave 94 % full");
  expect(plan(256, 1057).splits == 1, "wave split: last wave 94 % full (CISA g32)");
  for (auto [n, tiles] : {std::pair{2048, 1057}, std::pair{2048, 16384}, std::pair{140, 16384}}) {
    const WaveSplit w = plan(n, tiles);
    const int k = n - w.n_full;
    const double sub = static_cast<double>(k) * w.splits / 132.0;
    std::printf("wave split: %d works of %d tiles on 132 slots -> %d whole + %d x %d splits (%.3f sub-waves)\n", n,
                tiles, w.n_full, k, w.splits, sub);
    // the tail's sub-waves take at most 0.1 wave more than its works' share of one wave
    expect(w.splits > 1 && w.n_full == n / 132 * 132 && std::ceil(sub) / w.splits <= k / 132.0 + 0.1 &&
               attention_wave_splits(n, 132, tiles) == w.splits,
           "wave split: tail split fills its sub-waves");
  }
}

void test_topk() {
  const int maxn = 65536;
  std::vector<int> ids(maxn);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), g_rng);
  DevBuf<int> dtab(ids);
  std::normal_distribution<float> nd(0.f, 1.f);
  auto row = [&](int n, int kind) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) {
      const float z = nd(g_rng);
      x = kind == 0 ? z : kind == 1 ? std::round(z * 2.0f) / 2.0f : 1.5f;
    }
    return v;
  };
  struct R { int n, k, kind; };
  const std::vector<R> single = {{65536, 4096, 0}, {65536, 4096, 1}, {10000, 100, 2}, {5000, 4999, 0}, {777, 13, 1},
                                 {40000, 4096, 2}, {30000, 2048, 0},
                                 {30000, 20000, 1},   // more selected than the 4,096 staged per CTA
                                 {65536, 60000, 1},   // K close to N (4 CTAs, each over its staged list)
                                 {40001, 4096, 1}};   // 3 CTAs of 16,384, the last one short, ties
  for (bool k16 : {false, true}) {
    for (const auto& c : single)
      check_topk("n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " kind=" + std::to_string(c.kind),
                 {row(c.n, c.kind)}, (c.n + 7) / 8 * 8, c.k, k16, ids, dtab);
    // ragged batch: cluster of 4 (16,384 per CTA); rows whose last CTAs get short or empty slices
    check_topk("ragged 6 rows", {row(65536, 0), row(40000, 1), row(16385, 0), row(16384, 0), row(4200, 0), row(65531, 0)},
               65536, 4096, k16, ids, dtab);
    // short rows beside a full one: 4 CTAs per row, a short row's last CTAs get empty slices
    check_topk("ragged short", {row(65536, 1), row(20, 0), row(777, 1), row(8193, 2)}, 65536, 13, k16, ids, dtab);
    // every launch shape of topk_plan at 65,536 keys per row (CTAs per row, keys and threads per
    // CTA), each with the fewest rows that take it (4 CTAs of 16,384 for a few rows; 2 of 32,768 with
    // 1,024 threads (16-bit keys) while that is one CTA per SM, with 512 beyond): rows of different
    // N_e (65,536, 40,001 and 65,531: slices not a multiple of the vector, a short last slice), ties
    // (and -0.0 beside +0.0) in every other row, K = 4,096 and K close to the shortest row (its
    // threshold in the tied zero bin); more rows than clusters resident (a second wave, prefetched);
    // and 20 tied rows of 50,000 (4 CTAs of 12,500)
    {
      std::vector<std::string> seen;
      for (int nr = 1; nr <= 400; ++nr) {
        const TopkPlan p = topk_plan(65536, nr, k16);
        const std::string shape = std::to_string(p.cluster) + "x" + std::to_string(p.slice) + "/" +
                                  std::to_string(p.threads);
        if (std::find(seen.begin(), seen.end(), shape) != seen.end()) continue;
        seen.push_back(shape);
        std::vector<std::vector<float>> rs;
        for (int i = 0; i < nr; ++i) rs.push_back(row(i % 3 == 0 ? 65536 : i % 3 == 1 ? 40001 : 65531, i % 2));
        check_topk(std::to_string(nr) + " rows of <= 65536 (" + shape + ")", rs, 65536, 4096, k16, ids, dtab);
        check_topk(std::to_string(nr) + " rows of <= 65536 (" + shape + "), K 39000", rs, 65536, 39000, k16, ids,
                   dtab);
      }
    }
    {  // more clusters than are resident: a second wave (its slices prefetched into L2 by the first)
      int nr = 67;
      while (nr < 2000 && nr <= topk_plan(65536, nr, k16).resident_clusters) nr += 20;
      std::vector<std::vector<float>> rs;
      for (int i = 0; i < nr; ++i) rs.push_back(row(i % 3 == 0 ? 65536 : i % 3 == 1 ? 40001 : 65531, i % 2));
      check_topk(std::to_string(nr) + " rows of <= 65536, two waves", rs, 65536, 4096, k16, ids, dtab);
    }
    {
      std::vector<std::vector<float>> rs;
      for (int i = 0; i < 20; ++i) rs.push_back(row(50000, 1));
      check_topk("20 rows n=50000", rs, 50000, 4096, k16, ids, dtab);
    }
    {  // the K-th key in the lowest bin of the 16-bit keys' second digit (the last lane of the warp
       // merge, session 7): 60,000 keys of 1.0 below 5,536 spread over (1, 1.25), i.e. over the
       // other 31 bins of that digit; K 10,000 takes 4,464 of the tied 1.0s (lower indices first);
       // a few rows (4 CTAs of 16,384 per row) and 70 rows (2 of 32,768)
      for (int nr : {3, 70}) {
        std::vector<std::vector<float>> rs;
        for (int i = 0; i < nr; ++i) {
          std::vector<float> v(65536, 1.0f);
          for (int j = 0; j < 5536; ++j)
            v[static_cast<size_t>((j * 11 + i) % 65536)] = 1.0f + 0.25f * static_cast<float>(1 + (j + i) % 31) / 32.0f;
          rs.push_back(std::move(v));
        }
        check_topk(std::to_string(nr) + " rows, K-th key in the lowest second-digit bin", rs, 65536, 10000, k16, ids,
                   dtab);
      }
    }
    // rows that do not start on 16 bytes
    check_topk("stride 5001", {row(5001, 0), row(4999, 1), row(5001, 0)}, 5001, 700, k16, ids, dtab);
    check_topk("stride 40001", {row(40001, 0), row(39999, 1)}, 40001, 4096, k16, ids, dtab);
    {  // unaligned rows on the many-row shape (fp32: 24-bit keys in shared memory, two CTAs per SM)
      std::vector<std::vector<float>> rs;
      for (int i = 0; i < 140; ++i) rs.push_back(row(i % 2 ? 39999 : 40001, i % 3 == 0));
      check_topk("140 rows, stride 40001", rs, 40001, 4096, k16, ids, dtab);
    }
  }
}

// Prefill scoring on its own, long groups (session 7): about 1,000 tiles over groups of 65-128 rows
// and of <= 64 rows (the two launch shapes), launched with PDL after the query sums (one thread per
// row and 16-byte chunk), short groups (one
// tile, a few tiles), an empty group, a one-row group, ragged n_e inside groups (a few long rows, the
// rest short: the CPU reference stays cheap), 2 KV heads. Keys past each row's n_e must stay unwritten.
void test_scoring_long(bool wide, bool logical = false) {
  const int kvh = 2;
  const long long np = 200000;
  std::uniform_int_distribution<int> pid_d(0, static_cast<int>(np) - 1);
  // (seq, kv head, rows, max n_e); rows sorted by (seq, kv head)
  struct G {
    int seq, kv, rows, max_ne;
  };
  const std::vector<G> gs =
      wide ? std::vector<G>{{0, 0, 100, 20000}, {0, 1, 70, 20000}, {1, 0, 128, 150}, {1, 1, 5, 0},
                            {2, 0, 1, 700}, {2, 1, 90, 5000}, {3, 0, 65, 64}, {3, 1, 80, 15000}}
           : std::vector<G>{{0, 0, 64, 20000}, {0, 1, 16, 20000}, {1, 0, 3, 150}, {1, 1, 5, 0},
                            {2, 0, 1, 700}, {2, 1, 40, 5000}, {3, 0, 17, 64}, {3, 1, 33, 15000}};
  const int n_seq = 4, stride = 20000 + 8;
  std::vector<int> tab(static_cast<size_t>(n_seq) * stride);
  for (auto& x : tab) x = pid_d(g_rng);
  std::vector<ScoreRow> rows;
  const int T = 64;
  std::uniform_int_distribution<int> tok_d(0, T - 4), nq_d(1, 4);
  for (const auto& g : gs) {
    for (int i = 0; i < g.rows; ++i) {
      ScoreRow r;
      r.seq = g.seq;
      r.kv_head = g.kv;
      r.q_tok0 = tok_d(g_rng);
      r.n_q = nq_d(g_rng);
      // row 0 and every 13th row long (row 0 at the group's max), the rest short
      if (g.max_ne == 0)
        r.n_e = 0;
      else if (i == 0)
        r.n_e = g.max_ne;
      else if (i % 13 == 0)
        r.n_e = std::uniform_int_distribution<int>(1, g.max_ne)(g_rng);
      else
        r.n_e = std::uniform_int_distribution<int>(0, std::min(g.max_ne, 300))(g_rng);
      rows.push_back(r);
    }
  }
  const auto groups = make_score_groups(rows);
  const int kstride = stride;  // multiple of 8
  DevBuf<bf16_bits> diq(static_cast<size_t>(T) * kvh * 128), dreps(static_cast<size_t>(np) * kvh * 128),
      dqsum(rows.size() * 128);
  harness::fill_normal(diq.p, diq.n, g_rng(), 0.5f);
  harness::fill_normal(dreps.p, dreps.n, g_rng(), 1.0f);
  DevBuf<int> dtab(tab);
  DevBuf<ScoreRow> drows(rows);
  DevBuf<ScoreGroup> dgroups(groups);
  DevBuf<std::uint16_t> dkeys(rows.size() * static_cast<size_t>(kstride));
  dkeys.poison();
  // logical order: a shuffled rep table over each sequence's stride, the representatives random; the
  // reference reads them as physical pages s * stride + j of a virtual block table
  const int nblk = (stride + kRepBlockPages - 1) / kRepBlockPages;
  std::vector<int> rperm(static_cast<size_t>(n_seq) * nblk);
  std::iota(rperm.begin(), rperm.end(), 0);
  std::shuffle(rperm.begin(), rperm.end(), g_rng);
  DevBuf<int> drt(rperm);
  DevBuf<bf16_bits> dlreps(logical ? rperm.size() * kRepBlockPages * kvh * 128 : 1);
  if (logical) harness::fill_normal(dlreps.p, dlreps.n, g_rng(), 1.0f);
  ScoreArgs a;
  a.iq = diq.p;
  a.reps = logical ? dlreps.p : dreps.p;
  a.table = BlockTable{dtab.p, stride};
  if (logical) a.rep_table = BlockTable{drt.p, nblk};
  a.rows = drows.p;
  a.groups = dgroups.p;
  a.qsum = dqsum.p;
  a.score_keys = dkeys.p;
  a.score_stride = kstride;
  a.kv_heads = kvh;
  a.rows_host = &rows;
  a.groups_host = &groups;
  score_pages(a, nullptr, nullptr);
  HCHECK(cudaDeviceSynchronize());
  const auto hk = dkeys.download();
  const auto hiq = diq.download();
  std::vector<float> rs;
  if (logical) {
    const auto hl = dlreps.download();
    std::vector<bf16_bits> vreps(static_cast<size_t>(n_seq) * stride * kvh * 128);
    std::vector<int> vtab(static_cast<size_t>(n_seq) * stride);
    for (int sq = 0; sq < n_seq; ++sq)
      for (int j = 0; j < stride; ++j) {
        const size_t vp = static_cast<size_t>(sq) * stride + j;
        vtab[vp] = static_cast<int>(vp);
        for (int h = 0; h < kvh; ++h)
          std::copy_n(hl.begin() + rep_offset_logical(rperm[static_cast<size_t>(sq) * nblk + j / kRepBlockPages], kvh, h, j),
                      128, vreps.begin() + (vp * kvh + h) * 128);
      }
    rs = ref::scores(hiq.data(), vreps.data(), kvh, BlockTable{vtab.data(), stride}, rows, kstride);
  } else {
    const auto hreps = dreps.download();
    rs = ref::scores(hiq.data(), hreps.data(), kvh, BlockTable{tab.data(), stride}, rows, kstride);
  }
  std::vector<float> got(hk.size());
  std::vector<char> use(hk.size(), 0);
  size_t beyond = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    for (int j = 0; j < kstride; ++j) {
      const size_t e = i * kstride + j;
      got[e] = score_from_key16(hk[e]);
      if (j < rows[i].n_e)
        use[e] = 1;
      else
        beyond += hk[e] != 0xffffu;
    }
  bool nan = false;
  const double err = rel_err(got, rs, &use, &nan);
  const std::string tag = std::string("scoring long groups (") + (wide ? "65-128" : "<= 64") + " rows" +
                          (logical ? ", reps in logical order)" : ")");
  std::printf("%s: %zu rows, %zu groups, rel err %.3g, NaN %d, written past n_e %zu\n", tag.c_str(), rows.size(),
              groups.size(), err, nan ? 1 : 0, beyond);
  expect(!nan && err < 8e-3 && beyond == 0, tag);
}

struct Case {
  std::string name;
  std::vector<int> hist, newt;
  int kv_heads, r, G, W, K;
  bool plant = false;
};

// Runs the CISA step and the dense baseline on one batch and checks every stage.
// logical: the step runs on representatives in logical order (every other case of main's list).
// The attention CTAs' progress record of the step's last launch (attention_cta_times after a
// reset): every work has a CTA, each CTA's marks are in time order, the quarter marks are set
// exactly when it has 4 tiles or more, its SM exists.
void check_cta_times(const CisaPlan& plan, int sms, const std::string& tag) {
  const auto t = attention_cta_times(1 << 14);
  std::vector<int> seen(plan.work.size(), 0);
  bool ordered = true, quarters = true, ids = true;
  int n = 0;
  for (const auto& c : t) {
    if (c.ns[0] == 0) continue;
    ++n;
    if (c.work < 0 || c.work >= static_cast<int>(plan.work.size()) || c.sm < 0 || c.sm >= sms) {
      ids = false;
      continue;
    }
    seen[static_cast<size_t>(c.work)] = 1;
    const bool q = c.ns[1] != 0 && c.ns[2] != 0 && c.ns[3] != 0;
    if (q != (c.tiles >= 4)) quarters = false;
    std::uint64_t prev = c.ns[0];
    for (int i = 1; i < 5; ++i) {
      if (c.ns[i] == 0) continue;
      if (c.ns[i] < prev) ordered = false;
      prev = c.ns[i];
    }
    if (c.ns[4] == 0) ordered = false;  // every CTA reaches its epilogue
  }
  const bool all = std::all_of(seen.begin(), seen.end(), [](int v) { return v == 1; });
  std::printf("%sattention CTA record: %d CTAs, %zu works\n", tag.c_str(), n, plan.work.size());
  expect(ids && all && n >= static_cast<int>(plan.work.size()),
         tag + "CTA record covers every work");
  expect(ordered, tag + "CTA record marks in time order");
  expect(quarters, tag + "CTA record quarter marks iff >= 4 tiles");
}

void run_case(const Case& c, bool logical) {
  StepBatch b{c.hist, c.newt, c.kv_heads, c.r};
  StepConfig cfg{c.W, c.K, c.G};
  std::vector<int> lens;
  for (size_t i = 0; i < c.hist.size(); ++i) lens.push_back(c.hist[i] + c.newt[i]);
  auto tb = harness::make_tables(lens, g_rng);
  const int h_q = c.kv_heads * c.r;
  const auto toff = token_offsets(b);
  const long long T = toff.back();
  const size_t kvn = static_cast<size_t>(tb.num_pages) * 16 * c.kv_heads * 128;
  DevBuf<bf16_bits> dk(kvn), dv(kvn), dq(T * h_q * 128), diq(T * c.kv_heads * 128), dreps(tb.num_pages * c.kv_heads * 128);
  harness::fill_normal(dk.p, kvn, g_rng());
  harness::fill_normal(dv.p, kvn, g_rng());
  harness::fill_normal(dq.p, dq.n, g_rng());
  harness::fill_normal(diq.p, diq.n, g_rng(), 0.5f);
  HCHECK(cudaDeviceSynchronize());
  auto hk = dk.download();
  auto hiq = diq.download();
  std::set<int> planted;  // logical pages of sequence 0 made to score high
  if (c.plant) {
    // make a few pages of sequence 0 / head 0 have keys equal to +4 * iq of its first group
    const int nep = std::max(0, c.hist[0] / 16 - c.W);
    for (int j = 1; j < nep; j += std::max(1, nep / 5)) planted.insert(j);
    for (int j : planted) {
      const int pid = tb.ids[static_cast<size_t>(j)];
      for (int t = 0; t < 16; ++t)
        for (int d = 0; d < 128; ++d)
          hk[static_cast<size_t>(kv_offset(pid, t, c.kv_heads, 0) + d)] =
              float_to_bf16(4.0f * bf16_to_float(hiq[static_cast<size_t>(toff[0] * c.kv_heads * 128 + d)]));
    }
    dk.upload(hk);
  }
  DevBuf<int> dtab(tb.ids);
  PagedKV kv{dk.p, dv.p, tb.num_pages, c.kv_heads};
  BlockTable table{dtab.p, tb.stride};
  rebuild_representatives(kv, dreps.p, nullptr);
  // every other case runs the step on representatives in logical order (a shuffled rep table; the
  // same kernel computes both layouts' values, so the reference keeps reading dreps)
  const int nblk = (tb.stride + kRepBlockPages - 1) / kRepBlockPages;
  std::vector<int> rperm(lens.size() * static_cast<size_t>(nblk));
  std::iota(rperm.begin(), rperm.end(), 0);
  std::shuffle(rperm.begin(), rperm.end(), g_rng);
  DevBuf<int> drt(rperm);
  DevBuf<bf16_bits> dlreps(rperm.size() * kRepBlockPages * c.kv_heads * 128);
  dlreps.poison();
  const BlockTable rtab = logical ? BlockTable{drt.p, nblk} : BlockTable{};
  if (logical) rebuild_representatives(kv, table, rtab, static_cast<int>(lens.size()), tb.stride, dlreps.p, nullptr);
  const bf16_bits* step_reps = logical ? dlreps.p : dreps.p;

  const CisaPlan plan = plan_cisa_step(b, cfg);
  int dev_sms = 0;
  HCHECK(cudaDeviceGetAttribute(&dev_sms, cudaDevAttrMultiProcessorCount, 0));
  CisaStep step(plan, c.kv_heads, c.r, dev_sms);
  DevBuf<bf16_bits> dout(T * h_q * 128);
  dout.poison();
  if (!plan.score_rows.empty())  // poisoned: an unwritten key reads as NaN
    HCHECK(cudaMemset(const_cast<std::uint16_t*>(step.score_keys()), 0xff,
                      plan.score_rows.size() * static_cast<size_t>(plan.score_stride) * 2));
  Instrument ins;
  attention_cta_times_reset();
  step.run(dq.p, diq.p, dout.p, kv, step_reps, table, nullptr, &ins, rtab);
  HCHECK(cudaDeviceSynchronize());
  const auto recs = ins.collect();
  check_cta_times(plan, dev_sms, c.name + ": ");

  const auto hv = dv.download();
  const auto hq = dq.download();
  const auto hreps = dreps.download();
  PagedKV hkv{hk.data(), hv.data(), tb.num_pages, c.kv_heads};
  BlockTable htab{tb.ids.data(), tb.stride};
  const size_t nrows = plan.score_rows.size();
  std::string tag = c.name + (logical ? " (logical reps)" : "") + ": ";
  // scoring vs reference on the device's representatives (16-bit keys: the score truncated to BF16
  // precision, relative error < 2^-7 each)
  std::vector<float> gscores;
  std::vector<int> gsparse;
  std::vector<std::uint16_t> gkeys;
  if (nrows > 0) {
    gkeys.resize(nrows * plan.score_stride);
    HCHECK(cudaMemcpy(gkeys.data(), step.score_keys(), gkeys.size() * 2, cudaMemcpyDeviceToHost));
    gscores.resize(gkeys.size());
    for (size_t i = 0; i < gkeys.size(); ++i) gscores[i] = score_from_key16(gkeys[i]);
    const auto rs = ref::scores(hiq.data(), hreps.data(), c.kv_heads, htab, plan.score_rows, plan.score_stride);
    std::vector<char> use(rs.size(), 0);
    for (size_t i = 0; i < nrows; ++i)
      for (int j = 0; j < plan.score_rows[i].n_e; ++j) use[i * plan.score_stride + j] = 1;
    bool nan = false;
    const double e = rel_err(gscores, rs, &use, &nan);
    std::printf("%sscores rel err %.3g (%zu rows)\n", tag.c_str(), e, nrows);
    expect(!nan && e < 8e-3, tag + "scores");
    gsparse.resize(nrows * plan.sparse_stride);
    HCHECK(cudaMemcpy(gsparse.data(), step.sparse_table(), gsparse.size() * 4, cudaMemcpyDeviceToHost));
    size_t mism = 0;
    for (size_t i = 0; i < nrows; ++i) {
      const auto want = ref::sparse_row(gscores.data() + i * plan.score_stride, plan.topk_rows[i], plan.budget, htab);
      for (size_t j = 0; j < want.size(); ++j) mism += gsparse[i * plan.sparse_stride + j] != want[j];
    }
    std::printf("%stop-k mismatches %zu\n", tag.c_str(), mism);
    expect(mism == 0, tag + "top-k selection");
    if (c.plant && !planted.empty()) {
      const auto& r0 = plan.score_rows[0];
      if (r0.seq == 0 && r0.kv_head == 0) {
        std::set<int> sel(gsparse.begin(), gsparse.begin() + plan.budget);
        int found = 0;
        for (int j : planted)
          if (j < r0.n_e) found += sel.count(tb.ids[static_cast<size_t>(j)]) > 0;
        int expected = 0;
        for (int j : planted) expected += j < r0.n_e;
        std::printf("%splanted pages selected %d/%d\n", tag.c_str(), found, expected);
        expect(found == expected, tag + "planted pages");
      }
    }
  }
  // attention vs reference on the device's sparse table
  std::vector<float> ref_o(T * h_q * 128, 0.0f);
  BlockTable hsp{gsparse.data(), plan.sparse_stride};
  ref::attention(hq.data(), hkv, htab, hsp, plan.work, h_q, c.r, 0.0f, ref_o);
  const auto got = harness::to_float(dout.download());
  bool nan = false;
  const double e = rel_err(got, ref_o, nullptr, &nan);
  std::printf("%sattention rel err %.3g  (works %zu, splits %d, sparse rows %zu)\n", tag.c_str(), e, plan.work.size(),
              step.num_splits(), nrows);
  expect(!nan && e < 1e-2, tag + "cisa attention");
  if (nrows > 0) {
    // the early part (window and tail pages through the block table, AttnArgs::early) at forced
    // split counts, direct through paged_attention: splits with and without early tiles, and (7
    // splits of short lists) splits whose share of the selected pages is empty
    size_t emism = 0;
    for (const auto& w : plan.work) {
      if (w.list_src != 1) continue;
      emism += !(w.n_early > 0 && w.n_early == w.n_pages - plan.budget);
      for (int i = 0; i < w.n_early; ++i)
        emism += gsparse[static_cast<size_t>(w.list_row) * plan.sparse_stride + plan.budget + i] !=
                 tb.ids[static_cast<size_t>(w.early_row) * tb.stride + w.early_col + i];
    }
    expect(emism == 0, tag + "early part = the block table's entries");
    const int nw = static_cast<int>(plan.work.size());
    DevBuf<AttnWork> dwork(plan.work);
    for (int ns : {1, 3, 7}) {
      DevBuf<float> scr(std::max<size_t>(1, static_cast<size_t>(attention_scratch_floats(nw, ns, plan.rows_per_cta))));
      DevBuf<bf16_bits> dout4(T * h_q * 128);
      AttnArgs aa;
      aa.q = dq.p;
      aa.o = dout4.p;
      aa.kv = kv;
      aa.table = table;
      aa.sparse = BlockTable{step.sparse_table(), plan.sparse_stride};
      aa.work = dwork.p;
      aa.n_work = nw;
      aa.h_q = h_q;
      aa.r = c.r;
      aa.scratch = scr.p;
      aa.scratch_floats = static_cast<std::int64_t>(scr.n);
      aa.num_splits = ns;
      aa.n_full = 0;
      aa.early = true;
      aa.work_host = &plan.work;
      dout4.poison();
      scr.poison();
      const bool used = attention_early(aa);
      g_early_launches += used;
      paged_attention(aa, nullptr, nullptr);
      HCHECK(cudaDeviceSynchronize());
      const auto got4 = harness::to_float(dout4.download());
      bool nan4 = false;
      const double e4 = rel_err(got4, ref_o, nullptr, &nan4);
      std::printf("%searly part %s, %d split(s): attention rel err %.3g\n", tag.c_str(), used ? "taken" : "not taken",
                  ns, e4);
      expect(!nan4 && e4 < 1e-2, tag + "early part, " + std::to_string(ns) + " split(s)");
    }
  }
  // full CPU step (own scoring + selection): outputs close when selections agree
  if (nrows == 0) {
    // K >= N_e everywhere: must be the dense path exactly in selection -> compare with plan_dense
    for (const auto& w : plan.work) expect(w.list_src == 0, tag + "dense path when K >= N_e");
    const CisaPlan dplan = plan_dense(b);
    CisaStep dstep(dplan, c.kv_heads, c.r, dev_sms);
    DevBuf<bf16_bits> dout2(T * h_q * 128);
    dout2.poison();
    dstep.upload(nullptr);
    dstep.run_attention(dq.p, dout2.p, kv, table, nullptr, nullptr);
    HCHECK(cudaDeviceSynchronize());
    const auto got2 = harness::to_float(dout2.download());
    bool nan2 = false;
    const double e2 = rel_err(got2, ref_o, nullptr, &nan2);
    std::printf("%sdense baseline rel err %.3g\n", tag.c_str(), e2);
    expect(!nan2 && e2 < 1e-2, tag + "dense baseline");
    // the tail split forced (works [0, n / 2) whole, the others 3 ways; a 1-D grid, the combine
    // over the split works only), direct through paged_attention
    const int nw = static_cast<int>(dplan.work.size());
    DevBuf<AttnWork> dwork(dplan.work);
    DevBuf<float> scr(static_cast<size_t>(attention_scratch_floats(nw, 3, dplan.rows_per_cta)));
    AttnArgs aa;
    aa.q = dq.p;
    aa.o = dout2.p;
    aa.kv = kv;
    aa.table = table;
    aa.sparse = table;
    aa.work = dwork.p;
    aa.n_work = nw;
    aa.h_q = h_q;
    aa.r = c.r;
    aa.scratch = scr.p;
    aa.scratch_floats = static_cast<std::int64_t>(scr.n);
    aa.num_splits = 3;
    aa.n_full = nw / 2;
    aa.work_host = &dplan.work;
    dout2.poison();
    scr.poison();
    paged_attention(aa, nullptr, nullptr);
    HCHECK(cudaDeviceSynchronize());
    const auto got3 = harness::to_float(dout2.download());
    bool nan3 = false;
    const double e3 = rel_err(got3, ref_o, nullptr, &nan3);
    std::printf("%stail split (%d whole, %d x 3) rel err %.3g\n", tag.c_str(), nw / 2, nw - nw / 2, e3);
    expect(!nan3 && e3 < 1e-2, tag + "tail split");
  }
  for (const auto& r : recs) expect(r.ms >= 0.0 && r.bytes > 0.0, tag + "instrument record " + r.kernel);
  // the uninstrumented run captured in a CUDA graph, serial (launches back to back, no events
  // between them: the programmatic dependent launches overlap as in the benchmark's step) and
  // pipelined in 2 and 3 parts, replayed twice with the outputs poisoned before each replay: the
  // same keys and selections bit for bit (every page's score and every row's selection are computed
  // alone), the attention against the reference (its split-KV count differs per part)
  if (nrows > 0) {
    for (int parts : {1, 2, 3}) {
      step.set_pipeline(parts);
      if (parts > 1 && step.pipeline_parts() < 2) continue;
      const std::string ptag =
          parts == 1 ? tag + "serial graph: "
                     : tag + "pipelined " + std::to_string(step.pipeline_parts()) + " parts: ";
      cudaStream_t cs;
      HCHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      HCHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
      step.run(dq.p, diq.p, dout.p, kv, step_reps, table, cs, nullptr, rtab);
      HCHECK(cudaStreamEndCapture(cs, &graph));
      HCHECK(cudaGraphInstantiate(&exec, graph, 0));
      for (int rep = 0; rep < 2; ++rep) {
        dout.poison();
        HCHECK(cudaMemset(const_cast<std::uint16_t*>(step.score_keys()), 0xff, gkeys.size() * 2));
        HCHECK(cudaMemset(const_cast<int*>(step.sparse_table()), 0xff, gsparse.size() * 4));
        HCHECK(cudaDeviceSynchronize());
        HCHECK(cudaGraphLaunch(exec, cs));
        HCHECK(cudaStreamSynchronize(cs));
      }
      HCHECK(cudaGraphExecDestroy(exec));
      HCHECK(cudaGraphDestroy(graph));
      HCHECK(cudaStreamDestroy(cs));
      std::vector<std::uint16_t> pkeys(gkeys.size());
      std::vector<int> psparse(gsparse.size());
      HCHECK(cudaMemcpy(pkeys.data(), step.score_keys(), pkeys.size() * 2, cudaMemcpyDeviceToHost));
      HCHECK(cudaMemcpy(psparse.data(), step.sparse_table(), psparse.size() * 4, cudaMemcpyDeviceToHost));
      size_t kmism = 0, smism = 0;
      for (size_t i = 0; i < nrows; ++i) {
        for (int j = 0; j < plan.score_rows[i].n_e; ++j)
          kmism += pkeys[i * plan.score_stride + j] != gkeys[i * plan.score_stride + j];
        const size_t used = static_cast<size_t>(plan.budget + plan.topk_rows[i].list_end - plan.topk_rows[i].n_e);
        for (size_t j = 0; j < used; ++j) smism += psparse[i * plan.sparse_stride + j] != gsparse[i * plan.sparse_stride + j];
      }
      std::printf("%skey mismatches %zu, selection mismatches %zu\n", ptag.c_str(), kmism, smism);
      expect(kmism == 0, ptag + "keys");
      expect(smism == 0, ptag + "selections");
      const auto pgot = harness::to_float(dout.download());
      bool pnan = false;
      const double pe = rel_err(pgot, ref_o, nullptr, &pnan);
      std::printf("%sattention rel err %.3g\n", ptag.c_str(), pe);
      expect(!pnan && pe < 1e-2, ptag + "attention");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA device: %s\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 77;
  }
  const unsigned long long seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : std::random_device{}();
  std::printf("seed %llu\n", seed);
  g_rng.seed(seed);
  // CISA_TEST_CASES=name,name (step cases below): only those cases, each on its usual layout, and
  // no other test (sanitizer runs of a few kernels)
  const char* only_env = std::getenv("CISA_TEST_CASES");
  const std::string only = only_env ? std::string(",") + only_env + "," : "";
  try {
    if (only.empty()) {
      test_wave_splits();
      test_representatives();
      test_topk();
      test_scoring_long(true);
      test_scoring_long(false);
      test_scoring_long(true, true);
      test_scoring_long(false, true);
    }
    std::vector<Case> cases = {
        // name, history, new tokens, kv_heads, r, G, W, K
        {"decode_r4_ragged", {3000, 517, 1, 2049, 15}, {1, 1, 1, 1, 1}, 2, 4, 1, 8, 32, true},
        {"decode_r32", {5003, 40}, {1, 1}, 1, 32, 1, 8, 64},
        // long decode rows: several CTAs per group of the one-row scoring path, each warp's ring
        // wrapping around (7 batches per warp), ragged last warp
        {"decode_long_r4", {100001, 37000}, {1, 1}, 2, 4, 1, 8, 512},
        // six sequences, one on the dense path: pipelined in 2 and 3 parts of whole sequences
        {"decode_b6_parts", {4000, 900, 3000, 20, 5000, 2500}, {1, 1, 1, 1, 1, 1}, 2, 4, 1, 8, 40},
        {"prefill_r4_g4", {2100, 333}, {37, 19}, 1, 4, 4, 8, 48, true},
        {"prefill_r4_g16_cross", {1400, 900}, {100, 64}, 2, 4, 16, 8, 80},
        {"prefill_r4_g32", {3000}, {70}, 1, 4, 32, 4, 100},
        {"prefill_r16_g4", {1700, 5}, {23, 9}, 1, 16, 4, 8, 40},
        {"prefill_r32_g4", {2500}, {30}, 1, 32, 4, 8, 64},
        {"prefill_r32_g16_rowsplit", {2600}, {33}, 1, 32, 16, 8, 64},
        {"k_ge_ne_dense_r4", {1000, 17, 1}, {40, 3, 1}, 1, 4, 4, 8, 100000},
        {"k_ge_ne_dense_r32", {700}, {9}, 1, 32, 4, 8, 100000},
        {"single_page_seqs", {0, 3, 15}, {1, 5, 1}, 1, 4, 4, 8, 32},
        {"prefill_r4_g32_kv2", {1800, 700}, {70, 45}, 2, 4, 32, 8, 90},  // 128-row tiles, 2 KV heads
        {"k_ge_ne_dense_r32_kv2", {600, 40}, {12, 5}, 2, 32, 4, 8, 100000},
        // scoring groups of 65-128 rows (two warpgroups; 100 and 75 rows, 2 KV heads) and of more
        // than 128 rows (150 = 128 + 22)
        {"prefill_r4_g4_rows100", {3000, 1700}, {400, 300}, 2, 4, 4, 8, 64},
        {"prefill_r4_g4_rows150", {2100}, {600}, 1, 4, 4, 8, 64},
        // 128-row warp-specialised kernel with 128-token tiles: lists of 8k + 5 pages, a causal tail
        // inside a tile, empty trailing splits (split lengths rounded to whole 8-page tiles)
        {"prefill_r32_g4_tile128", {9000, 4111}, {13, 6}, 1, 32, 4, 8, 300},
    };
    for (size_t i = 0; i < cases.size(); ++i)
      if (only.empty() || only.find("," + cases[i].name + ",") != std::string::npos) run_case(cases[i], i % 2 == 0);
    std::printf("early part taken in %d direct launches\n", g_early_launches);
    if (only.empty()) expect(g_early_launches >= 6, "early part exercised");
  } catch (const std::exception& ex) {
    std::printf("FAIL: exception: %s\n", ex.what());
    return 1;
  }
  std::printf("%d/%d checks passed\n", g_checks - g_fail, g_checks);
  return g_fail == 0 ? 0 : 1;
}
