// Small builders shared by the route tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "route/route.hpp"

namespace route_test {

inline bool near(double a, double b, double tol) { return std::abs(a - b) <= tol; }

// Activations with explicit shapes; q and k filled from a seeded normal distribution.
inline cisa::route::LayerActivations random_acts(std::int64_t tokens, std::int64_t positions, int q_heads,
                                                 int kv_heads, int d, unsigned seed,
                                                 double q_scale = 1.0) {
  cisa::route::LayerActivations a;
  a.tokens = tokens;
  a.q_heads = q_heads;
  a.kv_heads = kv_heads;
  a.head_dim = d;
  for (std::int64_t p = 0; p < positions; ++p) a.positions.push_back(tokens - positions + p);
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  a.q.resize(static_cast<std::size_t>(positions * q_heads * d));
  for (auto& v : a.q) v = static_cast<float>(q_scale) * n(rng);
  a.k.resize(static_cast<std::size_t>(tokens * kv_heads * d));
  for (auto& v : a.k) v = n(rng);
  return a;
}

inline double row_sum(const cisa::route::PageMass& m, std::int64_t p, int h) {
  double s = 0;
  for (std::int64_t j = 0; j < m.pages; ++j) s += m.row(p, h)[j];
  return s;
}

}  // namespace route_test
