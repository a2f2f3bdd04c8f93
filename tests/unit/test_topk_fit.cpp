// The top-k calibration fit recovers the model's parameters from shapes laid out as calibrate's
// grid is (waves, cluster waves, key passes and IDs on the busiest SM).
#include <cmath>
#include <vector>

#include "catch.hpp"
#include "model/topk_fit.hpp"

using cisa::fit_topk;
using cisa::TopkFit;
using cisa::TopkSample;

namespace {
struct Truth {
  double floor, cta, cluster, key_rate, id_rate;
};
// Samples of t = floor + waves x cta + cluster waves x cluster + key passes / key rate + ids / id
// rate, perturbed by `noise` (cycled).
std::vector<TopkSample> samples(const Truth& p, const std::vector<double>& noise) {
  // waves, cluster waves, key passes, ids: one wave of clusters of 1, 2 and 4, many waves of 1 and
  // 2
  const double shapes[7][4] = {{1, 0, 224, 80},          {1, 1, 65312, 1154},
                               {1, 3, 32696, 1057},      {16, 16, 2092544, 135232},
                               {63, 0, 1017600, 532476}, {32, 0, 130560, 20544},
                               {2, 0, 32320, 2568}};
  std::vector<TopkSample> out;
  for (int i = 0; i < 7; ++i) {
    const double* s = shapes[i];
    const double t =
        p.floor + s[0] * p.cta + s[1] * p.cluster + s[2] / p.key_rate + s[3] / p.id_rate;
    out.push_back(
        {s[0], s[1], s[2], s[3], t * (1.0 + noise[static_cast<std::size_t>(i) % noise.size()])});
  }
  return out;
}
const Truth kTruth{6e-6, 4e-6, 1.5e-6, 7e9, 1.2e9};
}  // namespace

TEST_CASE("top-k fit: exact samples give back every parameter", "[calibration]") {
  const TopkFit f = fit_topk(samples(kTruth, {0}));
  REQUIRE(f.ok);
  CHECK(f.floor_s == Approx(kTruth.floor).epsilon(1e-6));
  CHECK(f.cta_s == Approx(kTruth.cta).epsilon(1e-6));
  CHECK(f.cluster_s == Approx(kTruth.cluster).epsilon(1e-6));
  CHECK(f.key_passes_per_s == Approx(kTruth.key_rate).epsilon(1e-6));
  CHECK(f.ids_per_s == Approx(kTruth.id_rate).epsilon(1e-6));
  CHECK(f.rms_rel < 1e-9);
}

TEST_CASE("top-k fit: 2 % noise moves the parameters a little, the residual says so",
          "[calibration]") {
  const TopkFit f = fit_topk(samples(kTruth, {0.02, -0.02, 0.01, -0.01, 0.02, -0.015, 0.005}));
  REQUIRE(f.ok);
  CHECK(f.key_passes_per_s == Approx(kTruth.key_rate).epsilon(0.2));
  CHECK(f.ids_per_s == Approx(kTruth.id_rate).epsilon(0.3));
  CHECK(f.rms_rel > 0.001);
  CHECK(f.rms_rel < 0.05);
}

TEST_CASE("top-k fit: terms the data do not support are dropped, and the note says so",
          "[calibration]") {
  // A negative merge time (not physical): the five-term solve is refused, the four-term one holds.
  Truth no_cluster = kTruth;
  no_cluster.cluster = -0.5e-6;
  TopkFit f = fit_topk(samples(no_cluster, {0}));
  REQUIRE(f.ok);
  CHECK(f.cluster_s == 0.0);
  CHECK(f.cta_s > 0);
  CHECK(f.note.find("cluster term did not solve positive") != std::string::npos);
  // No sample with a cluster: the column is empty, the same fallback.
  std::vector<TopkSample> flat = samples(kTruth, {0});
  for (auto& s : flat) s.cluster_waves = 0;
  f = fit_topk(flat);
  REQUIRE(f.ok);
  CHECK(f.cluster_s == 0.0);
}

TEST_CASE("top-k fit: too few samples is not a fit", "[calibration]") {
  std::vector<TopkSample> two = samples(kTruth, {0});
  two.resize(2);
  CHECK_FALSE(fit_topk(two).ok);
}

namespace {
// Decode grid: one wave (rows of 1-4 CTAs) and a two-wave shape; t = floor + (waves - 1) x cta +
// cluster waves x merge + key passes / key rate + ids / id rate.
std::vector<TopkSample> decode_samples(const Truth& p, double merge, double noise) {
  const double shapes[6][4] = {{1, 0, 16384, 2048}, {1, 0, 32768, 2048},  {1, 1, 32768, 1024},
                               {1, 3, 32768, 1024}, {2, 1, 131072, 4096}, {1, 0, 4096, 512}};
  std::vector<TopkSample> out;
  for (int i = 0; i < 6; ++i) {
    const double* s = shapes[i];
    const double t =
        p.floor + (s[0] - 1) * p.cta + s[1] * merge + s[2] / p.key_rate + s[3] / p.id_rate;
    out.push_back({s[0], s[1], s[2], s[3], t * (1.0 + (i % 2 ? noise : -noise))});
  }
  return out;
}
}  // namespace

TEST_CASE(
    "decode top-k fit: floor, merge and key rate come back; CTA and ID terms are the given ones",
    "[calibration]") {
  const TopkFit f =
      cisa::fit_topk_decode(decode_samples(kTruth, 0.3e-6, 0), kTruth.cta, kTruth.id_rate);
  REQUIRE(f.ok);
  CHECK(f.floor_s == Approx(kTruth.floor).epsilon(1e-6));
  CHECK(f.cluster_s == Approx(0.3e-6).epsilon(1e-6));
  CHECK(f.key_passes_per_s == Approx(kTruth.key_rate).epsilon(1e-6));
  CHECK(f.ids_per_s == kTruth.id_rate);
  CHECK(f.rms_rel < 1e-9);
  // 3 % noise: near, and the residual shows it
  const TopkFit g =
      cisa::fit_topk_decode(decode_samples(kTruth, 0.3e-6, 0.03), kTruth.cta, kTruth.id_rate);
  REQUIRE(g.ok);
  CHECK(g.floor_s == Approx(kTruth.floor).epsilon(0.25));
  CHECK(g.rms_rel > 0.01);
}

TEST_CASE("decode top-k fit: no merge cost in the data drops the merge term and says so",
          "[calibration]") {
  const TopkFit f =
      cisa::fit_topk_decode(decode_samples(kTruth, -0.4e-6, 0), kTruth.cta, kTruth.id_rate);
  REQUIRE(f.ok);
  CHECK(f.cluster_s == 0.0);
  CHECK(f.note.find("merge term did not solve positive") != std::string::npos);
  std::vector<TopkSample> two = decode_samples(kTruth, 0, 0);
  two.resize(2);
  CHECK_FALSE(cisa::fit_topk_decode(two, kTruth.cta, kTruth.id_rate).ok);
}
