#include <algorithm>
#include <set>

#include "catch.hpp"
#include "helpers.hpp"

using namespace cisa::route;
using route_test::near;

namespace {
// Position 100 (c = 16): N = 6 full pages before its own page 6. Keys of page j are
// [j, b_j, 0...] with b = (5, 0, 0, ...), so mean representatives are exactly [j, b_j].
LayerActivations geometry_case(std::vector<std::int64_t> positions, std::vector<float> q) {
  LayerActivations a;
  a.tokens = 128;
  a.q_heads = a.kv_heads = 1;
  a.head_dim = 2;
  a.positions = std::move(positions);
  a.q = std::move(q);
  for (std::int64_t t = 0; t < a.tokens; ++t) {
    const std::int64_t j = t / 16;
    a.k.push_back(static_cast<float>(j));
    a.k.push_back(j == 0 ? 5.0f : 0.0f);
  }
  a.validate();
  return a;
}
}  // namespace

TEST_CASE("selection: geometry, ranking and hand-computed recall", "[route]") {
  const LayerActivations a = geometry_case({100}, {1.0f, 0.0f});
  const Representatives reps = make_representatives(a, 16, RepRule::mean);
  REQUIRE(reps.pages == 8);
  CHECK(reps.row(0, 3)[0] == 3.0f);
  CHECK(reps.row(0, 0)[1] == 5.0f);
  const auto iq = index_queries(a, {0});
  const auto sel = select_pages(a, reps, iq, {16, 1, 2, Aggregation::sum}, 10);
  REQUIRE(sel.size() == 1);
  const GroupSelection& s = sel[0];
  CHECK(s.full_pages == 6);
  CHECK(s.eligible == 4);
  CHECK(s.window_begin == 4);
  CHECK(s.ranked == std::vector<std::int64_t>{3, 2, 1, 0});

  // Hand-made page mass for the one (position, head).
  PageMass m;
  m.positions = 1;
  m.q_heads = 1;
  m.pages = 7;
  m.chunk_tokens = 16;
  m.mass = {0.05f, 0.1f, 0.2f, 0.05f, 0.1f, 0.2f, 0.3f};
  // K = 2 -> pages {3, 2} + window {4, 5} + tail {6} = 0.05 + 0.2 + 0.1 + 0.2 + 0.3
  CHECK(near(recall(m, a, s, 0, 0, 2), 0.85, 1e-6));
  CHECK(near(recall(m, a, s, 0, 0, 0), 0.6, 1e-6));
  CHECK(near(recall(m, a, s, 0, 0, 4), 1.0, 1e-6));   // K = N_e: everything
  CHECK(near(recall(m, a, s, 0, 0, 99), 1.0, 1e-6));

  // Window larger than the history: nothing eligible, everything read.
  const auto all = select_pages(a, reps, iq, {16, 1, 10, Aggregation::sum}, 10);
  CHECK(all[0].eligible == 0);
  CHECK(all[0].ranked.empty());
  CHECK(near(recall(m, a, all[0], 0, 0, 1), 1.0, 1e-6));
}

TEST_CASE("selection: aggregation rules sum / max / last over a QShare group", "[route]") {
  // p0 scores page j as j; p1 = [-1, 1] scores [5, -1, -2, -3].
  const LayerActivations a = geometry_case({100, 101}, {1.0f, 0.0f, -1.0f, 1.0f});
  const Representatives reps = make_representatives(a, 16, RepRule::mean);
  const auto iq = index_queries(a, {0});
  auto ranked = [&](Aggregation agg) {
    const auto sel = select_pages(a, reps, iq, {16, 2, 2, agg}, 4);
    REQUIRE(sel.size() == 1);
    CHECK(sel[0].p_begin == 0);
    CHECK(sel[0].p_end == 2);
    return sel[0].ranked;
  };
  CHECK(ranked(Aggregation::sum) == std::vector<std::int64_t>{0, 1, 2, 3});   // [5,0,0,0], ties by page
  CHECK(ranked(Aggregation::max) == std::vector<std::int64_t>{0, 3, 2, 1});   // [5,1,2,3]
  CHECK(ranked(Aggregation::last) == std::vector<std::int64_t>{0, 1, 2, 3});  // [5,-1,-2,-3]
  // k_max shorter than N_e keeps the best k_max in order.
  const auto sel = select_pages(a, reps, iq, {16, 2, 2, Aggregation::max}, 2);
  CHECK(sel[0].ranked == std::vector<std::int64_t>{0, 3});
}

TEST_CASE("selection: minmax representatives score the Quest bound", "[route]") {
  const LayerActivations a = route_test::random_acts(96, 4, 2, 1, 8, 11);
  const Representatives reps = make_representatives(a, 16, RepRule::minmax);
  REQUIRE(reps.dim == 16);
  std::vector<float> phi(16);
  for (std::int64_t p = 0; p < 4; ++p) {
    score_query(RepRule::minmax, a.q_row(p, 0), 8, phi.data());
    for (std::int64_t j = 0; j < reps.pages; ++j) {
      double brute = 0;
      for (int i = 0; i < 8; ++i) {
        float lo = a.k_row(j * 16, 0)[i], hi = lo;
        for (std::int64_t t = j * 16; t < (j + 1) * 16; ++t) {
          lo = std::min(lo, a.k_row(t, 0)[i]);
          hi = std::max(hi, a.k_row(t, 0)[i]);
        }
        brute += std::max(double(a.q_row(p, 0)[i]) * lo, double(a.q_row(p, 0)[i]) * hi);
      }
      double dot = 0;
      for (int i = 0; i < 16; ++i) dot += double(phi[static_cast<std::size_t>(i)]) * reps.row(0, j)[i];
      CHECK(near(dot, brute, 1e-4));
    }
  }
}

TEST_CASE("selection: recall = 1 when K >= N_e", "[route]") {
  const LayerActivations a = route_test::random_acts(1000, 24, 4, 2, 16, 5, 2.0);
  const PageMass m = dense_page_mass(a, 16, {2, 64});
  for (RepRule rule : {RepRule::mean, RepRule::minmax}) {
    const Representatives reps = make_representatives(a, 16, rule);
    const auto iq = index_queries(a, {2, 0});
    for (std::int64_t G : {1, 4, 5}) {
      for (std::int64_t W : {0, 3}) {
        const auto sel = select_pages(a, reps, iq, {16, G, W, Aggregation::sum}, 100);
        for (const auto& s : sel) {
          REQUIRE(s.eligible <= 62);
          for (std::int64_t p = s.p_begin; p < s.p_end; ++p)
            for (int hh = 0; hh < 2; ++hh) {
              const int h = s.kv_group * 2 + hh;
              CHECK(near(recall(m, a, s, p, h, s.eligible), 1.0, 1e-4));
              CHECK(recall(m, a, s, p, h, std::max<std::int64_t>(0, s.eligible - 5)) <= 1.0 + 1e-4);
            }
        }
      }
    }
  }
}

TEST_CASE("selection: planted needles recovered at K >= number of needles", "[route]") {
  SyntheticConfig cfg;
  cfg.tokens = 4096;
  cfg.positions = 32;
  cfg.q_heads = 4;
  cfg.kv_heads = 2;
  cfg.head_dim = 64;
  cfg.needles = 4;
  cfg.needle_min_age = 32;
  cfg.head_kinds = {HeadKind::retrieval, HeadKind::diffuse};
  cfg.needle_logit = 10.0;  // clear margin over the page-score noise for the mean indexer at G = 1
  SyntheticTruth truth;
  const LayerActivations a = make_synthetic(cfg, &truth);
  const PageMass m = dense_page_mass(a, 16);
  const Representatives reps = make_representatives(a, 16, RepRule::mean);
  const InitResult init = initialise_indexer(m, a, reps);
  for (const std::vector<int>& indexer : {std::vector<int>{0, 0}, init.chosen}) {
    const auto iq = index_queries(a, indexer);
    for (std::int64_t G : {1, 4}) {
      for (std::int64_t K : {4, 6, 16}) {
        const auto sel = select_pages(a, reps, iq, {16, G, 16, Aggregation::sum}, K);
        for (const auto& s : sel) {
          REQUIRE(s.eligible > K);
          const std::set<std::int64_t> chosen(s.ranked.begin(), s.ranked.begin() + K);
          INFO("indexer " << indexer[0] << "," << indexer[1] << " G " << G << " K " << K << " group "
                          << s.kv_group << " p " << s.p_begin << " first ranked " << s.ranked[0]);
          for (auto j : truth.needle_pages[static_cast<std::size_t>(s.kv_group)]) CHECK(chosen.count(j) == 1);
        }
      }
    }
  }
  // Fewer pages than needles cannot hold them all: K = 3 keeps 3 of the 4.
  const auto sel = select_pages(a, reps, index_queries(a, {0, 0}), {16, 1, 16, Aggregation::sum}, 3);
  for (const auto& s : sel) {
    const auto& nd = truth.needle_pages[static_cast<std::size_t>(s.kv_group)];
    int hits = 0;
    for (auto j : s.ranked) hits += static_cast<int>(std::count(nd.begin(), nd.end(), j));
    CHECK(hits == 3);
  }
}

TEST_CASE("overlap: intersection over the smaller set", "[route]") {
  CHECK(near(overlap({1, 2, 3}, {2, 3, 4, 5}), 2.0 / 3.0, 1e-12));
  CHECK(near(overlap({7, 1}, {1, 7}), 1.0, 1e-12));
  CHECK(near(overlap({1, 2}, {3, 4}), 0.0, 1e-12));
  CHECK(near(overlap({}, {3, 4}), 1.0, 1e-12));
  CHECK(near(overlap({100000}, {100000, 5}), 1.0, 1e-12));
}
