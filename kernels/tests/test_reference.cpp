// CPU tests of the planner and the Eigen references (run in CI, no GPU needed).
#include <cmath>
#include <random>

#include "catch.hpp"
#include "cisa_kernels/cisa_step.hpp"
#include "cisa_kernels/reference.hpp"

using namespace cisa::kernels;

namespace {
std::vector<bf16_bits> randn(size_t n, std::mt19937_64& rng, float s = 1.0f) {
  std::normal_distribution<float> d(0.0f, s);
  std::vector<bf16_bits> v(n);
  for (auto& x : v) x = float_to_bf16(d(rng));
  return v;
}
}  // namespace

TEST_CASE("bf16 conversion rounds to nearest even") {
  CHECK(bf16_to_float(float_to_bf16(1.0f)) == 1.0f);
  CHECK(bf16_to_float(float_to_bf16(-2.5f)) == -2.5f);
  CHECK(float_to_bf16(1.00390625f) == float_to_bf16(1.0f));       // halfway, even stays
  CHECK(float_to_bf16(1.01171875f) == 0x3f82);                    // halfway, rounds up to even
  CHECK(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
}

TEST_CASE("16-bit score keys keep the order of the scores") {
  std::mt19937_64 rng(3);
  std::normal_distribution<float> d(0.0f, 10.0f);
  for (int i = 0; i < 20000; ++i) {
    const float a = d(rng), b = d(rng);
    if (a < b) CHECK(score_key16(a) <= score_key16(b));
    // the decoded value is within one BF16 step (2^-7 relative) of the score
    const float r = score_from_key16(score_key16(a));
    CHECK(std::fabs(r - a) <= std::fabs(a) * 0.0079f);
    CHECK(score_key16(r) == score_key16(a));
  }
  CHECK(score_key16(-1.0f) < score_key16(-0.0f));
  CHECK(score_key16(-0.0f) < score_key16(0.0f));
  CHECK(score_key16(1.0f) < score_key16(1.0f + 1.0f / 64.0f));      // BF16 resolution at 1
  CHECK(score_key16(1.0f) == score_key16(1.0f + 1.0f / 256.0f));    // below it: one key
  // every finite key decodes to a strictly increasing value (-inf = 0x007f ... +inf = 0xff80)
  for (int k = 0x0080; k < 0xff80; ++k)
    REQUIRE(score_from_key16(static_cast<std::uint16_t>(k)) < score_from_key16(static_cast<std::uint16_t>(k + 1)));
}

TEST_CASE("plan: K >= N_e gives the dense path, no scoring") {
  StepBatch b{{5000, 100, 0}, {64, 3, 1}, 2, 4};
  const auto plan = plan_cisa_step(b, StepConfig{128, 4096, 4});
  CHECK(plan.score_rows.empty());
  for (const auto& w : plan.work) CHECK(w.list_src == 0);
  int rows = 0;
  for (const auto& w : plan.work) rows += w.n_pos;
  CHECK(rows == (64 + 3 + 1) * 2);
}

TEST_CASE("plan: a group crossing N_e > K splits into dense prefix and sparse suffix") {
  // history 16*(W+K) - 5: positions 0..4 have N_e <= K, positions 5.. exceed it
  const int W = 8, K = 10;
  StepBatch b{{16 * (W + K + 1) - 5}, {16}, 1, 4};
  const auto plan = plan_cisa_step(b, StepConfig{W, K, 16});
  REQUIRE(plan.work.size() == 2);
  CHECK(plan.work[0].list_src == 0);
  CHECK(plan.work[0].n_pos == 5);
  CHECK(plan.work[1].list_src == 1);
  CHECK(plan.work[1].n_pos == 11);
  REQUIRE(plan.score_rows.size() == 1);
  CHECK(plan.score_rows[0].n_e == K + 1);
  CHECK(plan.score_rows[0].n_q == 11);
  CHECK(plan.work[1].mask_from == K + W);
}

TEST_CASE("plan: the early part of a sparse work is the window and tail the top-k appends") {
  // ragged histories, prefill groups and a decode-like row; every sparse work's last n_early list
  // entries (sparse row from K on) equal the block table's row early_row from entry early_col on
  const int W = 8, K = 40;
  StepBatch b{{3000, 900, 17, 2049}, {5, 33, 1, 1}, 2, 4};
  const auto plan = plan_cisa_step(b, StepConfig{W, K, 4});
  std::mt19937_64 rng(9);
  const int stride = 300;
  std::vector<int> ids(b.history.size() * stride);
  for (auto& x : ids) x = static_cast<int>(rng() % 100000);
  const BlockTable table{ids.data(), stride};
  int sparse_works = 0;
  for (const auto& w : plan.work) {
    if (w.list_src != 1) {
      CHECK(w.n_early == 0);
      continue;
    }
    ++sparse_works;
    const auto& row = plan.topk_rows[static_cast<size_t>(w.list_row)];
    CHECK(w.n_early == w.n_pages - K);
    CHECK(w.early_row == row.seq);
    CHECK(w.early_col == row.n_e);
    CHECK(w.mask_from >= K);  // the causal tail lies inside the early part
    std::vector<float> sc(static_cast<size_t>(row.n_e));
    for (auto& x : sc) x = static_cast<float>(rng() % 1000);
    const auto sp = ref::sparse_row(sc.data(), row, K, table);
    REQUIRE(static_cast<int>(sp.size()) >= w.n_pages);
    for (int i = 0; i < w.n_early; ++i)
      CHECK(sp[static_cast<size_t>(K + i)] == ids[static_cast<size_t>(w.early_row) * stride + w.early_col + i]);
  }
  CHECK(sparse_works > 0);
}

TEST_CASE("plan: G not dividing P, rows chunked to 128") {
  StepBatch b{{20000}, {50}, 1, 32};
  const auto plan = plan_cisa_step(b, StepConfig{16, 64, 16});
  int pos = 0;
  for (const auto& w : plan.work) {
    CHECK(w.n_pos * 32 <= kMaxAttnRows);
    pos += w.n_pos;
  }
  CHECK(pos == 50);
  CHECK(plan.score_rows.size() == 4);  // 16+16+16+2
  CHECK(plan.score_rows.back().n_q == 2);
}

TEST_CASE("reference top-k: ties go to the lower index, output ascending") {
  std::vector<float> s = {1, 5, 3, 5, 5, 0, 2};
  CHECK(ref::topk(s.data(), 7, 2) == std::vector<int>{1, 3});
  CHECK(ref::topk(s.data(), 7, 4) == std::vector<int>{1, 2, 3, 4});
  CHECK(ref::topk(s.data(), 7, 9).size() == 7);
}

TEST_CASE("reference attention: single key, causal mask, equals naive softmax") {
  std::mt19937_64 rng(7);
  const int kvh = 1, r = 4, np = 10;
  auto k = randn(static_cast<size_t>(np) * 16 * kvh * 128, rng);
  auto v = randn(k.size(), rng);
  std::vector<int> ids = {3, 1, 4, 0, 5, 2, 9, 7, 8, 6};
  PagedKV kv{k.data(), v.data(), np, kvh};
  BlockTable t{ids.data(), 10};
  // sequence of 1 token: position 0 sees only key 0 -> output = V[0]
  StepBatch b{{0}, {1}, kvh, r};
  auto q = randn(static_cast<size_t>(r) * 128, rng);
  const auto plan = plan_dense(b);
  std::vector<float> o(static_cast<size_t>(r) * 128, 0.0f);
  ref::attention(q.data(), kv, t, t, plan.work, r, r, 0.0f, o);
  for (int d = 0; d < 128; ++d) CHECK(std::fabs(o[static_cast<size_t>(d)] - bf16_to_float(v[kv_offset(3, 0, 1, 0) + d])) <= 1e-6f);
  // position 40 of a 90-token history: naive softmax over keys 0..130
  StepBatch b2{{90}, {41}, kvh, r};
  auto q2 = randn(static_cast<size_t>(41) * r * 128, rng);
  const auto plan2 = plan_dense(b2);
  std::vector<float> o2(q2.size(), 0.0f);
  ref::attention(q2.data(), kv, t, t, plan2.work, r, r, 0.0f, o2);
  const int p = 40, h = 2, qp = 90 + p;
  std::vector<double> s(static_cast<size_t>(qp + 1));
  double mx = -1e300;
  for (int j = 0; j <= qp; ++j) {
    double acc = 0;
    for (int d = 0; d < 128; ++d)
      acc += double(bf16_to_float(q2[(static_cast<size_t>(p) * r + h) * 128 + d])) *
             bf16_to_float(k[kv_offset(ids[j / 16], j % 16, 1, 0) + d]);
    s[j] = acc / std::sqrt(128.0);
    mx = std::max(mx, s[j]);
  }
  double l = 0;
  for (auto& x : s) l += (x = std::exp(x - mx));
  for (int d = 0; d < 128; d += 17) {
    double out = 0;
    for (int j = 0; j <= qp; ++j) out += s[j] * bf16_to_float(v[kv_offset(ids[j / 16], j % 16, 1, 0) + d]);
    CHECK(std::fabs(o2[(static_cast<size_t>(p) * r + h) * 128 + d] - out / l) <= 1e-5 + 1e-4 * std::fabs(out / l));
  }
}

TEST_CASE("reference CISA step: K >= N_e equals dense; planted pages are selected") {
  std::mt19937_64 rng(11);
  const int kvh = 1, r = 4;
  const int hist = 1200, P = 8, np = (hist + P + 15) / 16;
  auto k = randn(static_cast<size_t>(np) * 16 * 128, rng);
  auto v = randn(k.size(), rng);
  std::vector<int> ids(static_cast<size_t>(np));
  for (int i = 0; i < np; ++i) ids[static_cast<size_t>(i)] = (i * 7) % np;  // np = 76, coprime with 7
  PagedKV kv{k.data(), v.data(), np, kvh};
  BlockTable t{ids.data(), np};
  StepBatch b{{hist}, {P}, kvh, r};
  auto q = randn(static_cast<size_t>(P) * r * 128, rng);
  auto iq = randn(static_cast<size_t>(P) * 128, rng);
  const auto dense_plan = plan_dense(b);
  std::vector<float> od(q.size(), 0.0f);
  ref::attention(q.data(), kv, t, t, dense_plan.work, r, r, 0.0f, od);
  const auto big = plan_cisa_step(b, StepConfig{8, 1000, 4});
  const auto res = ref::cisa_step(big, b, q.data(), iq.data(), kv, t, 0.0f);
  REQUIRE(res.o.size() == od.size());
  for (size_t i = 0; i < od.size(); ++i) REQUIRE(res.o[i] == od[i]);
  // planted: make logical page 10's keys = 3 * summed index query of the first group
  const int W = 8, K = 16;
  const auto plan = plan_cisa_step(b, StepConfig{W, K, 4});
  REQUIRE(!plan.score_rows.empty());
  const auto qs = ref::summed_query(iq.data(), kvh, plan.score_rows[0]);
  for (int tk = 0; tk < 16; ++tk)
    for (int d = 0; d < 128; ++d) k[kv_offset(ids[10], tk, 1, 0) + d] = float_to_bf16(3.0f * qs[static_cast<size_t>(d)]);
  const auto res2 = ref::cisa_step(plan, b, q.data(), iq.data(), kv, t, 0.0f);
  bool found = false;
  for (int j = 0; j < K; ++j) found |= res2.sparse[static_cast<size_t>(j)] == ids[10];
  CHECK(found);
  // the sparse row = K selected + W window + tail pages
  CHECK(plan.sparse_stride >= K + W + 1);
}
