#include "gpu/cublas_loader.hpp"  // cuBLAS, opened on first use by the GEMM probe
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/probe.hpp"

namespace cisa::gpu {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}

template <class T>
struct DeviceBuffer {
  T* p = nullptr;
  explicit DeviceBuffer(std::size_t n) { check(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Events {
  cudaEvent_t a{}, b{};
  Events() {
    check(cudaEventCreate(&a), "cudaEventCreate");
    check(cudaEventCreate(&b), "cudaEventCreate");
  }
  ~Events() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  float ms() {
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, a, b), "cudaEventElapsedTime");
    return t;
  }
};

// Random bits from a counter hash: fills without host transfers.
__global__ void fill_random(uint32_t* p, std::size_t n, uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 0x9E3779B1u ^ seed;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    p[i] = x;
  }
}

// Bounded BF16 values in [-1, 1): random mantissa and sign, exponent fixed.
__global__ void fill_bf16(__nv_bfloat16* p, std::size_t n, uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 0x9E3779B1u ^ seed;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    p[i] = __float2bfloat16((static_cast<float>(x & 0xFFFF) / 32768.0f) - 1.0f);
  }
}

// 16-byte loads, grid-stride, several in flight; the xor keeps the compiler from dropping them.
__global__ void read_stream(const uint4* __restrict__ p, std::size_t n, uint32_t* sink) {
  uint32_t acc = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride),
                d = __ldcs(p + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^
           d.w;
  }
  for (; i < n; i += stride) {
    const uint4 a = __ldcs(p + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x12345678u) *sink = acc;  // practically never true, but the loads must happen
}

__global__ void empty_kernel() {}

// Keeps the stream busy so that the work timed after it is queued before it starts.
__global__ void spin_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// 16-byte streaming stores, grid-stride; every byte of the buffer is written once.
__global__ void write_stream(uint4* __restrict__ p, std::size_t n, uint32_t seed) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += stride) {
    const uint32_t x = static_cast<uint32_t>(i) ^ seed;
    __stcs(p + i, make_uint4(x, x + 1, x + 2, x + 3));
  }
}

int sm_count() {
  int dev = 0, sms = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
        "cudaDeviceGetAttribute");
  return sms;
}

ProbeResult summarize(std::vector<double> v, std::string method) {
  std::sort(v.begin(), v.end());
  const double med = v[v.size() / 2];
  return {med, (v.back() - v.front()) / med, std::move(method)};
}

// CUDA-event times (ms) of `work` over warm + reps repetitions, the first `warm` dropped.
// `isolated`: the device is idle before each one (a component timed on its own); `before` is
// launched before the first event of each (not timed).
template <typename F, typename B = void (*)()>
std::vector<double> time_ms(F&& work, int reps, int warm = 3, bool isolated = false,
                            B before = [] {}) {
  Events ev;
  std::vector<double> ms;
  for (int rep = 0; rep < warm + reps; ++rep) {
    if (isolated) check(cudaDeviceSynchronize(), "sync");
    before();  // launched before the first event: not timed
    check(cudaEventRecord(ev.a), "record");
    work(rep);
    check(cudaEventRecord(ev.b), "record");
    check(cudaGetLastError(), "probe launch");
    const double t = ev.ms();
    if (rep >= warm) ms.push_back(t);
  }
  return ms;
}

}  // namespace

DeviceInfo query_device() {
  DeviceInfo d;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    d.reason = e != cudaSuccess ? std::string("no CUDA device: ") + cudaGetErrorString(e)
                                : "no CUDA device found";
    cudaGetLastError();
    return d;
  }
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
    d.reason = "cudaGetDeviceProperties failed";
    return d;
  }
  d.available = true;
  d.name = p.name;
  d.sms = p.multiProcessorCount;
  d.l2_bytes = p.l2CacheSize;
  d.memory_bytes = static_cast<double>(p.totalGlobalMem);
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  return d;
}

ProbeResult probe_read_bandwidth_tbs(double bytes) {
  const std::size_t n16 = static_cast<std::size_t>(bytes / 16);
  DeviceBuffer<uint4> buf(n16);
  DeviceBuffer<uint32_t> sink(1);
  fill_random<<<4 * sm_count(), 256>>>(reinterpret_cast<uint32_t*>(buf.p), n16 * 4, 7u);
  check(cudaGetLastError(), "fill_random");
  const int blocks = 8 * sm_count();
  std::vector<double> tbs =
      time_ms([&](int) { read_stream<<<blocks, 512>>>(buf.p, n16, sink.p); }, 10);
  for (double& x : tbs) x = static_cast<double>(n16) * 16 / (x * 1e-3) / 1e12;
  return summarize(tbs, "streaming 16-byte loads (ld.global.cs) over " +
                            std::to_string(static_cast<long long>(bytes / (1 << 20))) + " MiB, " +
                            std::to_string(blocks) + " CTAs x 512 threads, median of 10");
}

ProbeResult probe_copy_bandwidth_tbs(double bytes) {
  const std::size_t n = static_cast<std::size_t>(bytes);
  DeviceBuffer<uint8_t> a(n), b(n);
  fill_random<<<4 * sm_count(), 256>>>(reinterpret_cast<uint32_t*>(a.p), n / 4, 11u);
  std::vector<double> tbs = time_ms(
      [&](int) {
        check(cudaMemcpyAsync(b.p, a.p, n, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
      },
      10);
  for (double& x : tbs) x = 2.0 * static_cast<double>(n) / (x * 1e-3) / 1e12;
  return summarize(tbs, "cudaMemcpyAsync device-to-device of " + std::to_string(n >> 20) +
                            " MiB, read + write counted, median of 10");
}

ProbeResult probe_gemm_bf16_tflops(int n) {
  const std::size_t elems = static_cast<std::size_t>(n) * n;
  DeviceBuffer<__nv_bfloat16> A(elems), B(elems), C(elems);
  fill_bf16<<<4 * sm_count(), 256>>>(A.p, elems, 3u);
  fill_bf16<<<4 * sm_count(), 256>>>(B.p, elems, 5u);
  check(cudaGetLastError(), "fill_bf16");
  const Cublas& cb = cublas();
  cublasHandle_t h{};
  check(cb.create(&h), "cublasCreate");
  const float alpha = 1.0f, beta = 0.0f;
  std::vector<double> tf;
  try {
    tf = time_ms(
        [&](int) {
          check(cb.gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A.p, CUDA_R_16BF, n, B.p,
                             CUDA_R_16BF, n, &beta, C.p, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx");
        },
        10);
    for (double& x : tf) x = 2.0 * n * static_cast<double>(n) * n / (x * 1e-3) / 1e12;
  } catch (...) {
    cb.destroy(h);
    throw;
  }
  cb.destroy(h);
  return summarize(tf, "cuBLAS BF16 GEMM " + std::to_string(n) +
                           "^3, fp32 accumulate, random inputs, median of 10");
}

ProbeResult probe_launch_overhead_us(int launches) {
  std::vector<double> us = time_ms(
      [&](int) {
        for (int i = 0; i < launches; ++i) empty_kernel<<<1, 32>>>();
      },
      6, 2);
  for (double& x : us) x = x * 1e3 / launches;
  return summarize(us, "back-to-back empty kernel launches on one stream (" +
                           std::to_string(launches) + " per repetition), median of 6");
}

ProbeResult probe_write_bandwidth_tbs(double bytes) {
  const std::size_t n16 = static_cast<std::size_t>(bytes / 16);
  DeviceBuffer<uint4> buf(n16);
  const int blocks = 8 * sm_count();
  std::vector<double> tbs = time_ms(
      [&](int rep) { write_stream<<<blocks, 512>>>(buf.p, n16, static_cast<uint32_t>(rep)); }, 10);
  for (double& x : tbs) x = static_cast<double>(n16) * 16 / (x * 1e-3) / 1e12;
  return summarize(tbs, "streaming 16-byte stores (st.global.cs) over " +
                            std::to_string(static_cast<long long>(bytes / (1 << 20))) + " MiB, " +
                            std::to_string(blocks) + " CTAs x 512 threads, median of 10");
}

ProbeResult probe_kernel_floor_us() {
  std::vector<double> us = time_ms([](int) { empty_kernel<<<1, 32>>>(); }, 50, 3, true);
  for (double& x : us) x *= 1e3;
  return summarize(
      us, "one empty kernel between two CUDA events after a device synchronize, median of 50");
}

namespace {
struct PinnedBuffer {
  void* p = nullptr;
  explicit PinnedBuffer(std::size_t n) { check(cudaMallocHost(&p, n), "cudaMallocHost"); }
  ~PinnedBuffer() { cudaFreeHost(p); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
};
std::vector<double> h2d_ms(std::size_t n, int reps) {
  PinnedBuffer host(n);
  std::memset(host.p, 1, n);
  DeviceBuffer<uint8_t> dev(n);
  return time_ms(
      [&](int) {
        check(cudaMemcpyAsync(dev.p, host.p, n, cudaMemcpyHostToDevice), "cudaMemcpyAsync H2D");
      },
      reps, 3, true);
}
}  // namespace

// The step's descriptor copy is queued behind kernels (the index projection), so the copy is timed
// queued behind a ~30 us kernel: events and copy are all enqueued before the GPU reaches them, and
// the host's submission gap that an isolated copy includes (3.7-4.7 us, spread up to 18 %) is out.
ProbeResult probe_h2d_latency_us() {
  constexpr std::size_t n = 256;
  PinnedBuffer host(n);
  std::memset(host.p, 1, n);
  DeviceBuffer<uint8_t> dev(n);
  std::vector<double> us = time_ms(
      [&](int) {
        check(cudaMemcpyAsync(dev.p, host.p, n, cudaMemcpyHostToDevice), "cudaMemcpyAsync H2D");
      },
      50, 3, true, [] { spin_kernel<<<1, 32>>>(60000); });
  for (double& x : us) x *= 1e3;
  return summarize(us,
                   "256-byte cudaMemcpyAsync from pinned memory queued behind a ~30 us kernel, "
                   "between two CUDA events, median of 50");
}

ProbeResult probe_h2d_bandwidth_gbs(double bytes) {
  const std::size_t n = static_cast<std::size_t>(bytes);
  std::vector<double> gbs = h2d_ms(n, 10);
  for (double& x : gbs) x = static_cast<double>(n) / (x * 1e-3) / 1e9;
  return summarize(
      gbs, std::to_string(n >> 20) + " MiB cudaMemcpyAsync from pinned memory, median of 10");
}

std::vector<GemmTiming> probe_projection_gemm(const std::vector<GemmShape>& shapes, int reps) {
  std::size_t mk = 0, kn = 0, mn = 0;
  for (const GemmShape& g : shapes) {
    mk = std::max(mk, std::size_t(g.m) * g.k);
    kn = std::max(kn, std::size_t(g.k) * g.n);
    mn = std::max(mn, std::size_t(g.m) * g.n);
  }
  DeviceBuffer<__nv_bfloat16> W(mk), X(kn), O(mn);
  const std::size_t flush_bytes = std::size_t(256) << 20;
  DeviceBuffer<uint8_t> flush(flush_bytes);
  fill_bf16<<<4 * sm_count(), 256>>>(W.p, mk, 31u);
  fill_bf16<<<4 * sm_count(), 256>>>(X.p, kn, 37u);
  check(cudaGetLastError(), "fill_bf16");
  const Cublas& cb = cublas();
  cublasHandle_t h{};
  check(cb.create(&h), "cublasCreate");
  std::vector<GemmTiming> out;
  try {
    const float one = 1.0f, zero = 0.0f;
    for (const GemmShape& g : shapes) {
      std::vector<double> ms = time_ms(
          [&](int) {
            check(cb.gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, g.m, g.n, g.k, &one, W.p, CUDA_R_16BF, g.m,
                          X.p, CUDA_R_16BF, g.k, &zero, O.p, CUDA_R_16BF, g.m, CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx (projection probe)");
          },
          reps, 2, false,
          [&] { check(cudaMemsetAsync(flush.p, 0x5a, flush_bytes), "L2 flush"); });
      const ProbeResult r = summarize(ms, "");
      out.push_back({g, r.value, r.spread});
    }
  } catch (...) {
    cb.destroy(h);
    throw;
  }
  cb.destroy(h);
  return out;
}

}  // namespace cisa::gpu
