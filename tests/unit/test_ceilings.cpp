// The worked values of the method doc, section 3 (L = 2^20, c = 16).
#include <cmath>

#include "catch.hpp"
#include "model/ceilings.hpp"

using cisa::compute_ceilings;

namespace {
bool near(double a, double b, double tol) { return std::fabs(a - b) <= tol; }
}  // namespace

TEST_CASE("ceilings reproduce the paper's worked values", "[ceilings]") {
  const auto k8 = compute_ceilings({1 << 20, 8192, 4, 16, 128});
  CHECK(near(k8.nominal_compression, 8.0, 1e-12));
  CHECK(near(k8.ceiling_near_end_prefill, 7.53, 0.005));
  CHECK(near(k8.ceiling_full_prefill, 4.13, 0.005));
  CHECK(near(k8.ceiling_decode, 6.40, 0.005));
  const auto k4 = compute_ceilings({1 << 20, 4096, 4, 16, 128});
  CHECK(near(k4.nominal_compression, 16.0, 1e-12));
  CHECK(near(k4.ceiling_near_end_prefill, 14.22, 0.005));
  CHECK(near(k4.ceiling_full_prefill, 7.76, 0.005));
  CHECK(near(k4.ceiling_decode, 10.67, 0.005));
  // With the 128-page window and a half-full tail at K = 4,096.
  CHECK(near(k4.window_kv_only, 15.5, 0.05));
  CHECK(near(k4.window_near_end_prefill, 13.8, 0.05));
  CHECK(near(k4.window_decode, 10.5, 0.05));
}

TEST_CASE("ceilings are exact closed forms", "[ceilings]") {
  const double L = 1 << 20, K = 4096, c = 16, G = 4, T = K * c;
  const auto r = compute_ceilings({1 << 20, 4096, 4, 16, 128});
  CHECK(r.ceiling_near_end_prefill == 2 * L / (2 * K * c + L / (c * G)));
  CHECK(r.ceiling_full_prefill == L * L / (T * T + 2 * K * c * (L - T) + (L * L - T * T) / (2 * c * G)));
}

TEST_CASE("a budget that covers the history is the dense path", "[ceilings]") {
  const auto r = compute_ceilings({65536, 4096, 4, 16, 128});  // K c = L
  CHECK(r.ceiling_near_end_prefill == 1.0);
  CHECK(r.ceiling_full_prefill == 1.0);
  CHECK(r.ceiling_decode == 1.0);
  CHECK(r.window_kv_only == 1.0);
}

TEST_CASE("larger G raises the near-end ceiling toward the K/V-only bound", "[ceilings]") {
  double prev = 0;
  for (int g : {1, 2, 4, 8, 16, 32, 64}) {
    const auto r = compute_ceilings({1 << 20, 4096, g, 16, 128});
    CHECK(r.ceiling_near_end_prefill > prev);
    CHECK(r.ceiling_near_end_prefill < r.nominal_compression);
    prev = r.ceiling_near_end_prefill;
  }
}
