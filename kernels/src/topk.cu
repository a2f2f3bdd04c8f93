// Top-k by radix select: one CTA per row. Scores -> order-preserving uint32 keys; four 8-bit digit
// passes (shared-memory histogram with warp-aggregated atomics) find the K-th largest key T and how
// many keys equal to T to keep (the lowest indices); a final ordered pass (block scans over chunks)
// writes the selected pages in ascending logical order, translated to physical IDs through the block
// table, then appends the window and tail pages. Deterministic: no floating-point reductions.
#include "cisa_kernels/topk.hpp"
#include "common.cuh"

namespace cisa::kernels {
namespace {

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;

__device__ __forceinline__ uint32_t f2key(float f) {
  const uint32_t u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ float4 load4(const float* p, int i, int n) {
  if (i + 3 < n) return *reinterpret_cast<const float4*>(p + i);
  float4 v;
  v.x = i < n ? p[i] : 0.f;
  v.y = i + 1 < n ? p[i + 1] : 0.f;
  v.z = i + 2 < n ? p[i + 2] : 0.f;
  v.w = i + 3 < n ? p[i + 3] : 0.f;
  return v;
}

// Exclusive block scan of one uint32 per thread; returns the exclusive prefix, total in *total.
__device__ __forceinline__ uint32_t block_exclusive_scan(uint32_t v, uint32_t* warp_sums, uint32_t* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint32_t x = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const uint32_t y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    uint32_t w = lane < kWarps ? warp_sums[lane] : 0u;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const uint32_t y = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += y;
    }
    if (lane < kWarps) warp_sums[lane] = w;  // inclusive
  }
  __syncthreads();
  const uint32_t before = warp == 0 ? 0u : warp_sums[warp - 1];
  *total = warp_sums[kWarps - 1];
  __syncthreads();
  return before + x - v;
}

__global__ void __launch_bounds__(kThreads) topk_kernel(const float* __restrict__ scores, int score_stride,
                                                        const TopkRow* __restrict__ rows, const int* __restrict__ table,
                                                        int table_stride, int* __restrict__ out, int out_stride, int K) {
  __shared__ uint32_t hist[256];
  __shared__ uint32_t warp_sums[32];
  __shared__ uint32_t s_digit, s_kk;
  const TopkRow row = rows[blockIdx.x];
  const float* s = scores + static_cast<std::int64_t>(blockIdx.x) * score_stride;
  const int* trow = table + static_cast<std::int64_t>(row.seq) * table_stride;
  int* orow = out + static_cast<std::int64_t>(blockIdx.x) * out_stride;
  const int n = row.n_e;
  const int tid = threadIdx.x, lane = tid & 31;
  uint32_t prefix = 0, mask = 0, kk = static_cast<uint32_t>(K);
  for (int pass = 0; pass < 4; ++pass) {
    const int shift = 24 - 8 * pass;
    for (int i = tid; i < 256; i += kThreads) hist[i] = 0;
    __syncthreads();
    for (int base = 0; base < n; base += kThreads * 4) {
      const int i = base + tid * 4;
      const float4 v = load4(s, i, n);
      const float vals[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const uint32_t key = f2key(vals[e]);
        const bool ok = (i + e < n) && ((key & mask) == prefix);
        const uint32_t bin = ok ? ((key >> shift) & 255u) : 256u + lane;
        const uint32_t peers = __match_any_sync(0xffffffffu, bin);
        if (ok && lane == __ffs(peers) - 1) atomicAdd(&hist[bin], static_cast<uint32_t>(__popc(peers)));
      }
    }
    __syncthreads();
    if (tid < 32) {
      // lane l owns bins 255-8l .. 248-8l (descending)
      uint32_t c[8], cnt = 0;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        c[i] = hist[255 - 8 * lane - i];
        cnt += c[i];
      }
      uint32_t incl = cnt;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const uint32_t y = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += y;
      }
      uint32_t above = incl - cnt;
      if (above < kk && kk <= incl) {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          if (above + c[i] >= kk) {
            s_digit = 255u - 8u * lane - i;
            s_kk = kk - above;
            break;
          }
          above += c[i];
        }
      }
    }
    __syncthreads();
    prefix |= s_digit << shift;
    mask |= 255u << shift;
    kk = s_kk;
    __syncthreads();
  }
  // ordered collect: keys > T all selected, keys == T: the first kk by index
  const uint32_t T = prefix;
  uint32_t base_gt = 0, base_eq = 0;
  for (int base = 0; base < n; base += kThreads * 4) {
    const int i = base + tid * 4;
    const float4 v = load4(s, i, n);
    const float vals[4] = {v.x, v.y, v.z, v.w};
    uint32_t ngt = 0, neq = 0;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const uint32_t key = f2key(vals[e]);
      if (i + e < n) {
        ngt += key > T;
        neq += key == T;
      }
    }
    uint32_t total;
    const uint32_t ex = block_exclusive_scan((ngt << 16) | neq, warp_sums, &total);
    uint32_t gt_before = base_gt + (ex >> 16), eq_before = base_eq + (ex & 0xffffu);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (i + e >= n) break;
      const uint32_t key = f2key(vals[e]);
      if (key > T) {
        orow[gt_before + min(eq_before, kk)] = trow[i + e];
        ++gt_before;
      } else if (key == T) {
        if (eq_before < kk) orow[gt_before + eq_before] = trow[i + e];
        ++eq_before;
      }
    }
    base_gt += total >> 16;
    base_eq += total & 0xffffu;
  }
  for (int j = row.n_e + tid; j < row.list_end; j += kThreads) orow[K + (j - row.n_e)] = trow[j];
}

}  // namespace

void topk_select(const TopkArgs& a, Stream s, Instrument* ins) {
  const auto& rows = *a.rows_host;
  if (rows.empty()) return;
  double ne = 0, appended = 0;
  for (const auto& r : rows) {
    ne += r.n_e;
    appended += r.list_end - r.n_e;
  }
  // scores read once from HBM (the later passes hit L2), K + appended ids read and written
  const double bytes = ne * 4.0 + 2.0 * 4.0 * (static_cast<double>(a.k) * rows.size() + appended);
  ScopedLaunch sl(ins, Component::topk, "topk_radix_select", bytes, 0.0, 0.0, s);
  topk_kernel<<<static_cast<unsigned>(rows.size()), kThreads, 0, s>>>(a.scores, a.score_stride, a.rows, a.table.ids,
                                                                    a.table.stride, a.out, a.out_stride, a.k);
  CISA_LAUNCH_CHECK();
}

}  // namespace cisa::kernels
