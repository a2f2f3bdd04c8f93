// Test / benchmark support: device buffers, random inputs, paged-cache construction.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cisa_kernels/types.hpp"

namespace harness {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#define HCHECK(x) ::harness::check((x), #x)

template <class T>
struct DevBuf {
  T* p = nullptr;
  size_t n = 0;
  DevBuf() = default;
  explicit DevBuf(size_t count) : n(count) {
    if (n) HCHECK(cudaMalloc(&p, n * sizeof(T)));
  }
  DevBuf(const std::vector<T>& h) : DevBuf(h.size()) { upload(h); }
  ~DevBuf() {
    if (p) cudaFree(p);
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  DevBuf(DevBuf&& o) noexcept : p(o.p), n(o.n) { o.p = nullptr; o.n = 0; }
  void upload(const std::vector<T>& h) { HCHECK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> download() const {
    std::vector<T> h(n);
    if (n) HCHECK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  void poison() { if (n) HCHECK(cudaMemset(p, 0xff, n * sizeof(T))); }  // BF16/fp32 NaN, int -1
};

// Random BF16 normal values generated on the device (fast for GBs).
__global__ inline void fill_normal_kernel(cisa::kernels::bf16_bits* out, size_t n, unsigned long long seed, float sigma) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned long long z = seed + i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float u1 = ((z & 0xffffffu) + 1) * (1.0f / 16777217.0f);
    const float u2 = ((z >> 24) & 0xffffffu) * (1.0f / 16777216.0f);
    const float g = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2) * sigma;
    const unsigned u = __float_as_uint(g);
    out[i] = static_cast<cisa::kernels::bf16_bits>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
}
inline void fill_normal(cisa::kernels::bf16_bits* p, size_t n, unsigned long long seed, float sigma = 1.0f) {
  fill_normal_kernel<<<1024, 256>>>(p, n, seed, sigma);
  HCHECK(cudaGetLastError());
}

// Block tables for sequences of `len` tokens over a randomly permuted page pool.
struct Tables {
  std::vector<int> ids;
  int stride = 0;
  long long num_pages = 0;
};
inline Tables make_tables(const std::vector<int>& lens, std::mt19937_64& rng, int extra_pages = 3) {
  Tables t;
  int maxp = 0;
  long long total = 0;
  for (int l : lens) {
    const int p = (l + 15) / 16;
    maxp = std::max(maxp, p);
    total += p;
  }
  t.stride = maxp;
  t.num_pages = total + extra_pages;
  std::vector<int> perm(static_cast<size_t>(t.num_pages));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  t.ids.assign(lens.size() * static_cast<size_t>(maxp), 0);
  size_t k = 0;
  for (size_t s = 0; s < lens.size(); ++s)
    for (int i = 0; i < (lens[s] + 15) / 16; ++i) t.ids[s * maxp + i] = perm[k++];
  return t;
}

inline std::vector<float> to_float(const std::vector<cisa::kernels::bf16_bits>& v) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); ++i) f[i] = cisa::kernels::bf16_to_float(v[i]);
  return f;
}

}  // namespace harness
