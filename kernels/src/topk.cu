// Top-k by radix select: one CTA (1024 threads) per row, rows of up to 65,536 scores.
// Scores -> order-preserving uint32 keys. Pass 1 (the only full read of the row, coalesced 16-byte
// loads, 4 in flight per thread) stores each key's top 16 bits in shared memory (128 KB) and builds a
// 12-bit histogram -> the digit d12 holding the K-th largest key. Pass 2 (shared memory; warp w owns
// a contiguous block) counts the keys above d12 per block and gathers the keys of digit d12 (~1-2% of
// a row) with their full values; two 10-bit passes over those give the exact K-th largest key T and
// how many keys equal to T to keep (the lowest indices). The candidates are marked in place and the
// output pass walks shared memory in index order (warp ballots, offsets from per-block counts) and
// writes the selected pages in ascending logical order, translated
// to physical IDs through the block table, then appends the window and tail pages.
// Deterministic: no floating-point reductions, ties resolved by index.
#include "cisa_kernels/topk.hpp"
#include "common.cuh"

namespace cisa::kernels {
namespace {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxN = 65536;       // row length held in shared memory as 16-bit key prefixes
constexpr int kCap = 4096;         // candidates (keys sharing the threshold's top 16 bits)
constexpr int kSmem = kMaxN * 2 + 4096 * 4 + kCap * 8;

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

// Exclusive block scan (kThreads threads); *total = block sum.
template <class T>
__device__ __forceinline__ T block_exclusive_scan(T v, T* warp_sums, T* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T x = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const T y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    T w = lane < kWarps ? warp_sums[lane] : T(0);
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const T y = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += y;
    }
    if (lane < kWarps) warp_sums[lane] = w;  // inclusive
  }
  __syncthreads();
  const T before = warp == 0 ? T(0) : warp_sums[warp - 1];
  *total = warp_sums[kWarps - 1];
  __syncthreads();
  return before + x - v;
}

// Given a histogram (BINS, highest bin = largest keys) and kk (rank wanted, from the top), finds the
// bin holding it and the rank inside it. Every thread gets the result.
template <int BINS>
__device__ __forceinline__ void select_digit(const uint32_t* hist, uint32_t kk, uint32_t* warp_sums, uint32_t* s_out,
                                             uint32_t& digit, uint32_t& kk_out) {
  constexpr int PER = (BINS + kThreads - 1) / kThreads;
  const int t = threadIdx.x;
  uint32_t c[PER], cnt = 0;
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int b = BINS - 1 - (t * PER + i);
    c[i] = b >= 0 ? hist[b] : 0u;
    cnt += c[i];
  }
  uint32_t total;
  uint32_t above = block_exclusive_scan<uint32_t>(cnt, warp_sums, &total);
  if (above < kk && kk <= above + cnt) {
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      if (above + c[i] >= kk) {
        s_out[0] = BINS - 1 - (t * PER + i);
        s_out[1] = kk - above;
        break;
      }
      above += c[i];
    }
  }
  __syncthreads();
  digit = s_out[0];
  kk_out = s_out[1];
  __syncthreads();
}

__global__ void __launch_bounds__(kThreads, 1) topk_kernel(const float* __restrict__ scores, int score_stride,
                                                           const TopkRow* __restrict__ rows, const int* __restrict__ table,
                                                           int table_stride, int* __restrict__ out, int out_stride, int K) {
  extern __shared__ __align__(16) unsigned char tk_smem[];
  uint16_t* k16 = reinterpret_cast<uint16_t*>(tk_smem);                      // [kMaxN] top 16 bits of each key
  uint32_t* hist = reinterpret_cast<uint32_t*>(tk_smem + kMaxN * 2);         // [4096]
  uint32_t* cand_key = hist + 4096;                                          // [kCap]
  uint32_t* cand_idx = cand_key + kCap;                                      // [kCap]
  __shared__ uint32_t warp_sums32[32];
  __shared__ uint32_t s_sel[2];
  __shared__ uint32_t s_ncand, s_neqT;
  __shared__ uint32_t s_wsel[kWarps], s_weq[kWarps];
  const TopkRow row = rows[blockIdx.x];
  const float* s = scores + static_cast<std::int64_t>(blockIdx.x) * score_stride;
  const int* trow = table + static_cast<std::int64_t>(row.seq) * table_stride;
  int* orow = out + static_cast<std::int64_t>(blockIdx.x) * out_stride;
  const int n = min(row.n_e, kMaxN);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const uint32_t below = (1u << lane) - 1u;

  // pass 1 (the only full read of the row; 4 x 16-byte loads in flight per thread):
  // 16-bit key prefixes -> shared memory, histogram of the top 12 bits
  for (int i = tid; i < 4096; i += kThreads) hist[i] = 0;
  if (tid == 0) s_ncand = 0;
  __syncthreads();
  for (int i0 = tid * 4; i0 < n; i0 += kThreads * 16) {
    float4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int i = i0 + u * kThreads * 4;
      v[u] = i < n ? load4(s, i, n) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int i = i0 + u * kThreads * 4;
      if (i >= n) break;
      const uint32_t k0 = f2key(v[u].x), k1 = f2key(v[u].y), k2 = f2key(v[u].z), k3 = f2key(v[u].w);
      if (i + 3 < n) {
        uint2 packed;
        packed.x = (k0 >> 16) | (k1 & 0xffff0000u);
        packed.y = (k2 >> 16) | (k3 & 0xffff0000u);
        *reinterpret_cast<uint2*>(k16 + i) = packed;
      } else {
        const uint32_t kk4[4] = {k0, k1, k2, k3};
        for (int e = 0; e < 4 && i + e < n; ++e) k16[i + e] = static_cast<uint16_t>(kk4[e] >> 16);
      }
      atomicAdd(&hist[k0 >> 20], 1u);
      if (i + 1 < n) atomicAdd(&hist[k1 >> 20], 1u);
      if (i + 2 < n) atomicAdd(&hist[k2 >> 20], 1u);
      if (i + 3 < n) atomicAdd(&hist[k3 >> 20], 1u);
    }
  }
  __syncthreads();
  uint32_t d12, kk;
  select_digit<4096>(hist, static_cast<uint32_t>(K), warp_sums32, s_sel, d12, kk);

  // pass 2 (shared memory): warp w owns the contiguous block [w0, w1); count the keys whose 12-bit
  // digit is above d12 (all selected) and gather the candidates (digit == d12) with their full keys
  const int per = (n + kWarps - 1) / kWarps;
  const int w0 = min(n, warp * per), w1 = min(n, w0 + per);
  uint32_t ngt = 0;
  for (int base = w0; base < w1; base += 32) {
    const int i = base + lane;
    const uint32_t b12 = i < w1 ? (static_cast<uint32_t>(k16[i]) >> 4) : 0u;
    const bool gt = i < w1 && b12 > d12, cd = i < w1 && b12 == d12;
    ngt += __popc(__ballot_sync(0xffffffffu, gt));
    if (cd) {
      const uint32_t pos = atomicAdd(&s_ncand, 1u);
      if (pos < kCap) cand_idx[pos] = static_cast<uint32_t>(i);
    }
  }
  if (lane == 0) s_wsel[warp] = ngt;
  if (tid == 0) s_neqT = 0;
  __syncthreads();
  const uint32_t ncand = s_ncand;
  const bool in_smem = ncand <= kCap;
  if (in_smem)  // full keys of the candidates, all gathered in one round of loads
    for (uint32_t c = tid; c < ncand; c += kThreads) cand_key[c] = f2key(s[cand_idx[c]]);
  __syncthreads();
  // passes 3-4: two 10-bit digits below the 12-bit prefix -> the exact K-th largest key T
  uint32_t prefix = d12 << 20, mask = 0xfff00000u;
  for (int shift = 10; shift >= 0; shift -= 10) {
    hist[tid] = 0;  // 1024 bins
    __syncthreads();
    if (in_smem) {
      for (uint32_t c = tid; c < ncand; c += kThreads) {
        const uint32_t key = cand_key[c];
        if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 1023u], 1u);
      }
    } else {
      for (int i = tid; i < n; i += kThreads) {
        if ((static_cast<uint32_t>(k16[i]) >> 4) != d12) continue;
        const uint32_t key = f2key(s[i]);
        if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 1023u], 1u);
      }
    }
    __syncthreads();
    uint32_t d10;
    select_digit<1024>(hist, kk, warp_sums32, s_sel, d10, kk);
    prefix |= d10 << shift;
    mask |= 1023u << shift;
  }
  const uint32_t T = prefix;  // keep keys > T and the first kk keys == T (lowest indices)

  if (in_smem) {
    // how many keys equal T: when all of them are kept (the usual case) no tie ranking is needed
    for (uint32_t c = tid; c < ncand; c += kThreads)
      if (cand_key[c] == T) atomicAdd(&s_neqT, 1u);
    __syncthreads();
    const bool all_eq = s_neqT <= kk;
    // mark each candidate in place: 0xFFFF = selected, 0 = not (every key of bin d12 is a candidate)
    for (uint32_t c = tid; c < ncand; c += kThreads) {
      const uint32_t key = cand_key[c], idx = cand_idx[c];
      bool sel = key > T;
      if (key == T) {
        if (all_eq) {
          sel = true;
        } else {
          uint32_t rank = 0;
          for (uint32_t c2 = 0; c2 < ncand; ++c2) rank += cand_key[c2] == T && cand_idx[c2] < idx;
          sel = rank < kk;
        }
      }
      k16[idx] = sel ? 0xffffu : 0u;
      if (sel) atomicAdd(&s_wsel[idx / per], 1u);
    }
    __syncthreads();
    uint32_t off = 0;
    for (int w2 = 0; w2 < warp; ++w2) off += s_wsel[w2];
    // output pass: selected = digit above d12, or marked
    for (int base = w0; base < w1; base += 32) {
      const int i = base + lane;
      const uint32_t h = i < w1 ? static_cast<uint32_t>(k16[i]) : 0u;
      const bool sel = i < w1 && ((h >> 4) > d12 || h == 0xffffu);
      const uint32_t b = __ballot_sync(0xffffffffu, sel);
      if (sel) orow[off + __popc(b & below)] = trow[i];
      off += __popc(b);
    }
  } else {
    // fallback (more than kCap keys share the threshold's 12-bit digit, e.g. heavy ties):
    // classify every key of bin d12 from global memory, in index order
    auto classify = [&](int i, bool& gt, bool& eq) {
      gt = eq = false;
      if (i >= w1) return;
      const uint32_t b12 = static_cast<uint32_t>(k16[i]) >> 4;
      if (b12 > d12) {
        gt = true;
      } else if (b12 == d12) {
        const uint32_t key = f2key(s[i]);
        gt = key > T;
        eq = key == T;
      }
    };
    uint32_t cgt = 0, ceq = 0;
    for (int base = w0; base < w1; base += 32) {
      bool gt, eq;
      classify(base + lane, gt, eq);
      cgt += __popc(__ballot_sync(0xffffffffu, gt));
      ceq += __popc(__ballot_sync(0xffffffffu, eq));
    }
    __syncthreads();
    if (lane == 0) {
      s_wsel[warp] = cgt;
      s_weq[warp] = ceq;
    }
    __syncthreads();
    uint32_t gt_before = 0, eq_before = 0;
    for (int w2 = 0; w2 < warp; ++w2) {
      gt_before += s_wsel[w2];
      eq_before += s_weq[w2];
    }
    for (int base = w0; base < w1; base += 32) {
      bool gt, eq;
      classify(base + lane, gt, eq);
      const uint32_t bg = __ballot_sync(0xffffffffu, gt), be = __ballot_sync(0xffffffffu, eq);
      const uint32_t g = gt_before + __popc(bg & below), e = eq_before + __popc(be & below);
      if (gt) orow[g + min(e, kk)] = trow[base + lane];
      if (eq && e < kk) orow[g + e] = trow[base + lane];
      gt_before += __popc(bg);
      eq_before += __popc(be);
    }
  }
  for (int j = row.n_e + tid; j < row.list_end; j += kThreads) orow[K + (j - row.n_e)] = trow[j];
}

}  // namespace

void topk_select(const TopkArgs& a, Stream s, Instrument* ins) {
  const auto& rows = *a.rows_host;
  if (rows.empty()) return;
  double ne = 0, appended = 0;
  for (const auto& r : rows) {
    if (r.n_e > kMaxN || r.n_e <= a.k) throw std::invalid_argument("topk_select: need K < n_e <= 65536");
    ne += r.n_e;
    appended += r.list_end - r.n_e;
  }
  // scores read once from HBM (the later passes hit L2), K + appended ids read and written
  const double bytes = ne * 4.0 + 2.0 * 4.0 * (static_cast<double>(a.k) * rows.size() + appended);
  ScopedLaunch sl(ins, Component::topk, "topk_radix_select", bytes, 0.0, 0.0, s);
  static bool attr = false;
  if (!attr) {
    CISA_CUDA(cudaFuncSetAttribute(topk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    attr = true;
  }
  topk_kernel<<<static_cast<unsigned>(rows.size()), kThreads, kSmem, s>>>(a.scores, a.score_stride, a.rows, a.table.ids,
                                                                    a.table.stride, a.out, a.out_stride, a.k);
  CISA_LAUNCH_CHECK();
}

}  // namespace cisa::kernels
