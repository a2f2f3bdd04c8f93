// Shared vocabulary of the kernel library: BF16 storage on the host, fixed geometry constants.
// Free of CUDA and simulator types so plain C++ code (the simulator, the CPU references) can use it.
#pragma once
#include <cstdint>
#include <cstring>

namespace cisa::kernels {

inline constexpr int kPageTokens = 16;  // c: chunk = KV page size (tokens)
inline constexpr int kHeadDim = 128;    // d = d_r

// BF16 stored as raw bits on the host (the device code reinterprets them as __nv_bfloat16).
using bf16_bits = std::uint16_t;

inline float bf16_to_float(bf16_bits b) {
  std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Round to nearest even (NaN kept as a quiet NaN).
inline bf16_bits float_to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0) return static_cast<bf16_bits>((u >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<bf16_bits>((u + rounding) >> 16);
}

inline float round_bf16(float f) { return bf16_to_float(float_to_bf16(f)); }

}  // namespace cisa::kernels
