// The decode attention fit recovers a planted floor and gather rate from decode-step-like samples
// and refuses too few; a profile with the decode figures prices the decode step's CISA attention
// by them (prefill unchanged), one without transfers floor_us and gather_bw_tbs, labelled XFER.
#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "profile_figures.hpp"
#include "cisa/presets.hpp"
#include "model/decode_attention_fit.hpp"
#include "model/pricing.hpp"

using namespace cisa;

namespace {
std::vector<DecodeAttentionSample> planted(double floor, double rate, double noise) {
  // bytes of decode steps from 2 x 64K to 128 x 512K, one or two launches
  const double bytes[][2] = {{3.0e7, 2}, {1.4e8, 2}, {2.8e8, 2}, {5.6e8, 2}, {1.1e9, 2},
                             {2.2e9, 1}, {7.0e8, 1}, {4.5e8, 2}, {9.0e8, 1}, {2.0e8, 2}};
  std::vector<DecodeAttentionSample> v;
  int i = 0;
  for (const auto& b : bytes) {
    const double t = b[1] * floor + b[0] / rate;
    v.push_back({b[0], b[1], t * (1.0 + noise * ((i++ % 3) - 1))});
  }
  return v;
}

// A point of `impl` on the H200: q / kv heads, phase, context and batch (K 2,048; G 4 in prefill).
Point cisa_point(const std::string& impl, int q_heads, int kv_heads, Phase phase,
                 std::int64_t context, int batch) {
  Point pt;
  pt.hardware = "h200_sxm";
  pt.geo.q_heads = q_heads;
  pt.geo.kv_heads = kv_heads;
  pt.work.phase = phase;
  pt.work.context_tokens = context;
  pt.work.batch = batch;
  pt.work.prefill_tokens = 512;
  pt.cisa.budget_chunks = 2048;
  pt.cisa.qshare_g = phase == Phase::decode ? 1 : 4;
  pt.cisa_impl = impl;
  return pt;
}
}  // namespace

TEST_CASE("decode attention fit: planted floor and rate come back; too few steps refuse", "[calibration]") {
  const DecodeAttentionFit f = fit_decode_attention(planted(9e-6, 4.5e12, 0.0));
  REQUIRE(f.ok);
  CHECK(f.floor_s == Approx(9e-6).epsilon(1e-6));
  CHECK(f.read_Bps == Approx(4.5e12).epsilon(1e-6));
  CHECK(f.rms_rel < 1e-9);
  const DecodeAttentionFit n = fit_decode_attention(planted(11e-6, 4.2e12, 0.03));
  REQUIRE(n.ok);
  CHECK(n.floor_s == Approx(11e-6).epsilon(0.2));
  CHECK(n.read_Bps == Approx(4.2e12).epsilon(0.05));
  CHECK(n.rms_rel < 0.04);
  std::vector<DecodeAttentionSample> few = planted(9e-6, 4.5e12, 0.0);
  few.resize(2);
  CHECK_FALSE(fit_decode_attention(few).ok);
  CHECK_FALSE(fit_decode_attention(few).note.empty());
}

TEST_CASE("the decode step's CISA attention is priced by the decode figures, prefill by the others",
          "[profiles]") {
  ImplCatalog impls = shipped_impls();
  ImplProfile p = impls.at("cisa_kernels");
  p.attention_decode_floor_us = test::h200_figure(1.0);
  p.attention_decode_gather_bw_tbs = test::h200_figure(9.0);
  impls["with_decode"] = p;
  p.attention_decode_floor_us = PerCard{};
  p.attention_decode_gather_bw_tbs = PerCard{};
  impls["without_decode"] = p;
  Pricer pricer(shipped_cards(), impls, Basis::calibrated);
  auto at = [&](const std::string& impl, Phase phase) {
    const Point pt = cisa_point(impl, 8, 2, phase, 1 << 19, 8);
    return predict(pt, pricer.for_point(pt));
  };
  // A faster gather and a smaller floor: the decode attention is faster, prefill is the same.
  CHECK(at("with_decode", Phase::decode).cisa.attention < 0.7 * at("without_decode", Phase::decode).cisa.attention);
  CHECK(at("with_decode", Phase::terminal_prefill).cisa.attention ==
        at("without_decode", Phase::terminal_prefill).cisa.attention);
  // Without them: the sibling figures, labelled XFER.
  bool labelled = false;
  for (const auto& u : pricer.resolved("h200_sxm", "without_decode").used)
    if (u.field == "attention.decode_gather_bw_tbs")
      labelled = u.figure.label() == Label::XFER && u.figure.value == pricer.resolved("h200_sxm", "without_decode").gather_bw_tbs.value;
  CHECK(labelled);
}

TEST_CASE(
    "decode steps of 32-row tiles take the 32-row decode figures; absent, the 16-row ones (XFER)",
    "[profiles]") {
  ImplCatalog impls = shipped_impls();
  ImplProfile p = impls.at("cisa_kernels");
  p.attention_decode_floor_us = test::h200_figure(9.0);
  p.attention_decode_gather_bw_tbs = test::h200_figure(4.0);
  p.attention_decode_m32_floor_us = PerCard{};
  p.attention_decode_m32_gather_bw_tbs = PerCard{};
  impls["narrow_only"] = p;
  p.attention_decode_m32_floor_us = test::h200_figure(20.0);  // a slower 32-row kernel
  p.attention_decode_m32_gather_bw_tbs = test::h200_figure(2.0);
  impls["with_m32"] = p;
  Pricer pricer(shipped_cards(), impls, Basis::calibrated);
  auto at = [&](const std::string& impl, int r, Phase phase) {
    const Point pt = cisa_point(impl, r, 1, phase, 1 << 20, 2);
    return predict(pt, pricer.for_point(pt)).cisa.attention;
  };
  // 16-row decode tiles (r <= 16) and prefill: unchanged by the 32-row figures.
  CHECK(at("with_m32", 8, Phase::decode) == at("narrow_only", 8, Phase::decode));
  CHECK(at("with_m32", 24, Phase::terminal_prefill) ==
        at("narrow_only", 24, Phase::terminal_prefill));
  // 32-row (r 17-32) and wider decode tiles: the slower figures price them slower.
  CHECK(at("with_m32", 24, Phase::decode) > 1.3 * at("narrow_only", 24, Phase::decode));
  CHECK(at("with_m32", 48, Phase::decode) > 1.3 * at("narrow_only", 48, Phase::decode));
  // Absent: the 16-row decode figures, labelled XFER with the rule; present: MEAS.
  const auto label_of = [&](const std::string& impl, const std::string& field) {
    for (const auto& u : pricer.resolved("h200_sxm", impl).used)
      if (u.field == field) return u.figure;
    return Figure{};
  };
  const Figure x = label_of("narrow_only", "attention.decode_m32_gather_bw_tbs");
  CHECK(x.label() == Label::XFER);
  CHECK(x.value == 4.0);
  CHECK(x.source.find("16-row decode class") != std::string::npos);
  CHECK(label_of("with_m32", "attention.decode_m32_floor_us").label() == Label::MEAS);
  CHECK(label_of("with_m32", "attention.decode_m32_floor_us").value == 20.0);
}
