// The index projection fit recovers planted terms from calibrate's 24 shapes, refuses shapes that
// cannot pin a rate down, and the model prices the projection with the profile's figures (XFER
// rules where a profile has none).
#include <cmath>
#include <vector>

#include "catch.hpp"
#include "model/projection_fit.hpp"
#include "model/roofline.hpp"
#include "model/traffic.hpp"

using namespace cisa;

namespace {
std::vector<ProjectionSample> grid(double floor, double rb, double mf, double noise) {
  std::vector<ProjectionSample> out;
  int i = 0;
  for (int m : {128, 256, 512})
    for (int k : {4096, 8192})
      for (int n : {1024, 4096, 16384, 65536}) {
        ProjectionSample s{double(m), double(n), double(k), 0.0};
        s.t_s = projection_time(s, floor, rb, mf) * (1.0 + noise * ((i++ % 3) - 1));
        out.push_back(s);
      }
  return out;
}
}  // namespace

TEST_CASE("projection fit: exact samples give back floor, read and MMA rates", "[calibration]") {
  const ProjectionFit f = fit_projection(grid(9.2e-6, 3.84e12, 775e12, 0.0));
  REQUIRE(f.ok);
  CHECK(f.floor_s == Approx(9.2e-6).epsilon(0.02));
  CHECK(f.read_Bps == Approx(3.84e12).epsilon(0.01));
  CHECK(f.mma_flops == Approx(775e12).epsilon(0.01));
  CHECK(f.rms_rel < 1e-3);
  CHECK(f.worst_rel < 3e-3);
}

TEST_CASE("projection fit: 3 % noise keeps the rates within a few percent", "[calibration]") {
  const ProjectionFit f = fit_projection(grid(6.0e-6, 3.2e12, 650e12, 0.03));
  REQUIRE(f.ok);
  CHECK(f.read_Bps == Approx(3.2e12).epsilon(0.05));
  CHECK(f.mma_flops == Approx(650e12).epsilon(0.05));
  CHECK(f.rms_rel > 0.01);  // the noise shows in the residual
  CHECK(f.worst_rel <= 0.07);
}

TEST_CASE("projection fit: too few shapes or unconstrained rates are refused", "[calibration]") {
  std::vector<ProjectionSample> few = grid(9e-6, 3.8e12, 775e12, 0.0);
  few.resize(3);
  CHECK_FALSE(fit_projection(few).ok);
  CHECK_FALSE(fit_projection(few).note.empty());
  // Only tiny shapes: every time is the floor, no rate is pinned down.
  std::vector<ProjectionSample> tiny;
  for (int n : {1, 2, 3, 4, 5, 6}) tiny.push_back({128, double(n), 128, 9e-6});
  const ProjectionFit f = fit_projection(tiny);
  CHECK_FALSE(f.ok);
  // Unphysical samples are dropped, not fitted.
  std::vector<ProjectionSample> bad = grid(9e-6, 3.8e12, 775e12, 0.0);
  bad[0].t_s = NAN;
  bad[1].t_s = -1;
  CHECK(fit_projection(bad).ok);
}

TEST_CASE("projection time: floor plus the slower of bytes and FLOPs; the roofline uses it",
          "[roofline]") {
  Rates r{};
  r.sms = 132;
  r.read_bw_Bps = 4.5e12;
  r.gemm_flops = 780e12;
  r.projection_floor_s = 9e-6;
  r.projection_read_Bps = 3.8e12;
  r.projection_flops = 770e12;
  ForwardCost f;
  KernelCost& k = f.other;
  k.launches = 1;
  k.ctas = 132;
  k.dram_bytes = 3.8e8;  // 100 us of bytes
  k.dram_write_bytes = 1e7;
  k.flops_issued = 7.7e9;  // 10 us of MMA
  CHECK(projection_time(f, r) == Approx(9e-6 + 100e-6));
  k.flops_issued = 7.7e11;  // 1 ms of MMA
  CHECK(projection_time(f, r) == Approx(9e-6 + 1e-3));
  // No representative update: `other` is the projection alone.
  KernelShape sh;
  sh.sms = 132;
  CHECK(cisa_times(f, sh, r).other == Approx(projection_time(f, r)));
}

namespace {
// calibrate's decode grid (n = one column per sequence): t = floor + bytes / read rate.
std::vector<ProjectionSample> decode_grid(double floor, double rb, double noise) {
  std::vector<ProjectionSample> out;
  int i = 0;
  for (int m : {128, 256, 512, 1024})
    for (int k : {4096, 8192})
      for (int n : {4, 32, 256}) {
        ProjectionSample s{double(m), double(n), double(k), 0.0};
        s.t_s = (floor + s.bytes() / rb) * (1.0 + noise * ((i++ % 3) - 1));
        out.push_back(s);
      }
  return out;
}
}  // namespace

TEST_CASE("decode projection fit: bytes alone recover the floor and read rate through noise",
          "[calibration]") {
  const ProjectionFit exact =
      fit_projection(decode_grid(8.1e-6, 2.9e12, 0.0), ProjectionForm::bytes_only);
  REQUIRE(exact.ok);
  CHECK(exact.floor_s == Approx(8.1e-6).epsilon(0.01));
  CHECK(exact.read_Bps == Approx(2.9e12).epsilon(0.01));
  CHECK(exact.mma_flops == 0);  // no such term
  CHECK(exact.rms_rel < 1e-3);
  const ProjectionFit noisy =
      fit_projection(decode_grid(8.1e-6, 2.9e12, 0.02), ProjectionForm::bytes_only);
  REQUIRE(noisy.ok);
  CHECK(noisy.floor_s == Approx(8.1e-6).epsilon(0.05));
  CHECK(noisy.read_Bps == Approx(2.9e12).epsilon(0.10));
  CHECK(noisy.rms_rel > 0.005);  // the noise shows in the residual
  CHECK(noisy.worst_rel <= 0.05);
  CHECK(noisy.median_rel <= noisy.worst_rel);
  // The prefill form cannot pin an MMA rate on these shapes (no shape bound by its FLOPs).
  CHECK_FALSE(fit_projection(decode_grid(8.1e-6, 2.9e12, 0.0)).ok);
  // Shapes too small to be bound by their bytes leave the read rate free: refused.
  std::vector<ProjectionSample> tiny;
  for (int n : {1, 2, 3, 4, 5, 6}) tiny.push_back({128, double(n), 128, 9e-6});
  CHECK_FALSE(fit_projection(tiny, ProjectionForm::bytes_only).ok);
}

TEST_CASE(
    "a decode step's projection takes the decode floor and read rate when the rates have them",
    "[roofline]") {
  Rates r{};
  r.sms = 132;
  r.read_bw_Bps = 4.5e12;
  r.gemm_flops = 780e12;
  r.projection_floor_s = 9e-6;
  r.projection_read_Bps = 3.6e12;
  r.projection_flops = 800e12;
  ForwardCost f;
  KernelCost& k = f.other;
  k.launches = 1;
  k.ctas = 132;
  k.dram_bytes = 2.9e7;  // 10 us at 2.9 TB/s
  k.dram_write_bytes = 1e5;
  k.flops_issued = 8e8;  // 1 us of MMA
  f.cisa_decode_kernel = true;
  const double prefill_form = projection_time(f, r);
  CHECK(prefill_form == Approx(9e-6 + 2.9e7 / 3.6e12));  // no decode figures: as before
  r.projection_decode_own = true;
  r.projection_decode_floor_s = 7e-6;
  r.projection_decode_read_Bps = 2.9e12;
  CHECK(projection_time(f, r) == Approx(7e-6 + 10e-6));
  k.flops_issued = 8e10;  // 100 us of MMA: the projection's MMA rate still bounds it
  CHECK(projection_time(f, r) == Approx(7e-6 + 100e-6));
  k.flops_issued = 8e8;
  f.cisa_decode_kernel = false;  // prefill ignores the decode figures
  CHECK(projection_time(f, r) == prefill_form);
}
