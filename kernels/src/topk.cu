// Top-k by radix select, one thread-block cluster of C CTAs (512 or 1,024 threads) per row of up
// to 65,536 scores; CTA `rank` owns the contiguous slice [rank * per,
// (rank + 1) * per) of at most SL keys (SL = 16,384 or 32,768; C = ceil(n / SL) <= 4). Rows few
// enough for one CTA per SM at 16,384 keys per CTA take that slice (decode: 16 rows x 4 CTAs), so a
// thread holds 32 keys instead of 64 (issue 14 session 5); more rows keep the 32,768-key slice, with
// 1,024 threads for 16-bit keys while that is still one CTA per SM (64 rows: 32 keys per thread;
// session 6), else 512 (two CTAs per SM). fp32 scores: 1,024 threads with full keys in shared memory
// (one CTA per SM) while rows x CTAs <= SMs, else 512 threads with 24 of the 32 key bits in shared
// memory (two CTAs per SM; the scores of the few keys a row's last digit needs are read again;
// session 13). The slice is read with evict-first loads (read once).
// Scores -> order-preserving uint32 keys (fp32 scores, or 16-bit keys from the scoring kernel in
// the top half). Each CTA reads its slice once (16-byte loads, all in flight before the first use),
// keeps the keys in shared memory and builds the first digit's histogram. Each radix pass then:
// cluster barrier, every CTA sums the C histograms through distributed shared memory (DSMEM) and
// finds the digit of the K-th largest key (the same in every CTA: integer sums); the next digit's
// histogram counts only the slice's keys that share the prefix. Digits 11 + 11 + 10 bits (fp32) or
// 11 + 5 (16-bit keys); the passes stop early when the K-th key's bin is taken whole. The slice is
// scanned once after the first merge: each thread flags its keys above the first digit's bin and
// in it (the candidates, a few per thread) with two compares per key, then counts the candidates'
// next digit; later passes and the final flags look at the candidates only (issue 14 sessions 4, 6).
// From the same histograms each CTA also gets how many keys above the threshold and equal to it lie
// in the CTAs before it, so every selected page's position in the row is known: each thread stages
// its selected pages' local indices at their positions in shared memory (over the keys), and the
// CTA translates the list through the block table in position order (physical IDs, ascending
// logical order; session 7); the window and tail pages are appended. When the grid is larger than
// what is resident, each CTA prefetches (into L2) the slice of the CTA that will follow it once its
// own slice has landed. On request (TopkArgs::trigger_dependents) a dependent launch may start at
// this kernel's start (the CISA step's attention reads its early part meanwhile; issue 14 session
// 10). Deterministic: no floating-point reductions, ties resolved by index (lower first; -0.0 ties
// with +0.0).
#include <cooperative_groups.h>

#include <algorithm>
#include <type_traits>

#include "cisa_kernels/topk.hpp"
#include "common.cuh"
#include "wgmma.cuh"  // mbarrier helpers

namespace cisa::kernels {
namespace {

namespace cg = cooperative_groups;

constexpr int kMaxN = 65536;    // keys per row
constexpr int kMinSlice = 16384, kMaxSlice = 32768;
constexpr int kMaxCluster = kMaxN / kMinSlice;

// Digit schedule per key width KB, first-digit width B0 and pass: bits [shift, shift + bits) of the
// uint32 key. fp32: B0, then the other 32 - B0 bits in two digits (B0 = 11: 11 + 11 + 10); 16-bit
// keys (in the top half): B0 + (16 - B0). A wider first digit spreads the first histogram's shared
// atomics over more bins (scores cluster in a few exponents) at the cost of a longer first merge.
template <int KB, int B0, int P>
struct Digit {
  static constexpr int rest = KB - B0;
  static constexpr int bits =
      P == 0 ? B0 : (KB == 32 ? (P == 1 ? rest - rest / 2 : rest / 2) : rest);
  static constexpr int shift = P == 0 ? 32 - B0 : (KB == 32 ? (P == 1 ? rest / 2 : 0) : 16);
  static constexpr int bins = 1 << bits;
  static constexpr bool last = KB == 32 ? P == 2 : P == 1;
};
// histogram buffers: A for passes 0 and 2, B for pass 1
template <int KB, int B0>
constexpr int hist_a_bins() {
  return 1 << B0;
}
template <int KB, int B0>
constexpr int hist_b_bins() {
  return Digit<KB, B0, 1>::bins;
}

// Per input type: key width, keys per 16-byte load, key type in shared memory (fp32: 128 KB of keys
// at 32,768 per CTA, one CTA of 1,024 threads per SM; 16-bit keys: 64 KB, two CTAs of 512 threads or
// one of 1,024 per SM).
template <class T>
struct KeyIn;
template <>
struct KeyIn<float> {
  using Smem = uint32_t;
  static constexpr int kBits = 32, kVec = 4;
  __device__ static uint32_t key(float f) {
    // -0.0 is +0.0 (the reference compares floats: equal scores tie and go to the lower index)
    const uint32_t u = __float_as_uint(f) == 0x80000000u ? 0u : __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
  __device__ static Smem stored(float f) { return key(f); }
  __device__ static uint32_t widen(uint32_t k) { return k; }
};
template <>
struct KeyIn<uint16_t> {
  using Smem = uint16_t;
  static constexpr int kBits = 16, kVec = 8;
  __device__ static Smem stored(uint16_t k) { return k; }
  __device__ static uint32_t widen(uint32_t k) { return k << 16; }
};

// fp32 scores with 24 of the key's 32 bits in shared memory: the top half (16-bit array, what the
// first digit and the flag scan read) and bits [16, 8) (8-bit array): 96 KB for 32,768 keys, so two
// 512-thread CTAs per SM (issue 14 session 13). The first two digits (bits [32, 10)) come from
// shared memory; the last one, when a row needs it, from the few remaining candidates' scores read
// again from global memory.
struct KeyInF32Trunc {
  using Smem = uint16_t;
  static constexpr int kBits = 32, kVec = 4;
  __device__ static uint32_t key(float f) { return KeyIn<float>::key(f); }
  __device__ static Smem stored(float f) { return static_cast<Smem>(key(f) >> 16); }
  __device__ static uint32_t widen(uint32_t k) { return k << 16; }
};
template <class T, bool TR>
using KeyInT = std::conditional_t<TR, KeyInF32Trunc, KeyIn<T>>;

constexpr int kB0 = 11;  // first digit (12 and 13 bits measured slower: issue 14 session 4, S4-3)

// CTAs of NT threads resident per SM that the register cap is set for: two of 512 threads (16-bit
// keys, or fp32 with 24-bit keys in shared memory), else one of 1,024 (64 registers per thread
// either way)
template <class T, int NT>
constexpr int min_blocks() {
  return NT == 512 ? 2 : 1;
}

template <class T, int SL, bool TR = false>
constexpr int smem_bytes() {
  using In = KeyInT<T, TR>;
  return SL * (static_cast<int>(sizeof(typename In::Smem)) + (TR ? 1 : 0)) +
         (hist_a_bins<In::kBits, kB0>() + hist_b_bins<In::kBits, kB0>()) * 4;
}

// Exclusive block scan (NT threads); *total = block sum.
template <int NT, class V = uint32_t, bool kTrailingSync = true>
__device__ __forceinline__ V block_exclusive_scan(V v, V* warp_sums, V* total) {
  constexpr int kWarps = NT / 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  V x = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const V y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    V w = lane < kWarps ? warp_sums[lane] : V(0);
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const V y = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += y;
    }
    if (lane < kWarps) warp_sums[lane] = w;  // inclusive
  }
  __syncthreads();
  const V before = warp == 0 ? V(0) : warp_sums[warp - 1];
  *total = warp_sums[kWarps - 1];
  if constexpr (kTrailingSync) __syncthreads();
  return before + x - v;
}

// Phase clocks of thread 0 of the first kPhaseCtas CTAs of the last launch (SM cycles; read by
// topk_phase_cycles for the benchmark's breakdown): start, keys loaded + first histogram, first
// merge, second histogram, last merge, flags scanned, (output path entered), output written.
constexpr int kPhaseCtas = 128, kPhases = 8;
__device__ long long g_topk_clk[kPhaseCtas][kPhases];
#define TOPK_MARK(i) \
  if (threadIdx.x == 0 && blockIdx.x < kPhaseCtas) g_topk_clk[blockIdx.x][i] = clock64()
// Start and end (%globaltimer, ns) of each of the first kTimeCtas CTAs of the last launch: when each
// wave's CTAs start and finish (topk_cta_times_us)
constexpr int kTimeCtas = 1024;
__device__ unsigned long long g_topk_gt[kTimeCtas][2];
__device__ __forceinline__ void topk_time_mark(int i) {
  if (threadIdx.x == 0 && blockIdx.x < kTimeCtas) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    g_topk_gt[blockIdx.x][i] = t;
  }
}

struct PassResult {
  uint32_t digit, kk, bin_count, gt_before, eq_before;
};

// One radix pass after the cluster barrier: sums the C CTAs' histograms of BINS bins (highest bin =
// largest keys), finds the bin holding the kk-th largest key and the rank inside it, and, for this
// CTA, how many keys of the CTAs before it lie above that bin (gt_before) and in it (eq_before).
// Digits of more than 32 bins: one block scan of (count in the row | count in the CTAs before) as
// 64-bit pairs gives both at once; the thread whose bins hold the kk-th key publishes the result;
// one barrier after the scan and none trailing (s[] and warp_sums are next written after a cluster
// barrier). Digits of at most 32 bins (the 16-bit keys' second digit): every warp merges on its own
// (lane l = bin BINS - 1 - l; warp scans and a ballot), no block barrier (issue 14 session 7).
template <int NT, int BINS, int CMAX>
__device__ __forceinline__ PassResult merge_select(const cg::cluster_group& cl, uint32_t* hist,
                                                   uint32_t kk, unsigned long long* warp_sums,
                                                   uint32_t* s) {
  const int t = threadIdx.x, lane = t & 31;
  const unsigned rank = cl.block_rank(), C = cl.num_blocks();
  PassResult res;
  if constexpr (BINS <= 32) {
    const int b = BINS - 1 - lane;
    uint32_t tot = 0, bef = 0;
#pragma unroll
    for (unsigned r = 0; r < CMAX; ++r) {
      if (r >= C) break;
      const uint32_t* h = cl.map_shared_rank(hist, static_cast<int>(r));
      const uint32_t c = b >= 0 ? h[b] : 0u;
      tot += c;
      if (r < rank) bef += c;
    }
    uint32_t inc = tot, binc = bef;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const uint32_t y = __shfl_up_sync(0xffffffffu, inc, o);
      const uint32_t z = __shfl_up_sync(0xffffffffu, binc, o);
      if (lane >= o) {
        inc += y;
        binc += z;
      }
    }
    const int L = __ffs(__ballot_sync(0xffffffffu, inc >= kk)) - 1;
    const uint32_t incL = __shfl_sync(0xffffffffu, inc, L), totL = __shfl_sync(0xffffffffu, tot, L);
    const uint32_t bincL = __shfl_sync(0xffffffffu, binc, L);
    const uint32_t befL = __shfl_sync(0xffffffffu, bef, L);
    res.digit = static_cast<uint32_t>(BINS - 1 - L);
    res.kk = kk - (incL - totL);
    res.bin_count = totL;
    res.gt_before = bincL - befL;
    res.eq_before = befL;
    return res;
  } else {
    constexpr int PER = BINS >= NT ? BINS / NT : 1;
    uint32_t tot[PER], bef[PER];
#pragma unroll
    for (int i = 0; i < PER; ++i) tot[i] = bef[i] = 0;
#pragma unroll
    for (unsigned r = 0; r < CMAX; ++r) {
      if (r >= C) break;
      const uint32_t* h = cl.map_shared_rank(hist, static_cast<int>(r));
      uint32_t c[PER];
      if constexpr (PER % 4 == 0) {
#pragma unroll
        for (int q = 0; q < PER / 4; ++q) {
          const uint4 v = *reinterpret_cast<const uint4*>(h + (BINS - 4 * (q + 1) - PER * t));
          c[4 * q] = v.w;
          c[4 * q + 1] = v.z;
          c[4 * q + 2] = v.y;
          c[4 * q + 3] = v.x;
        }
      } else if constexpr (PER == 2) {
        const uint2 v = *reinterpret_cast<const uint2*>(h + (BINS - 2 - 2 * t));
        c[0] = v.y;
        c[1] = v.x;
      } else {
        const int b = BINS - 1 - t;
        c[0] = b >= 0 ? h[b] : 0u;
      }
#pragma unroll
      for (int i = 0; i < PER; ++i) {
        tot[i] += c[i];
        if (r < rank) bef[i] += c[i];
      }
    }
    uint64_t cnt = 0;
#pragma unroll
    for (int i = 0; i < PER; ++i) cnt += tot[i] | (static_cast<uint64_t>(bef[i]) << 32);
    unsigned long long total;
    const uint64_t ab = block_exclusive_scan<NT, unsigned long long, false>(cnt, warp_sums, &total);
    uint32_t above = static_cast<uint32_t>(ab), abef = static_cast<uint32_t>(ab >> 32);
    if (above < kk && kk <= above + static_cast<uint32_t>(cnt)) {
#pragma unroll
      for (int i = 0; i < PER; ++i) {
        if (above + tot[i] >= kk) {
          s[0] = static_cast<uint32_t>(BINS - 1 - (t * PER + i));
          s[1] = kk - above;
          s[2] = abef;
          s[3] = bef[i];
          s[4] = tot[i];
          break;
        }
        above += tot[i];
        abef += bef[i];
      }
    }
    __syncthreads();
    res.digit = s[0];
    res.kk = s[1];
    res.gt_before = s[2];
    res.eq_before = s[3];
    res.bin_count = s[4];
    return res;
  }
}

struct SelectState {
  uint32_t kk, prefix = 0, mask = 0, gt_before = 0, eq_before = 0;
};

// Pass P after the cluster barrier: merge, select the digit, update the state. Returns true when
// the selection is decided (the digit's bin is taken whole, or no bits are left).
template <int NT, int KB, int CMAX, int P>
__device__ __forceinline__ bool radix_pass(const cg::cluster_group& cl, uint32_t* hist,
                                           SelectState& st, unsigned long long* warp_sums,
                                           uint32_t* s_sel) {
  using D = Digit<KB, kB0, P>;
  cl.sync();
  const PassResult r = merge_select<NT, D::bins, CMAX>(cl, hist, st.kk, warp_sums, s_sel);
  st.prefix |= r.digit << D::shift;
  st.mask |= static_cast<uint32_t>(D::bins - 1) << D::shift;
  st.kk = r.kk;
  st.gt_before += r.gt_before;
  st.eq_before = r.eq_before;
  return r.bin_count == st.kk || D::last;
}

// 16-byte read-only load, not allocated in L1, marked evict-first in L2: the slice is read once from
// DRAM, and its lines leave L2 before other lines (e.g. the next wave's prefetched slices)
__device__ __forceinline__ uint4 ld_stream(const void* p, uint64_t pol) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p), "l"(pol));
  return v;
}

__device__ __forceinline__ void bulk_prefetch_l2(const void* p, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
}

// Bulk copy (the copy engine) of `bytes` (a multiple of 16) from global to this CTA's shared
// memory, completing on the mbarrier at `mbar`, with an L2 policy (evict-first)
__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void* src, uint32_t bytes,
                                         uint32_t mbar, uint64_t pol) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], "
      "%2, [%3], %4;\n" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(mbar), "l"(pol)
      : "memory");
}

// fp32 scores with full keys in shared memory (the one-wave shapes: 64 rows of 65,536): the slice
// lands in the key array by bulk copies of kBulkChunk keys, one mbarrier each, all issued by thread 0
// at the start; the threads turn chunk c into keys in place and count its first digit while the
// later chunks land (issue 14 session 15)
template <class T, bool TR>
constexpr bool kBulkLoad = std::is_same_v<T, float> && !TR;

template <class T, int SL, int NT, bool TR>
__global__ void __launch_bounds__(NT, min_blocks<T, NT>())
    topk_kernel(const T* __restrict__ scores, int score_stride, const TopkRow* __restrict__ rows,
                const int* __restrict__ table, int table_stride, int* __restrict__ out,
                int out_stride, int K, int next_wave, int trigger) {
  using In = KeyInT<T, TR>;
  using KS = typename In::Smem;
  constexpr int KB = In::kBits, EPT = SL / NT, B0 = kB0;
  constexpr int CMAX = kMaxN / SL;  // cluster size bound for this slice
  constexpr int CK = 16 / static_cast<int>(sizeof(KS)), NCH = EPT / CK;  // keys per chunk, chunks
  static_assert(NCH == 4 || NCH == 8, "4 or 8 chunks of 16 bytes per thread");
  // chunk c of a thread is read at step (c + t / (8 / NCH)) % NCH: the 8 threads of a quarter warp
  // hit 8 distinct 16-byte bank groups
  constexpr int kRot = NCH == 8 ? 0 : 1;
  extern __shared__ __align__(16) unsigned char tk_smem[];
  KS* keys = reinterpret_cast<KS*>(tk_smem);  // [SL]
  constexpr int kHA = hist_a_bins<KB, B0>(), kHB = hist_b_bins<KB, B0>();
  uint8_t* lo8 = reinterpret_cast<uint8_t*>(keys + SL);  // [SL] truncated fp32 keys: bits [16, 8)
  uint32_t* hist_a = reinterpret_cast<uint32_t*>(lo8 + (TR ? SL : 0));  // [kHA] passes 0 and 2
  uint32_t* hist_b = hist_a + kHA;                                // [kHB] pass 1
  __shared__ unsigned long long warp_sums[32];  // the merges' 64-bit block scans
  __shared__ uint32_t s_sel[5];
  const cg::cluster_group cl = cg::this_cluster();
  const unsigned rank = cl.block_rank(), C = cl.num_blocks();
  const int row_id = static_cast<int>(blockIdx.x / C);
  const TopkRow row = rows[row_id];
  const T* srow = scores + static_cast<std::int64_t>(row_id) * score_stride;
  const int* trow = table + static_cast<std::int64_t>(row.seq) * table_stride;
  int* orow = out + static_cast<std::int64_t>(row_id) * out_stride;
  const int n = row.n_e;
  const int per =
      ((n + static_cast<int>(C) - 1) / static_cast<int>(C) + In::kVec - 1) / In::kVec * In::kVec;
  const int lo = min(n, static_cast<int>(rank) * per), m = min(n, lo + per) - lo;
  const T* s = srow + lo;
  const int tid = threadIdx.x;

  // with `trigger`, a programmatic dependent launch after this one (the CISA step's split
  // attention) may start now: it reads the window pages (block table) while this kernel runs, and
  // waits for it (griddepcontrol.wait) before reading the selections
  if (trigger) detail::pdl_trigger();
  topk_time_mark(0);
  TOPK_MARK(0);
  constexpr int sh0 = Digit<KB, B0, 0>::shift;
  if constexpr (kBulkLoad<T, TR>) {
    const bool aligned = (reinterpret_cast<uintptr_t>(s) & 15u) == 0;
    // 2 keys per thread and chunk: 8 KB chunks at 1,024 threads (16 for 32,768 keys)
    constexpr int kChunk = 2 * NT, kNChunks = SL / kChunk;
    __shared__ __align__(8) uint64_t s_mbar[kNChunks];
    const int mb = aligned ? (m & ~3) : 0;  // keys the copy engine brings (16-byte multiples)
    const uint32_t mbar0 = static_cast<uint32_t>(__cvta_generic_to_shared(s_mbar));
    if (tid == 0 && mb > 0) {
      for (int c = 0; c < kNChunks; ++c) detail::mbar_init(mbar0 + 8 * c, 1);
      detail::fence_mbar_init();
      detail::fence_proxy_async();
      uint64_t pol;
      asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
      const uint32_t kdst = static_cast<uint32_t>(__cvta_generic_to_shared(keys));
      for (int c = 0; c < kNChunks && c * kChunk < mb; ++c) {
        const uint32_t bytes = static_cast<uint32_t>(min(kChunk, mb - c * kChunk)) * 4u;
        detail::mbar_arrive_expect_tx(mbar0 + 8 * c, bytes);
        bulk_g2s(kdst + 4u * c * kChunk, s + c * kChunk, bytes, mbar0 + 8 * c, pol);
      }
    }
    for (int i = tid; i < kHA + kHB; i += NT) hist_a[i] = 0;
    __syncthreads();
    for (int c = 0; c < kNChunks && c * kChunk < mb; ++c) {
      detail::mbar_wait(mbar0 + 8 * c, 0);
      const int j = c * kChunk + 2 * tid;
      if (j < mb) {  // mb is a multiple of 4: the pair lies inside
        uint2 raw = *reinterpret_cast<const uint2*>(keys + j);
        raw.x = In::key(__uint_as_float(raw.x));
        raw.y = In::key(__uint_as_float(raw.y));
        *reinterpret_cast<uint2*>(keys + j) = raw;
        atomicAdd(&hist_a[raw.x >> sh0], 1u);
        atomicAdd(&hist_a[raw.y >> sh0], 1u);
      }
    }
    // the rest: the last m % 4 keys of an aligned slice, or every key of an unaligned one
    for (int j = mb + tid; j < m; j += NT) {
      const uint32_t k = In::key(s[j]);
      keys[j] = k;
      atomicAdd(&hist_a[k >> sh0], 1u);
    }
  } else {
  for (int i = tid; i < kHA + kHB; i += NT) hist_a[i] = 0;
  __syncthreads();
  // the slice's only read: 16-byte loads, all issued before the first use; keys -> shared memory,
  // histogram of the first digit
  constexpr int U = SL / (NT * In::kVec);
  constexpr int UR = U > 8 ? 8 : U;  // loads in flight per thread (registers)
  if ((reinterpret_cast<uintptr_t>(s) & 15u) == 0) {
    uint64_t pol;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
#pragma unroll
    for (int r0 = 0; r0 < U; r0 += UR) {
      uint4 v[UR];
#pragma unroll
      for (int u = 0; u < UR; ++u) {
        const int j = ((r0 + u) * NT + tid) * In::kVec;
        if (j + In::kVec <= m) {
          v[u] = ld_stream(s + j, pol);
        } else if (j < m) {  // partial chunk at the end of the slice
          T tmp[In::kVec];
          for (int e = 0; e < In::kVec; ++e) tmp[e] = j + e < m ? s[j + e] : T(0);
          memcpy(&v[u], tmp, 16);
        }
      }
#pragma unroll
      for (int u = 0; u < UR; ++u) {
        const int j = ((r0 + u) * NT + tid) * In::kVec;
        if (j >= m) break;
        T x[In::kVec];
        memcpy(x, &v[u], 16);
        KS k[In::kVec];
#pragma unroll
        for (int e = 0; e < In::kVec; ++e) k[e] = In::stored(x[e]);
        if constexpr (TR) {
          uint32_t lo = 0;
#pragma unroll
          for (int e = 0; e < In::kVec; ++e) lo |= ((In::key(x[e]) >> 8) & 0xFFu) << (8 * e);
          *reinterpret_cast<uint32_t*>(lo8 + j) = lo;
        }
        if constexpr (sizeof(k) == 16) {
          uint4 kv;
          memcpy(&kv, k, 16);
          *reinterpret_cast<uint4*>(keys + j) = kv;
        } else {
          static_assert(sizeof(k) == 8, "8 or 16 bytes of keys per load");
          uint2 kv;
          memcpy(&kv, k, 8);
          *reinterpret_cast<uint2*>(keys + j) = kv;
        }
#pragma unroll
        for (int e = 0; e < In::kVec; ++e)
          if (j + e < m) atomicAdd(&hist_a[In::widen(k[e]) >> sh0], 1u);
      }
    }
  } else {  // a row that does not start on 16 bytes (score_stride not a multiple of the vector)
    for (int j = tid; j < m; j += NT) {
      const KS k = In::stored(s[j]);
      keys[j] = k;
      if constexpr (TR) lo8[j] = static_cast<uint8_t>(In::key(s[j]) >> 8);
      atomicAdd(&hist_a[In::widen(k) >> sh0], 1u);
    }
  }
  }

  // the slice of the CTA that will take this CTA's place in the next wave (next_wave = CTAs resident
  // at once; 0 = one wave): prefetched into L2 by up to 8 bulk copies of 16 KB once this CTA's own
  // loads have landed, so that CTA's load phase reads L2 instead of waiting on DRAM
  if (next_wave > 0 && tid < 8) {
    const int b2 = static_cast<int>(blockIdx.x) + next_wave;
    if (b2 < static_cast<int>(gridDim.x)) {
      const int row2 = b2 / static_cast<int>(C), rank2 = b2 % static_cast<int>(C);
      const int n2 = rows[row2].n_e;
      const int per2 = ((n2 + static_cast<int>(C) - 1) / static_cast<int>(C) + In::kVec - 1) /
                       In::kVec * In::kVec;
      const int lo2 = min(n2, rank2 * per2), m2 = min(n2, lo2 + per2) - lo2;
      const char* p2 = reinterpret_cast<const char*>(
          scores + static_cast<std::int64_t>(row2) * score_stride + lo2);
      const int bytes = (m2 * static_cast<int>(sizeof(T))) & ~15, off = tid * 16384;
      if ((reinterpret_cast<uintptr_t>(p2) & 15u) == 0 && off < bytes)
        bulk_prefetch_l2(p2 + off, static_cast<uint32_t>(min(16384, bytes - off)));
    }
  }
  // radix passes: cluster barrier (the C histograms complete), merge, select the digit, next
  // histogram
  SelectState st;
  st.kk = static_cast<uint32_t>(K);
  TOPK_MARK(1);
  const bool done0 = radix_pass<NT, KB, CMAX, 0>(cl, hist_a, st, warp_sums, s_sel);
  TOPK_MARK(2);
  // Per-thread flags of the keys it owns (bit b = key base + b): above the threshold (gtm), equal
  // to it (eqm).
  static_assert(EPT <= 64, "flags in one 64-bit mask");
  uint64_t gtm = 0, eqm = 0;
  const int base = tid * EPT;
  // the candidates (eqm) against a longer prefix: above -> gtm, below -> dropped, equal -> kept
  // (and, hist, their next digit counted)
  auto refine = [&](uint32_t* hist, int shift, uint32_t bmask) {
    const uint32_t msk = st.mask, pre = st.prefix;
    const uint64_t cand = eqm;
    eqm = 0;
    for (uint64_t r = cand; r != 0; r &= r - 1) {
      const int b = __ffsll(static_cast<long long>(r)) - 1;
      uint32_t k;
      if constexpr (TR) {  // bits [32, 8) from shared memory; the exact key when the mask reaches
                           // below bit 8 (after the last digit: a few candidates per row)
        k = (static_cast<uint32_t>(keys[base + b]) << 16) |
            (static_cast<uint32_t>(lo8[base + b]) << 8);
        if ((msk & 0xFFu) != 0) k = In::key(__ldg(s + base + b));
      } else {
        k = In::widen(keys[base + b]);
      }
      const uint32_t km = k & msk;
      gtm |= static_cast<uint64_t>(km > pre) << b;
      if (km == pre) {
        eqm |= uint64_t{1} << b;
        if (hist != nullptr) {
          if constexpr (TR) k = In::key(__ldg(s + base + b));  // the last digit: the exact key
          atomicAdd(&hist[(k >> shift) & bmask], 1u);
        }
      }
    }
  };
  using D1 = Digit<KB, B0, 1>;
  // After the first merge one scan of the slice flags the keys above the first digit's bin (gt) and
  // in it (the candidates); the candidates' next digit is counted from their flags afterwards; every
  // later pass looks only at the candidates (a few per thread): no further scan of the slice, no
  // flag pass. The scan has no per-key histogram work (issue 14 session 6): gt <=> k > (prefix |
  // ~mask), candidate <=> k - prefix <= ~mask (unsigned): two compares and two flag bits per key;
  // the slice end is one mask per thread.
  {
    const uint32_t thi = st.prefix | ~st.mask, pre = st.prefix, span = ~st.mask;
    if (base < m) {
#pragma unroll
      for (int c = 0; c < NCH; ++c) {
        const int cc = (c + (tid >> kRot)) & (NCH - 1);
        const uint4 v = *reinterpret_cast<const uint4*>(keys + base + cc * CK);
        KS kv[CK];
        memcpy(kv, &v, 16);
        uint32_t g = 0, q = 0;
#pragma unroll
        for (int e = 0; e < CK; ++e) {
          const uint32_t k = In::widen(kv[e]);
          if (k > thi) g |= 1u << e;
          if (k - pre <= span) q |= 1u << e;
        }
        gtm |= static_cast<uint64_t>(g) << (cc * CK);
        eqm |= static_cast<uint64_t>(q) << (cc * CK);
      }
      const int nv = m - base;
      if (nv < EPT) {
        const uint64_t vm = (uint64_t{1} << nv) - 1;
        gtm &= vm;
        eqm &= vm;
      }
      if (!done0) {
        if constexpr (TR) {  // bits [32, 8) from shared memory
          for (uint64_t r = eqm; r != 0; r &= r - 1) {
            const int b = __ffsll(static_cast<long long>(r)) - 1;
            const uint32_t k = (static_cast<uint32_t>(keys[base + b]) << 16) |
                               (static_cast<uint32_t>(lo8[base + b]) << 8);
            atomicAdd(&hist_b[(k >> D1::shift) & (D1::bins - 1)], 1u);
          }
        } else {
          for (uint64_t r = eqm; r != 0; r &= r - 1) {
            const int b = __ffsll(static_cast<long long>(r)) - 1;
            atomicAdd(&hist_b[(In::widen(keys[base + b]) >> D1::shift) & (D1::bins - 1)], 1u);
          }
        }
      }
    }
  }
  TOPK_MARK(3);
  if (!done0) {
    [[maybe_unused]] const bool done1 = radix_pass<NT, KB, CMAX, 1>(cl, hist_b, st, warp_sums, s_sel);
    if constexpr (KB == 32) {
      using D2 = Digit<KB, B0, 2>;
      if (!done1) {
        // every CTA finished reading the pass-0 histograms before the last barrier: reuse them
        for (int i = tid; i < D2::bins; i += NT) hist_a[i] = 0;
        __syncthreads();
        refine(hist_a, D2::shift, D2::bins - 1);
        radix_pass<NT, KB, CMAX, 2>(cl, hist_a, st, warp_sums, s_sel);
      }
    }
    refine(nullptr, 0, 0u);
  }
  TOPK_MARK(4);
  cl.barrier_arrive();  // the other CTAs may still read this CTA's histograms: wait before exit
  // keep every key above the threshold and the first kk (lowest index) equal to it; one block
  // scan of the flag counts gives each thread its running counts, so each selected page's position
  // in the row is known.
  const uint32_t kk = st.kk;
  // gt in the low half, eq in the high half of one scan: 16-bit halves while a CTA holds at most
  // 32,768 keys (32-bit halves above)
  using Pack = std::conditional_t<(SL > 32768), unsigned long long, uint32_t>;
  constexpr int kHalf = SL > 32768 ? 32 : 16;
  constexpr Pack kLow = (Pack{1} << kHalf) - 1;
  __shared__ Pack pack_sums[32];
  Pack total;
  const Pack before = block_exclusive_scan<NT, Pack>(
      static_cast<Pack>(__popcll(gtm)) | (static_cast<Pack>(__popcll(eqm)) << kHalf), pack_sums,
      &total);
  TOPK_MARK(5);
  const uint32_t g_run = st.gt_before + static_cast<uint32_t>(before & kLow),
                 e_run = st.eq_before + static_cast<uint32_t>(before >> kHalf);
  // The CTA's selected pages take the contiguous positions [start, start + count) of the row, and a
  // thread's own selected keys consecutive positions from g_run + min(e_run, kk): every key above
  // the threshold and its first max(0, kk - e_run) keys equal to it. Each thread stages their local
  // indices at those positions in a list that aliases the keys (every key read ended before the
  // scan's barriers); after a barrier the list is translated through the block table in position
  // order: up to 4 table loads per thread in flight, then coalesced stores (issue 14 session 7;
  // the per-thread translation of session 6 read 32 table lines per warp load).
  const uint32_t cta_gt = static_cast<uint32_t>(total & kLow),
                 cta_eq = static_cast<uint32_t>(total >> kHalf);
  const uint32_t start = st.gt_before + min(st.eq_before, kk);
  const uint32_t count = cta_gt + min(st.eq_before + cta_eq, kk) - min(st.eq_before, kk);
  static_assert(SL <= 65536 && sizeof(KS) >= sizeof(uint16_t), "the list fits over the keys");
  uint16_t* list = reinterpret_cast<uint16_t*>(tk_smem);  // [SL] local indices
  {
    uint64_t sel = gtm | eqm;
    const uint32_t n_eq = __popcll(eqm), keep = kk > e_run ? min(n_eq, kk - e_run) : 0u;
    if (keep < n_eq) {  // drop the equal keys past the kk-th (one thread of the row at most)
      uint64_t drop = eqm;
      for (uint32_t i = 0; i < keep; ++i) drop &= drop - 1;
      sel &= ~drop;
    }
    uint32_t p = g_run + min(e_run, kk) - start;
    for (uint64_t r = sel; r != 0; r &= r - 1)
      list[p++] = static_cast<uint16_t>(base + __ffsll(static_cast<long long>(r)) - 1);
  }
  __syncthreads();
  TOPK_MARK(6);
  {
    const int* tlo = trow + lo;
    int* ostart = orow + start;
    for (uint32_t q0 = tid; q0 < count; q0 += 4 * NT) {
      int pid[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint32_t q = q0 + i * NT;
        pid[i] = q < count ? __ldg(tlo + list[q]) : 0;
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint32_t q = q0 + i * NT;
        if (q < count) ostart[q] = pid[i];
      }
    }
  }
  for (int j = row.n_e + static_cast<int>(rank) * NT + tid; j < row.list_end;
       j += static_cast<int>(C) * NT)
    orow[K + (j - row.n_e)] = trow[j];
  TOPK_MARK(7);
  cl.barrier_wait();
  topk_time_mark(1);
}

template <class T, int SL, int NT, bool TR>
struct LaunchCfg {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  LaunchCfg(int cluster, int n_rows, Stream s) {
    cfg.gridDim = dim3(static_cast<unsigned>(cluster * n_rows));
    cfg.blockDim = dim3(NT);
    cfg.dynamicSmemBytes = smem_bytes<T, SL, TR>();
    cfg.stream = s;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
};

template <class T, int SL, int NT, bool TR>
void set_smem_attr() {
  static bool attr = false;
  if (!attr) {
    CISA_CUDA(cudaFuncSetAttribute(topk_kernel<T, SL, NT, TR>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   smem_bytes<T, SL, TR>()));
    attr = true;
  }
}

template <class T, int SL, int NT, bool TR>
void launch(const TopkArgs& a, const T* scores, int cluster, int n_rows, int resident_ctas,
            Stream s) {
  set_smem_attr<T, SL, NT, TR>();
  LaunchCfg<T, SL, NT, TR> lc(cluster, n_rows, s);
  const cudaLaunchConfig_t& cfg = lc.cfg;
  const int grid = cluster * n_rows;
  const int next_wave = resident_ctas > 0 && grid > resident_ctas ? resident_ctas : 0;
  CISA_CUDA(cudaLaunchKernelEx(&cfg, topk_kernel<T, SL, NT, TR>, scores, a.score_stride, a.rows,
                               static_cast<const int*>(a.table.ids), a.table.stride, a.out,
                               a.out_stride, a.k, next_wave, a.trigger_dependents ? 1 : 0));
  CISA_LAUNCH_CHECK();
}

// Clusters of `cluster` CTAs of the (SL keys, NT threads) kernel resident at once (occupancy query,
// cached).
template <class T, int SL, int NT, bool TR>
int max_active_clusters(int cluster) {
  static int cache[kMaxCluster + 1] = {};
  if (cache[cluster] == 0) {
    int n = 0;
    set_smem_attr<T, SL, NT, TR>();
    LaunchCfg<T, SL, NT, TR> lc(cluster, 1024, nullptr);
    CISA_CUDA(cudaOccupancyMaxActiveClusters(&n, topk_kernel<T, SL, NT, TR>, &lc.cfg));
    cache[cluster] = n > 0 ? n : -1;
  }
  return cache[cluster];
}

// The kernels compiled, as (keys per CTA, threads per CTA): fp32 (16,384 | 32,768, 1,024) with full
// keys in shared memory, (32,768, 512) with 24-bit keys; 16-bit keys (16,384 | 32,768, 512),
// (32,768, 1,024).
template <int SL, int NT, bool TR = false>
struct Shape {
  static constexpr int sl = SL, nt = NT;
  static constexpr bool tr = TR;
};
template <class T, class F>
auto with_shape(int slice, int threads, F&& f) {
  if constexpr (std::is_same_v<T, float>) {
    if (slice == kMinSlice) return f(Shape<kMinSlice, 1024>{});
    if (threads == 512) return f(Shape<kMaxSlice, 512, true>{});
    return f(Shape<kMaxSlice, 1024>{});
  } else {
    if (slice == kMinSlice) return f(Shape<kMinSlice, 512>{});
    if (threads == 1024) return f(Shape<kMaxSlice, 1024>{});
    return f(Shape<kMaxSlice, 512>{});
  }
}

int resident_clusters(bool keys16, int slice, int threads, int cluster) {
  if (keys16)
    return with_shape<uint16_t>(slice, threads, [&](auto sh) {
      using S = decltype(sh);
      return max_active_clusters<uint16_t, S::sl, S::nt, S::tr>(cluster);
    });
  return with_shape<float>(slice, threads, [&](auto sh) {
    using S = decltype(sh);
    return max_active_clusters<float, S::sl, S::nt, S::tr>(cluster);
  });
}

}  // namespace

std::vector<double> topk_cta_times_us(int n_ctas) {
  static unsigned long long h[kTimeCtas][2];
  CISA_CUDA(cudaDeviceSynchronize());
  CISA_CUDA(cudaMemcpyFromSymbol(h, g_topk_gt, sizeof h));
  const int n = std::min(n_ctas, kTimeCtas);
  unsigned long long t0 = ~0ull;
  for (int b = 0; b < n; ++b) t0 = std::min(t0, h[b][0]);
  std::vector<double> d(2 * static_cast<size_t>(n));
  for (int b = 0; b < n; ++b)
    for (int i = 0; i < 2; ++i) d[2 * static_cast<size_t>(b) + i] = double(h[b][i] - t0) * 1e-3;
  return d;
}

std::vector<double> topk_phase_cycles(int n_ctas) {
  static long long h[kPhaseCtas][kPhases];
  CISA_CUDA(cudaDeviceSynchronize());
  CISA_CUDA(cudaMemcpyFromSymbol(h, g_topk_clk, sizeof h));
  std::vector<double> d(kPhases - 1, 0.0);
  const int n = std::min(n_ctas, kPhaseCtas);
  for (int b = 0; b < n; ++b)
    for (int i = 0; i + 1 < kPhases; ++i)
      d[static_cast<size_t>(i)] += double(h[b][i + 1] - h[b][i]) / n;
  return d;
}

// 16,384 keys per CTA when the rows' clusters then take at most one CTA per SM (and are resident at
// once), else 32,768 (2 CTAs per row over 32,768 keys; rows of up to 16,384 keep one CTA of 16,384).
// Measured in issue 14 session 5 (16-bit keys, 65,536 -> 4,096): 16 rows 16.4 us at 4 x 16,384 vs
// 21.0 at 8 x 8,192 and 19.6 at 2 x 32,768; 64 rows (2 CTAs per SM at 4 x 16,384) 30.2 vs 21.9 us.
// Threads per CTA: fp32 1,024, or 512 (24-bit keys in shared memory, two CTAs per SM) at the
// 32,768-key slice when rows x CTAs > SMs (session 13: 256 rows of 65,536 68.6 -> 61.2 us, four
// waves of one CTA per SM -> two of two); for 16-bit keys 512, except 1,024 at the 32,768-key
// slice when rows x CTAs per row <= SMs and the 1,024-thread clusters are all resident (session 6:
// 64 rows 21.8 -> 21.0 us with the old scan; 256 rows stay at 512: two CTAs per SM, 1,024 took 73
// us).
TopkPlan topk_plan(int max_ne, int n_rows, bool keys16) {
  static const int sms = [] {
    int dev = 0, n = 0;
    CISA_CUDA(cudaGetDevice(&dev));
    CISA_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    return n;
  }();
  const int nt_default = keys16 ? 512 : 1024;
  const int c = std::max(1, (max_ne + kMinSlice - 1) / kMinSlice);
  const int res = resident_clusters(keys16, kMinSlice, nt_default, c);
  if (c == 1 || (static_cast<long long>(n_rows) * c <= sms && n_rows <= res))
    return TopkPlan{c, kMinSlice, res, nt_default};
  TopkPlan p;
  p.slice = kMaxSlice;
  p.cluster = std::max(1, (max_ne + kMaxSlice - 1) / kMaxSlice);
  p.threads = nt_default;
  // fp32, more CTAs than SMs: 24-bit keys in shared memory, 512 threads, two CTAs per SM
  // (session 13)
  if (!keys16 && static_cast<long long>(n_rows) * p.cluster > sms) p.threads = 512;
  if (keys16 && static_cast<long long>(n_rows) * p.cluster <= sms) {
    const int r = resident_clusters(true, kMaxSlice, 1024, p.cluster);
    if (n_rows <= r) p.threads = 1024;
  }
  p.resident_clusters = resident_clusters(keys16, p.slice, p.threads, p.cluster);
  return p;
}

void topk_select(const TopkArgs& a, Stream s, Instrument* ins) {
  const auto& rows = *a.rows_host;
  if (rows.empty()) return;
  if ((a.scores == nullptr) == (a.score_keys == nullptr))
    throw std::invalid_argument(
        "topk_select: give exactly one of scores (fp32) and score_keys (16-bit)");
  double ne = 0, appended = 0;
  int max_ne = 0;
  for (const auto& r : rows) {
    if (r.n_e > kMaxN || r.n_e <= a.k)
      throw std::invalid_argument("topk_select: need K < n_e <= 65536");
    ne += r.n_e;
    max_ne = std::max(max_ne, r.n_e);
    appended += r.list_end - r.n_e;
  }
  const double key_bytes = a.scores ? 4.0 : 2.0;
  // scores read once, K + appended ids read (block table) and written
  const double bytes =
      ne * key_bytes + 2.0 * 4.0 * (static_cast<double>(a.k) * rows.size() + appended);
  ScopedLaunch sl(ins, Component::topk, "topk_radix_select", bytes, 0.0, 0.0, s);
  const int n_rows = static_cast<int>(rows.size());
  const TopkPlan p = topk_plan(max_ne, n_rows, a.scores == nullptr);
  const int resident_ctas = p.resident_clusters * p.cluster;
  if (a.scores) {
    with_shape<float>(p.slice, p.threads, [&](auto sh) {
      using S = decltype(sh);
      launch<float, S::sl, S::nt, S::tr>(a, a.scores, p.cluster, n_rows, resident_ctas, s);
    });
  } else {
    with_shape<uint16_t>(p.slice, p.threads, [&](auto sh) {
      using S = decltype(sh);
      launch<uint16_t, S::sl, S::nt, S::tr>(a, reinterpret_cast<const uint16_t*>(a.score_keys),
                                            p.cluster, n_rows, resident_ctas, s);
    });
  }
}

}  // namespace cisa::kernels
