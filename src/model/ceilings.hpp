// The ceiling view (method doc section 3): per query position, what it must stream once, with
// d_r = d and equal dtypes. Ratios are dense / CISA bytes ("x").
#pragma once

#include <cstdint>

namespace cisa {

struct CeilingInput {
  std::int64_t context_tokens;  // L
  std::int64_t budget_chunks;   // K
  int qshare_g;                 // G
  int chunk_tokens = 16;        // c
  int window_pages = 128;       // W
};

struct Ceilings {
  double nominal_compression;       // L / (K c)
  double ceiling_near_end_prefill;  // R(L) = 2L / (2Kc + L/(cG))
  double ceiling_full_prefill;      // L^2 / (T^2 + 2Kc(L-T) + (L^2-T^2)/(2cG)), T = Kc
  double ceiling_decode;            // R(L) at G = 1
  double window_kv_only;            // L / (Kc + Wc + c/2): window + half-full tail, K/V only
  double window_near_end_prefill;   // + representative scan of N_e = N - W chunks, shared by G
  double window_decode;             // same at G = 1
};

// Returns ratio 1 where the budget covers the history (dense path). Requires L, K, G, c >= 1.
Ceilings compute_ceilings(const CeilingInput& in);

}  // namespace cisa
