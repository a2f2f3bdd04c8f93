// Synthetic inputs and timing on the device, shared by --measure (measure_points.cu) and
// `calibrate` (kernel_rates.cu): a paged KV cache of random BF16 keys and values with pages
// scattered over the pool (and planted high-score pages on request), CUDA-event timing of the
// instrumented components with the L2 flushed, and the "other" work of a forward (index
// projection GEMM + representative update). Internal to src/gpu/.
#pragma once

#include "gpu/cublas_loader.hpp"  // cuBLAS through dlopen (start-up RSS)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "model/point.hpp"
#include "cisa_kernels/cisa_step.hpp"
#include "cisa_kernels/representatives.hpp"
#include "gpu/probe.hpp"

namespace cisa {

namespace {  // each .cu file gets its own copy (internal linkage)

namespace K = cisa::kernels;

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class T>
struct Dev {
  T* p = nullptr;
  std::size_t n = 0;
  explicit Dev(std::size_t count) : n(count) {
    ck(cudaMalloc(&p, std::max<std::size_t>(1, n) * sizeof(T)), "cudaMalloc");
  }
  Dev(const std::vector<T>& h) : Dev(h.size()) {
    ck(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
};

// Gaussian-ish BF16 values (sum of two uniforms), never zeros; a counter hash keeps it on device.
__global__ void fill_bf16(K::bf16_bits* out, std::size_t n, unsigned long long seed, float scale) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned long long z = seed + i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float u1 = (z & 0xffffffu) * (1.0f / 16777216.0f),
                u2 = ((z >> 24) & 0xffffffu) * (1.0f / 16777216.0f);
    const float g = (u1 + u2 - 1.0f) * 2.449f * scale;  // variance ~ scale^2
    const unsigned u = __float_as_uint(g);
    out[i] = static_cast<K::bf16_bits>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
}
void fill(K::bf16_bits* p, std::size_t n, unsigned long long seed, float scale = 1.0f) {
  fill_bf16<<<1024, 256>>>(p, n, seed, scale);
  ck(cudaGetLastError(), "fill_bf16");
}

// Planted structure: a fixed unit direction u (alternating +-1/sqrt(128)) added with weight `alpha`
// to the keys of chosen pages (all 16 tokens, every KV head) or to index queries, so those pages'
// representatives score high for every query: neighbouring selections then share them.
__global__ void plant_pages(K::bf16_bits* k, const int* pages, int n_pages, int kv_heads,
                            float alpha) {
  const std::size_t per_page = std::size_t(16) * kv_heads * 128;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < per_page * n_pages;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t e = std::size_t(pages[i / per_page]) * per_page + i % per_page;
    const float u = ((i % 128) & 1 ? 1.0f : -1.0f) * 0.08838835f;  // 1/sqrt(128)
    const unsigned bits = static_cast<unsigned>(k[e]) << 16;
    const float x = __uint_as_float(bits) + alpha * u;
    const unsigned ux = __float_as_uint(x);
    k[e] = static_cast<K::bf16_bits>((ux + 0x7fffu + ((ux >> 16) & 1u)) >> 16);
  }
}
__global__ void add_direction(K::bf16_bits* p, std::size_t n,
                              float alpha) {  // every 128-vector += alpha u
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float u = ((i % 128) & 1 ? 1.0f : -1.0f) * 0.08838835f;
    const unsigned ux =
        __float_as_uint(__uint_as_float(static_cast<unsigned>(p[i]) << 16) + alpha * u);
    p[i] = static_cast<K::bf16_bits>((ux + 0x7fffu + ((ux >> 16) & 1u)) >> 16);
  }
}

// Keeps the stream busy so that the repetition after it is queued before the GPU reaches it.
__global__ void queue_spin_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void ncu_boundary_kernel(
    int point) {  // marks point boundaries for analysis/ncu_points.py
  if (point < 0 && threadIdx.x == 0) printf("never\n");
}

// One paged cache for every point with the same (batch, context, KV heads).
struct World {
  std::unique_ptr<Dev<K::bf16_bits>> k, v, reps;
  std::unique_ptr<Dev<int>> table;
  K::PagedKV kv;
  K::BlockTable bt;
  std::vector<int> ids;  // host copy of the block table [batch][pages_per_seq]
  int pages_per_seq = 0;
  unsigned long long seed = 0;
  bool planted = false;
  World(int batch, std::int64_t tokens, int kv_heads, unsigned long long seed_) : seed(seed_) {
    pages_per_seq = static_cast<int>((tokens + 15) / 16);
    const std::int64_t pages = std::int64_t(batch) * pages_per_seq + 1;
    std::vector<int> perm(static_cast<std::size_t>(pages));
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937_64 rng(seed);
    std::shuffle(perm.begin(), perm.end(), rng);  // physical pages scattered like a real pool
    ids.resize(std::size_t(batch) * pages_per_seq);
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = perm[i];
    const std::size_t n = std::size_t(pages) * 16 * kv_heads * 128;
    k = std::make_unique<Dev<K::bf16_bits>>(n);
    v = std::make_unique<Dev<K::bf16_bits>>(n);
    reps = std::make_unique<Dev<K::bf16_bits>>(std::size_t(pages) * kv_heads * 128);
    fill(k->p, n, seed * 3 + 1);
    fill(v->p, n, seed * 3 + 2);
    table = std::make_unique<Dev<int>>(ids);
    kv = K::PagedKV{k->p, v->p, pages, kv_heads};
    bt = K::BlockTable{table->p, pages_per_seq};
    K::rebuild_representatives(kv, reps->p, nullptr);
    ck(cudaDeviceSynchronize(), "world");
  }
  // Planted inputs: `hot` logical pages per sequence, drawn from [0, eligible), get keys along u.
  // Re-planting first restores the random keys (same seed), so points never see stale plants.
  void plant(int batch, int hot, int eligible, unsigned long long point_seed) {
    if (planted) {
      fill(k->p, k->n, seed * 3 + 1);
      planted = false;
    }
    if (hot > 0) {
      std::mt19937_64 rng(point_seed);
      std::vector<int> phys;
      std::vector<int> logical(static_cast<std::size_t>(eligible));
      for (int b = 0; b < batch; ++b) {
        std::iota(logical.begin(), logical.end(), 0);
        for (int i = 0; i < hot; ++i) {  // partial Fisher-Yates: `hot` distinct pages
          std::uniform_int_distribution<int> pick(i, eligible - 1);
          std::swap(logical[i], logical[pick(rng)]);
          phys.push_back(ids[std::size_t(b) * pages_per_seq + logical[i]]);
        }
      }
      Dev<int> d(phys);
      plant_pages<<<4096, 256>>>(k->p, d.p, static_cast<int>(phys.size()), kv.kv_heads,
                                 kPlantAlpha);
      ck(cudaGetLastError(), "plant_pages");
      ck(cudaDeviceSynchronize(), "plant");
      planted = true;
    }
    K::rebuild_representatives(kv, reps->p, nullptr);
    ck(cudaDeviceSynchronize(), "reps");
  }
  static constexpr float kPlantAlpha = 6.0f;
  static double bytes(int batch, std::int64_t tokens, int kv_heads) {
    const double pages = double(batch) * double((tokens + 15) / 16) + 1;
    return pages * 16 * kv_heads * 128 * 2 * 2 + pages * kv_heads * 128 * 2;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}

class Timer {
 public:
  Timer() : flush_(std::size_t(256) << 20) {
    ck(cudaDeviceGetAttribute(&clock_khz_, cudaDevAttrClockRate, 0), "clock rate");
  }
  double settle_ms = 0;  // idle time after each flush, before the repetition (diagnostic; 0: none)
  // A spin kernel this long after each flush, so the whole repetition is submitted before the GPU
  // reaches it: the components' CUDA-event times hold GPU time, not the host's submission (the
  // index projection's cuBLAS call took 50-110 us of host time, timed whenever it outlasted the
  // flush; results/h200/session12_other). 0: the method before session 12.
  static constexpr double kQueueUs = 1000;
  double queue_us = kQueueUs;
  // Median over reps of f's summed component times (instrumented), L2 flushed before each rep.
  template <class F>
  std::map<std::string, double> components(F&& f, int reps) {
    std::map<std::string, std::vector<double>> per;
    for (int i = 0; i < reps; ++i) {
      ck(cudaMemsetAsync(flush_.p, i & 0xff, flush_.n), "flush");
      if (settle_ms > 0) {  // diagnostic: the GPU idle before the repetition (clocks, power)
        ck(cudaDeviceSynchronize(), "settle");
        std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(settle_ms * 1e3)));
      }
      if (queue_us > 0)  // the repetition queued behind a spin: host submission time not timed
        queue_spin_kernel<<<1, 32>>>(static_cast<long long>(queue_us * 1e-3 * clock_khz_));
      K::Instrument ins;
      f(&ins);
      std::map<std::string, double> sum;
      for (const auto& r : ins.collect()) {
        sum[K::component_name(r.component)] += r.ms;
        // `other` is two kernels (the index projection, the representative update): each apart.
        if (r.component == K::Component::other) sum["other:" + r.kernel] += r.ms;
      }
      for (const auto& [c, ms] : sum) per[c].push_back(ms);
    }
    std::map<std::string, double> out;
    for (auto& [c, v] : per) out[c] = median(v);
    return out;
  }

 private:
  Dev<unsigned char> flush_;
  int clock_khz_ = 0;  // SM clock, for the spin's cycles
};

// The "other" component of a CISA forward: the index projection iq = W_idx x for the sparse
// positions (one cuBLAS BF16 GEMM, [kv_heads*128] x hidden times hidden x N) and the
// representative update for the pages this forward completes.
struct OtherWork {
  cublasHandle_t h{};
  std::unique_ptr<Dev<K::bf16_bits>> w, x, out;
  std::unique_ptr<Dev<int>> filled;
  int m = 0, n = 0, k = 0, n_filled = 0;
  // projection = false: no index projection (designs scoring with the heads' own queries, Quest).
  OtherWork(const Point& p, const K::CisaPlan& plan, const World& world, bool projection = true) {
    for (const auto& r : plan.score_rows)
      if (projection && r.kv_head == 0) n += r.n_q;  // sparse positions of the whole batch
    m = p.geo.kv_heads * 128;
    k = p.geo.hidden;
    if (n > 0) {
      w = std::make_unique<Dev<K::bf16_bits>>(std::size_t(m) * k);
      x = std::make_unique<Dev<K::bf16_bits>>(std::size_t(k) * n);
      out = std::make_unique<Dev<K::bf16_bits>>(std::size_t(m) * n);
      fill(w->p, w->n, 31, 0.02f);
      fill(x->p, x->n, 37);
      if (gpu::cublas().create(&h) != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error("cublasCreate failed");
    }
    // Pages completed by this forward: logical pages [start/16, (start+P)/16) of every sequence.
    const std::int64_t end = p.work.context_tokens, start = end - positions_per_forward(p.work);
    std::vector<int> ids;
    for (int b = 0; b < p.work.batch; ++b)
      for (std::int64_t j = start / 16; j < end / 16; ++j)
        ids.push_back(world.ids[std::size_t(b) * world.pages_per_seq + j]);
    n_filled = static_cast<int>(ids.size());
    if (n_filled > 0) filled = std::make_unique<Dev<int>>(ids);
  }
  ~OtherWork() {
    if (h) gpu::cublas().destroy(h);
  }
  void run(const World& world, K::Instrument* ins) {
    if (n > 0) {
      K::ScopedLaunch sl(ins, K::Component::other, "index_projection",
                         2.0 * (double(m) * k + double(k) * n + double(m) * n),
                         2.0 * m * double(n) * k, 2.0 * m * double(n) * k, nullptr);
      const float one = 1.0f, zero = 0.0f;
      if (gpu::cublas().gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, w->p, CUDA_R_16BF, m, x->p,
                       CUDA_R_16BF, k, &zero, out->p, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error("cublasGemmEx (index projection) failed");
    }
    if (n_filled > 0)
      K::update_representatives(world.kv, filled->p, n_filled, world.reps->p, nullptr, ins);
  }
};

}  // namespace

}  // namespace cisa
