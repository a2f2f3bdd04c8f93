#include <cmath>

#include "catch.hpp"
#include "cisa/errors.hpp"
#include "helpers.hpp"
#include "route/report.hpp"

using namespace cisa::route;
using route_test::near;

namespace {
LayerActivations small_synthetic() {
  SyntheticConfig cfg;
  cfg.tokens = 3000;
  cfg.positions = 48;
  cfg.q_heads = 8;
  cfg.kv_heads = 2;
  cfg.head_dim = 32;
  cfg.needles = 3;
  return make_synthetic(cfg);
}
}  // namespace

TEST_CASE("diagnostics: QShare overlap = 1 when G = 1; W = 0 adds nothing", "[route]") {
  const LayerActivations a = small_synthetic();
  RouteConfig cfg;
  cfg.budgets = {4, 16};
  cfg.qshare_gs = {1, 4};
  cfg.windows = {0, 8};
  cfg.curve_budgets = {1, 2, 8, 32, 64, 1000};
  cfg.lags = {1, 32, 47, 48};
  const LayerReport rep = analyse_layer(a, cfg);
  REQUIRE(rep.rows.size() == 2 * 2 * 2 * (1 + 8));
  for (const auto& row : rep.rows) {
    if (row.qshare_g == 1) CHECK(near(row.qshare_overlap, 1.0, 1e-12));
    else CHECK(row.qshare_overlap <= 1.0);
    if (row.window == 0) {
      CHECK(near(row.recall_mean, row.recall_no_window, 1e-9));
      CHECK(near(row.recall_more_chunks, row.recall_no_window, 1e-9));
    } else {
      CHECK(row.recall_mean >= row.recall_no_window - 1e-9);
    }
    CHECK(row.recall_min <= row.recall_p10 + 1e-12);
    CHECK(row.recall_p10 <= row.recall_mean + 1e-12);
    CHECK(row.recall_mean <= 1.0 + 1e-5);
    REQUIRE(row.lag_overlap.size() == 4);
    CHECK(row.lag_overlap[0] >= 0.0);
    CHECK(row.lag_overlap[0] <= 1.0);
    CHECK(!std::isnan(row.lag_overlap[2]));  // one pair: positions 0 and 47
    CHECK(std::isnan(row.lag_overlap[3]));   // no pair 48 apart among 48 positions
  }
  // Curve: non-decreasing in K, reaches 1 once K >= N_e.
  for (std::size_t i = 1; i < rep.curve.size(); ++i)
    if (rep.curve[i].qshare_g == rep.curve[i - 1].qshare_g && rep.curve[i].window == rep.curve[i - 1].window)
      CHECK(rep.curve[i].recall_mean >= rep.curve[i - 1].recall_mean - 1e-9);
  for (const auto& cr : rep.curve)
    if (cr.budget == 1000) {
      CHECK(near(cr.recall_mean, 1.0, 1e-4));
      CHECK(near(cr.recall_min_head, 1.0, 1e-4));
    }

  // Tables and summary.
  const ReportTables t = make_tables({rep}, cfg);
  CHECK(t.routing.rows() == rep.rows.size());
  CHECK(t.curve.rows() == rep.curve.size());
  CHECK(t.init.rows() == static_cast<std::size_t>(2 * 5));
  REQUIRE(t.routing.find("recall_mean") != nullptr);
  REQUIRE(t.routing.find("lag32_overlap") != nullptr);
  const std::string s = summary_text({rep}, cfg);
  CHECK(s.find("initialisation") != std::string::npos);
}

TEST_CASE("diagnostics: per-head rows average to the all-heads row", "[route]") {
  const LayerActivations a = small_synthetic();
  RouteConfig cfg;
  cfg.budgets = {8};
  cfg.qshare_gs = {4};
  cfg.windows = {4};
  cfg.indexer = 4;  // the mean of each group
  const LayerReport rep = analyse_layer(a, cfg);
  REQUIRE(rep.indexer == std::vector<int>{4, 4});
  double sum = 0;
  for (const auto& row : rep.rows)
    if (row.q_head >= 0) sum += row.recall_mean;
  CHECK(near(rep.rows[0].recall_mean, sum / 8.0, 1e-9));
}

TEST_CASE("diagnostics: bad configuration is an input error", "[route]") {
  const LayerActivations a = small_synthetic();
  RouteConfig cfg;
  cfg.budgets = {0};
  CHECK_THROWS_AS(analyse_layer(a, cfg), cisa::InputError);
  cfg.budgets = {4};
  cfg.indexer = 9;
  CHECK_THROWS_AS(analyse_layer(a, cfg), cisa::InputError);
  cfg.indexer = -1;
  cfg.windows = {};
  CHECK_THROWS_AS(analyse_layer(a, cfg), cisa::InputError);
}
