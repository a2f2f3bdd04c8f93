#include "model/ceilings.hpp"

#include <algorithm>
#include <cmath>

namespace cisa {

namespace {
// R(L) per position: dense streams 2L (K and V), CISA 2Kc plus the representative scan L/c
// shared by G positions. Units of d * bytes, which cancel.
double near_end(double L, double K, double c, double G) {
  if (K * c >= L) return 1.0;
  return 2.0 * L / (2.0 * K * c + L / (c * G));
}
}  // namespace

Ceilings compute_ceilings(const CeilingInput& in) {
  const double L = static_cast<double>(in.context_tokens);
  const double K = static_cast<double>(in.budget_chunks);
  const double c = in.chunk_tokens, G = in.qshare_g, W = in.window_pages;
  Ceilings out{};
  out.nominal_compression = L / (K * c);
  out.ceiling_near_end_prefill = near_end(L, K, c, G);
  out.ceiling_decode = near_end(L, K, c, 1.0);
  const double T = K * c;
  if (T >= L) {
    out.ceiling_full_prefill = 1.0;
  } else {
    const double cisa = T * T + 2.0 * K * c * (L - T) + (L * L - T * T) / (2.0 * c * G);
    out.ceiling_full_prefill = L * L / cisa;
  }
  // With the window and an average half-full tail; the scan covers the eligible chunks only.
  const double N = std::floor(L / c);
  const double Ne = std::max(0.0, N - W);
  if (Ne <= K) {
    out.window_kv_only = out.window_near_end_prefill = out.window_decode = 1.0;
  } else {
    const double kv = 2.0 * (K * c + W * c + c / 2.0);
    out.window_kv_only = 2.0 * L / kv;
    out.window_near_end_prefill = 2.0 * L / (kv + Ne / G);
    out.window_decode = 2.0 * L / (kv + Ne);
  }
  return out;
}

}  // namespace cisa
