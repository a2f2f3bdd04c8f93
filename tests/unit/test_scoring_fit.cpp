// The prefill scoring fit recovers planted terms from shapes laid out as calibrate's top-k grid is
// (reads and writes of the model's byte split, G summed queries), in both stream forms (shared: the
// reads' and writes' times add; overlapped: the slower sets the time), and the model prices prefill
// scoring with them in the form the profile names, the summed-query chain, its own fixed cost.
#include <cmath>
#include <vector>

#include "catch.hpp"
#include "profile_figures.hpp"
#include "cisa/presets.hpp"
#include "model/pricing.hpp"
#include "model/roofline.hpp"
#include "model/scoring_fit.hpp"

using namespace cisa;

namespace {
struct Truth {
  double floor, query, read, write;
};
// (read bytes, write bytes, G) of grid-like shapes: G = 1 write-bound, G >= 16 on 1M read-bound,
// small ones floor-bound.
const double kShapes[][3] = {{6.7e7, 2.7e8, 1},  {6.7e7, 8.4e6, 32}, {2.7e8, 1.7e7, 64}, {1.7e7, 2.1e6, 16},
                             {8.4e5, 6.6e6, 1},  {2.1e6, 5.2e5, 8},  {4.2e6, 4.2e6, 4},  {1.3e8, 2.1e7, 32},
                             {3.4e7, 1.35e8, 1}, {1.1e6, 8.1e5, 2}};
const std::size_t kShapes_n = sizeof kShapes / sizeof kShapes[0];
// Every term of an exact fit is the planted one.
void check_recovers(const ScoringFit& f, const Truth& truth) {
  REQUIRE(f.ok);
  CHECK(f.floor_s == Approx(truth.floor).epsilon(0.02));
  CHECK(f.query_s == Approx(truth.query).epsilon(0.05));
  CHECK(f.read_Bps == Approx(truth.read).epsilon(0.02));
  CHECK(f.write_Bps == Approx(truth.write).epsilon(0.02));
  CHECK(f.rms_rel < 0.005);
}
double bytes_time(double r, double w, ScoringStreams form) {
  return form == ScoringStreams::shared ? r + w : std::max(r, w);
}
std::vector<ScoringSample> samples(const Truth& p, double noise, ScoringStreams form = ScoringStreams::overlapped) {
  std::vector<ScoringSample> out;
  int i = 0;
  for (const auto& s : kShapes) {
    const double fixed = 2 * 0.4e-6;
    const double t = p.floor + p.query * s[2] + bytes_time(s[0] / p.read, s[1] / p.write, form) + fixed;
    out.push_back({s[0], s[1], s[2], fixed, t * (1.0 + noise * ((i++ % 3) - 1))});
  }
  return out;
}
}  // namespace

TEST_CASE("prefill scoring fit: exact samples give back every term", "[calibration]") {
  const Truth truth{16e-6, 0.3e-6, 3.2e12, 1.7e12};
  check_recovers(fit_scoring_prefill(samples(truth, 0.0), ScoringStreams::overlapped), truth);
}

TEST_CASE("prefill scoring fit: shared streams (times add) give back every term, and tell the forms apart",
          "[calibration]") {
  const Truth truth{17e-6, 0.25e-6, 3.6e12, 2.4e12};
  const std::vector<ScoringSample> v = samples(truth, 0.0, ScoringStreams::shared);
  const ScoringFit f = fit_scoring_prefill(v);  // shared is the default form
  check_recovers(f, truth);
  // The other form cannot explain these times as well, and vice versa.
  CHECK(fit_scoring_prefill(v, ScoringStreams::overlapped).rms_rel > 5 * f.rms_rel + 0.01);
  const std::vector<ScoringSample> o = samples(truth, 0.0, ScoringStreams::overlapped);
  CHECK(fit_scoring_prefill(o).rms_rel > fit_scoring_prefill(o, ScoringStreams::overlapped).rms_rel + 0.01);
}

TEST_CASE("prefill scoring fit: noisy samples stay near, too few or one-sided shapes refuse", "[calibration]") {
  const Truth truth{10e-6, 0.5e-6, 2.5e12, 2.0e12};
  const ScoringFit f = fit_scoring_prefill(samples(truth, 0.03), ScoringStreams::overlapped);
  REQUIRE(f.ok);
  CHECK(f.read_Bps == Approx(truth.read).epsilon(0.1));
  CHECK(f.write_Bps == Approx(truth.write).epsilon(0.1));
  CHECK(f.rms_rel < 0.05);
  std::vector<ScoringSample> few = samples(truth, 0.0);
  few.resize(3);
  CHECK_FALSE(fit_scoring_prefill(few, ScoringStreams::overlapped).ok);
  // Only write-bound shapes: the read rate cannot be told.
  std::vector<ScoringSample> writes;
  for (const ScoringSample& s : samples(truth, 0.0))
    if (s.write_bytes / truth.write > s.read_bytes / truth.read) writes.push_back(s);
  REQUIRE(writes.size() >= 4);
  const ScoringFit w = fit_scoring_prefill(writes, ScoringStreams::overlapped);
  CHECK_FALSE(w.ok);
  CHECK_FALSE(w.note.empty());
}

TEST_CASE("prefill scoring fit: an MMA rate where partly filled warpgroups bind, none where none do",
          "[calibration]") {
  const Truth truth{16e-6, 0.2e-6, 3.4e12, 2.0e12};
  const double mma = 400e12;  // full tiles' MMAs faster than their key writes
  std::vector<ScoringSample> v = samples(truth, 0.0);
  // Issued FLOPs of the grid-like shapes: full tiles (2 x 128 x 2 bytes of scores per FLOP ratio)
  for (ScoringSample& s : v) s.issued_flops = s.write_bytes / 2.0 * 256.0;
  // ... and shapes with partly filled groups (issued 1.2-1.7x the useful FLOPs), long contexts
  const double extra[][4] = {{2.6e8, 1.1e8, 4, 9.9e10}, {1.7e8, 6.0e7, 9, 4.5e10}, {2.3e8, 5.0e7, 17, 3.4e10},
                             {1.3e8, 9.0e7, 3, 6.6e10}};
  for (const auto& e : extra) {
    const double fixed = 2 * 0.4e-6;
    const double t = truth.floor + truth.query * e[2] +
                     std::max({e[0] / truth.read, e[1] / truth.write, e[3] / mma}) + fixed;
    v.push_back({e[0], e[1], e[2], fixed, t, e[3]});
  }
  const ScoringFit f = fit_scoring_prefill(v, ScoringStreams::overlapped);
  INFO(f.note << " mma " << f.mma_flops << " rb " << f.read_Bps << " wb " << f.write_Bps << " rms " << f.rms_rel);
  REQUIRE(f.ok);
  CHECK(f.mma_flops == Approx(mma).epsilon(0.03));
  CHECK(f.read_Bps == Approx(truth.read).epsilon(0.05));
  CHECK(f.write_Bps == Approx(truth.write).epsilon(0.05));
  CHECK(f.floor_s == Approx(truth.floor).epsilon(0.05));
  CHECK(f.rms_rel < 0.01);
  CHECK(f.writes_bind);
  // MMAs slower than the writes of full tiles (250 TF/s): the writes bind nowhere, the fit holds.
  std::vector<ScoringSample> slow = samples(truth, 0.0);
  for (ScoringSample& s : slow) {
    s.issued_flops = s.write_bytes / 2.0 * 256.0;
    s.t_s = truth.floor + truth.query * s.summed_queries + s.fixed_s +
            std::max({s.read_bytes / truth.read, s.write_bytes / truth.write, s.issued_flops / 250e12});
  }
  for (std::size_t i = kShapes_n; i < v.size(); ++i) {
    ScoringSample s = v[i];
    s.t_s = truth.floor + truth.query * s.summed_queries + s.fixed_s +
            std::max({s.read_bytes / truth.read, s.write_bytes / truth.write, s.issued_flops / 250e12});
    slow.push_back(s);
  }
  const ScoringFit w = fit_scoring_prefill(slow, ScoringStreams::overlapped);
  REQUIRE(w.ok);
  CHECK(w.mma_flops == Approx(250e12).epsilon(0.03));
  CHECK_FALSE(w.writes_bind);
  CHECK(w.rms_rel < 0.01);
  // The grid alone (MMAs never bind at 400 TF/s): no MMA term.
  std::vector<ScoringSample> grid = samples(truth, 0.0);
  for (ScoringSample& s : grid) s.issued_flops = s.write_bytes / 2.0 * 256.0;
  const ScoringFit g = fit_scoring_prefill(grid, ScoringStreams::overlapped);
  REQUIRE(g.ok);
  CHECK(g.mma_flops == 0.0);
  CHECK(g.floor_s == Approx(truth.floor).epsilon(0.02));
}

TEST_CASE("kernel_time: overlapping streams take the slower one, summed queries add a chain", "[roofline]") {
  KernelCost k;
  k.launches = 1;
  k.ctas = 1000;
  k.dram_bytes = 3e8;
  k.dram_write_bytes = 1e8;
  k.summed_queries = 32;
  Rates r;
  r.sms = 132;
  r.read_bw_Bps = 4e12;
  const ClassRates add{2e12, 1e12, 5e-6};
  ClassRates ovl = add;
  ovl.overlap = true;
  ovl.query_s = 0.25e-6;
  CHECK(kernel_time(k, 1e15, r, add) == Approx(5e-6 + 2e8 / 2e12 + 1e8 / 1e12));
  CHECK(kernel_time(k, 1e15, r, ovl) == Approx(5e-6 + std::max(2e8 / 2e12, 1e8 / 1e12) + 32 * 0.25e-6));
}

TEST_CASE("a profile with prefill scoring figures prices prefill scoring by them in its form, decode not",
          "[profiles]") {
  ImplCatalog impls = shipped_impls();
  ImplProfile p = impls.at("cisa_kernels");
  p.scoring_prefill_floor_us = test::h200_figure(16.0);
  p.scoring_prefill_read_bw_tbs = test::h200_figure(3.2);
  p.scoring_prefill_write_bw_tbs = test::h200_figure(1.7);
  p.scoring_prefill_query_us = test::h200_figure(0.3);
  p.scoring_prefill_mma_tflops = PerCard{};  // bytes only: the MMA term is tested above
  p.scoring_prefill_streams = ScoringStreams::overlapped;
  impls["with_prefill"] = p;
  p.scoring_prefill_streams = ScoringStreams::shared;
  impls["with_prefill_shared"] = p;
  Pricer pricer(shipped_cards(), impls, Basis::calibrated);
  double h200_step_s = 0;  // the shipped calibration's scoring step (absent: no steps)
  for (const auto& [card, f] : p.scoring_step_us.cards)
    if (card == "h200_sxm") h200_step_s = f.value * 1e-6;
  REQUIRE(h200_step_s > 0);
  auto at = [&](const std::string& impl, Phase phase, int G) {
    Point pt;
    pt.hardware = "h200_sxm";
    pt.geo.q_heads = 4;
    pt.geo.kv_heads = 1;
    pt.work.phase = phase;
    pt.work.context_tokens = 1 << 20;
    pt.work.batch = 8;
    pt.work.prefill_tokens = 512;
    pt.cisa.budget_chunks = 2048;
    pt.cisa.qshare_g = phase == Phase::decode ? 1 : G;
    pt.cisa_impl = impl;
    return predict(pt, pricer.for_point(pt));
  };
  for (int G : {1, 4, 32}) {
    const Prediction a = at("with_prefill", Phase::terminal_prefill, G);
    const KernelCost& sc = a.cost.scoring;
    CHECK(sc.summed_queries == G);
    const double reads = sc.dram_bytes - sc.dram_write_bytes;
    const double want = 16e-6 + 0.3e-6 * G + std::max(reads / 3.2e12, sc.dram_write_bytes / 1.7e12);
    // load steps at the profile's (calibrated) step time on top
    CHECK(a.cisa.scoring >= want * (1 - 1e-9));
    CHECK(a.cisa.scoring <= want + sc.serial_steps * h200_step_s * (1 + 1e-9));
    const Prediction s = at("with_prefill_shared", Phase::terminal_prefill, G);
    const double steps = a.cisa.scoring - want;  // the load steps, the same in both forms
    CHECK(s.cisa.scoring ==
          Approx(16e-6 + 0.3e-6 * G + reads / 3.2e12 + sc.dram_write_bytes / 1.7e12 + steps).epsilon(1e-9));
  }
  // Decode keeps the GEMV's figures: the same time with and without the prefill figures.
  CHECK(at("with_prefill", Phase::decode, 1).cisa.scoring == at("cisa_kernels", Phase::decode, 1).cisa.scoring);
}
