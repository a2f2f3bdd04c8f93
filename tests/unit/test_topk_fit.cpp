// The top-k calibration fit recovers the model's parameters from shapes laid out as calibrate's are.
#include <cmath>
#include <vector>

#include "catch.hpp"
#include "model/topk_fit.hpp"

using cisa::TopkFit;
using cisa::TopkSample;
using cisa::fit_topk;

namespace {
// Samples of t = floor + waves x (cta + key passes / key rate + ids / id rate), perturbed by `noise`.
std::vector<TopkSample> samples(double floor, double cta, double key_rate, double id_rate,
                                const std::vector<double>& noise) {
  const double shapes[5][3] = {{1, 224, 80}, {32, 65408, 2048}, {63, 16128, 4096}, {32, 65408, 512}, {125, 4080, 520}};
  std::vector<TopkSample> out;
  for (int i = 0; i < 5; ++i) {
    const double w = shapes[i][0], k = shapes[i][1], ids = shapes[i][2];
    const double t = floor + w * (cta + k / key_rate + ids / id_rate);
    out.push_back({w, k, ids, t * (1.0 + noise[static_cast<std::size_t>(i)])});
  }
  return out;
}
}  // namespace

TEST_CASE("top-k fit: exact samples give back every parameter", "[calibration]") {
  const TopkFit f = fit_topk(samples(8e-6, 3e-6, 17e9, 1.3e9, {0, 0, 0, 0, 0}));
  REQUIRE(f.ok);
  CHECK(f.floor_s == Approx(8e-6).epsilon(1e-6));
  CHECK(f.cta_s == Approx(3e-6).epsilon(1e-6));
  CHECK(f.key_passes_per_s == Approx(17e9).epsilon(1e-6));
  CHECK(f.ids_per_s == Approx(1.3e9).epsilon(1e-6));
  CHECK(f.rms_rel < 1e-9);
}

TEST_CASE("top-k fit: 2 % noise moves the parameters a little, the residual says so", "[calibration]") {
  const TopkFit f = fit_topk(samples(8e-6, 3e-6, 17e9, 1.3e9, {0.02, -0.02, 0.01, -0.01, 0.02}));
  REQUIRE(f.ok);
  CHECK(f.cta_s == Approx(3e-6).epsilon(0.3));
  CHECK(f.key_passes_per_s == Approx(17e9).epsilon(0.2));
  CHECK(f.rms_rel > 0.001);
  CHECK(f.rms_rel < 0.05);
}

TEST_CASE("top-k fit: without a CTA term in the data it falls back to the three-term form", "[calibration]") {
  // Data made with a negative CTA time (not physical): the four-term solve is refused.
  const TopkFit f = fit_topk(samples(8e-6, -0.05e-6, 17e9, 1.3e9, {0, 0, 0, 0, 0}));
  REQUIRE(f.ok);
  CHECK(f.cta_s == 0.0);
  CHECK(f.note.find("did not solve positive") != std::string::npos);
  CHECK(f.key_passes_per_s > 0);
}

TEST_CASE("top-k fit: too few samples is not a fit", "[calibration]") {
  std::vector<TopkSample> two = samples(8e-6, 3e-6, 17e9, 1.3e9, {0, 0, 0, 0, 0});
  two.resize(2);
  CHECK_FALSE(fit_topk(two).ok);
}
