// HDF5 round trip, atomic replacement, and the stable /points columns.
#include <cmath>
#include <filesystem>
#include <fstream>

#include "catch.hpp"
#include <set>

#include "cisa/errors.hpp"
#include "cisa/evaluate.hpp"
#include "cisa/measure.hpp"
#include "cisa/results.hpp"
#include "cisa/write_hdf5.hpp"

using namespace cisa;
namespace fs = std::filesystem;

TEST_CASE("HDF5 round trip keeps values, units and attributes", "[hdf5]") {
  Table t;
  auto& a = t.add_f64("x", "ms", "a float column");
  auto& b = t.add_i64("n", "tokens", "an int column");
  auto& c = t.add_text("label", "a text column");
  for (int i = 0; i < 100; ++i) {
    a.push_back(i * 0.5);
    b.push_back(std::int64_t{1} << (i % 40));
    c.push_back("row " + std::to_string(i));
  }
  a[3] = std::nan("");
  const fs::path p = fs::temp_directory_path() / "cisa_test_roundtrip.h5";
  write_hdf5(p, {{"points", &t}}, {{"tool_version", "test"}, {"scenario_yaml", "a: 1\n"}});
  const Table r = read_hdf5_group(p, "points");
  REQUIRE(r.rows() == 100);
  const auto& ra = std::get<std::vector<double>>(r.find("x")->data);
  CHECK(ra[1] == 0.5);
  CHECK(std::isnan(ra[3]));
  CHECK(r.find("x")->unit == "ms");
  CHECK(std::get<std::vector<std::int64_t>>(r.find("n")->data)[39] == std::int64_t{1} << 39);
  CHECK(std::get<std::vector<std::string>>(r.find("label")->data)[99] == "row 99");
  CHECK(r.columns().front().name == "x");  // creation order kept
  const Attributes at = read_hdf5_attributes(p);
  CHECK(at.at("scenario_yaml") == "a: 1\n");
  fs::remove(p);
}

TEST_CASE("a failed write leaves the old file intact and no temp file", "[hdf5]") {
  const fs::path p = fs::temp_directory_path() / "cisa_test_atomic.h5";
  Table good;
  good.add_f64("x", "", "").push_back(1.0);
  write_hdf5(p, {{"points", &good}}, {});
  Table ragged;
  ragged.add_f64("x", "", "").push_back(1.0);
  ragged.add_f64("y", "", "");  // different length
  CHECK_THROWS(write_hdf5(p, {{"points", &ragged}}, {}));
  CHECK(read_hdf5_group(p, "points").rows() == 1);
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
    CHECK(e.path().filename().string().find("cisa_test_atomic.h5.tmp") == std::string::npos);
  fs::remove(p);
}

TEST_CASE("the default scenario's /points has the documented columns", "[hdf5]") {
  const Scenario sc = load_scenario("", {});
  const Table t = evaluate_scenario(sc);
  for (const char* name :
       {"model", "hardware", "phase", "context_tokens", "budget_chunks", "qshare_g", "batch", "q_heads", "kv_heads",
        "head_dim", "chunk_tokens", "window_pages", "prefill_tokens", "bytes_kv_dense", "bytes_kv_cisa", "bytes_rep",
        "bytes_meta", "pred_ms_attention_dense", "pred_ms_attention_cisa", "pred_ms_scoring", "pred_ms_topk",
        "pred_ms_setup", "pred_ms_other", "pred_ms_busy_dense", "pred_ms_busy_cisa", "pred_speedup_attention",
        "pred_speedup_busy", "meas_ms_attention_dense", "meas_ms_attention_cisa", "meas_ms_scoring", "meas_ms_topk",
        "meas_ms_setup", "meas_ms_other", "meas_ms_busy_dense", "meas_ms_busy_cisa", "meas_speedup_attention",
        "meas_speedup_busy"}) {
    INFO(name);
    CHECK(t.find(name) != nullptr);
  }
  CHECK(t.rows() == sc.points.size());
  const auto& meas = std::get<std::vector<double>>(t.find("meas_ms_busy_cisa")->data);
  for (double v : meas) CHECK(std::isnan(v));
  const auto& busy_d = std::get<std::vector<double>>(t.find("pred_ms_busy_dense")->data);
  const auto& busy_c = std::get<std::vector<double>>(t.find("pred_ms_busy_cisa")->data);
  for (std::size_t i = 0; i < busy_d.size(); ++i) CHECK(busy_d[i] > busy_c[i]);  // 1M context: CISA wins
}

TEST_CASE("shards partition the points and keep their sweep index", "[hdf5]") {
  const Scenario sc = load_scenario("", {});
  std::size_t rows = 0;
  std::set<std::int64_t> seen;
  for (int i = 0; i < 3; ++i) {
    const Table t = evaluate_scenario(sc, {}, Shard{i, 3});
    for (auto v : std::get<std::vector<std::int64_t>>(t.find("point_index")->data)) {
      CHECK(v % 3 == i);
      CHECK(seen.insert(v).second);
    }
    rows += t.rows();
  }
  CHECK(rows == sc.points.size());
  CHECK_THROWS_AS(parse_shard("3/3"), InputError);
  CHECK_THROWS_AS(parse_shard("1-3"), InputError);
  CHECK(parse_shard("2/5").count == 5);
}

TEST_CASE("errors and their summary from measured columns", "[compare]") {
  const Scenario sc = load_scenario("", {});
  Table t = evaluate_scenario(sc);
  auto col = [&](const std::string& name) -> std::vector<double>& {
    return std::get<std::vector<double>>(const_cast<Column*>(t.find(name))->data);
  };
  // Pretend every component measured 10 % slower than predicted, except one point.
  for (const auto& m : measured_columns()) {
    if (m.find("speedup") != std::string::npos) continue;
    auto& meas = col(m);
    const auto& pred = col(predicted_twin(m));
    for (std::size_t i = 0; i < meas.size(); ++i) meas[i] = pred[i] * 1.1;
  }
  col("meas_ms_topk")[2] = col("pred_ms_topk")[2] * 2.0;
  fill_errors(t);
  CHECK(std::fabs(col("err_attention_cisa")[0] - 0.1) < 1e-12);
  CHECK(std::fabs(col("err_speedup_busy")[0]) < 1e-12);  // uniform 10 % cancels in the ratio
  CHECK(std::fabs(col("err_topk")[2] - 1.0) < 1e-12);
  const auto rows = summarize_errors(t);
  bool saw_topk = false;
  for (const auto& r : rows)
    if (r.component == "topk" && r.phase == "terminal_prefill") {
      saw_topk = true;
      CHECK(r.worst_abs == Approx(1.0));
      CHECK(r.worst_point == 2);
      CHECK(r.verdict.find("misses") != std::string::npos);
    }
  CHECK(saw_topk);
}
