#include "catch.hpp"
#include "helpers.hpp"

using namespace cisa::route;
using route_test::near;

TEST_CASE("page mass: hand-computed case (weights 1:2:3:4 over two pages)", "[route]") {
  // d = 1, q = 1, k_i = ln(i + 1): softmax over tokens 0..3 is (1, 2, 3, 4) / 10.
  LayerActivations a;
  a.tokens = 4;
  a.q_heads = a.kv_heads = a.head_dim = 1;
  a.positions = {1, 3};
  a.q = {1.0f, 1.0f};
  for (int i = 0; i < 4; ++i) a.k.push_back(std::log(static_cast<float>(i + 1)));
  for (std::int64_t block : {2, 4}) {
    const PageMass m = dense_page_mass(a, 2, {1, block});
    REQUIRE(m.pages == 2);
    // position 1 sees tokens 0, 1: weights 1:2, all on page 0
    CHECK(near(m.row(0, 0)[0], 1.0, 1e-6));
    CHECK(near(m.row(0, 0)[1], 0.0, 1e-12));
    // position 3: page 0 = 3/10, page 1 = 7/10
    CHECK(near(m.row(1, 0)[0], 0.3, 1e-6));
    CHECK(near(m.row(1, 0)[1], 0.7, 1e-6));
  }
}

TEST_CASE("page mass: blocked GEMM path equals the reference", "[route]") {
  LayerActivations a = route_test::random_acts(437, 1, 6, 2, 16, 7, 2.0);
  a.positions = {0, 15, 16, 17, 100, 255, 256, 300, 436};
  a.q.resize(a.positions.size() * 6 * 16);
  for (std::size_t i = 0; i < a.q.size(); ++i) a.q[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 2.5);
  a.validate();
  const PageMass ref = dense_page_mass_reference(a, 16);
  for (std::int64_t block : {16, 48, 64, 1024}) {
    for (int threads : {1, 3}) {
      const PageMass m = dense_page_mass(a, 16, {threads, block});
      REQUIRE(m.pages == ref.pages);
      double worst = 0;
      for (std::size_t i = 0; i < m.mass.size(); ++i)
        worst = std::max(worst, std::abs(static_cast<double>(m.mass[i]) - ref.mass[i]));
      CHECK(worst < 2e-5);
      for (std::int64_t p = 0; p < m.positions; ++p)
        for (int h = 0; h < m.q_heads; ++h) CHECK(near(route_test::row_sum(m, p, h), 1.0, 1e-4));
    }
  }
}

TEST_CASE("page mass: causal — no mass after a position's own page", "[route]") {
  const LayerActivations a = route_test::random_acts(256, 40, 4, 1, 8, 3);
  const PageMass m = dense_page_mass(a, 16, {2, 32});
  for (std::int64_t p = 0; p < m.positions; ++p) {
    const std::int64_t own = a.positions[static_cast<std::size_t>(p)] / 16;
    for (int h = 0; h < 4; ++h)
      for (std::int64_t j = own + 1; j < m.pages; ++j) CHECK(m.row(p, h)[j] == 0.0f);
  }
}

TEST_CASE("synthetic: q = w_q x, needles placed, structure visible in attention", "[route]") {
  SyntheticConfig cfg;
  cfg.tokens = 2048;
  cfg.positions = 16;
  cfg.q_heads = 8;
  cfg.kv_heads = 2;
  cfg.head_dim = 32;
  cfg.sink_logit = 10.0;  // 4 sink tokens x e^10 outweigh ~2k tokens of O(1) logits
  SyntheticTruth truth;
  const LayerActivations a = make_synthetic(cfg, &truth);
  a.validate();
  REQUIRE(a.has_projection());
  for (std::int64_t p = 0; p < a.num_positions(); ++p)
    for (int h = 0; h < a.q_heads; ++h)
      for (int i = 0; i < a.head_dim; ++i) {
        double s = 0;
        for (int j = 0; j < a.hidden; ++j)
          s += double(a.w_q[(static_cast<std::size_t>(h) * a.head_dim + i) * a.hidden + j]) *
               a.x[static_cast<std::size_t>(p * a.hidden + j)];
        CHECK(near(s, a.q_row(p, h)[i], 1e-3 * (1 + std::abs(s))));
      }
  REQUIRE(truth.needle_pages.size() == 2);
  for (const auto& v : truth.needle_pages) CHECK(static_cast<int>(v.size()) == cfg.needles);
  // Deterministic regardless of threads.
  cfg.threads = 1;
  const LayerActivations b = make_synthetic(cfg);
  CHECK(a.k == b.k);
  CHECK(a.q == b.q);

  const PageMass m = dense_page_mass(a, cfg.chunk_tokens);
  const std::int64_t last = a.num_positions() - 1;
  const std::int64_t own = a.positions.back() / cfg.chunk_tokens;
  // head 0: retrieval -> most mass on the needles; head 1: local -> most mass on the last 4 pages;
  // head 2: sink -> most mass on page 0.
  double needle = 0;
  for (auto j : truth.needle_pages[0]) needle += m.row(last, 0)[j];
  CHECK(needle > 0.5);
  double recent = 0;
  for (std::int64_t j = own - 3; j <= own; ++j) recent += m.row(last, 1)[j];
  CHECK(recent > 0.5);
  CHECK(m.row(last, 2)[0] > 0.5);
}
