// Top-k by radix select, one thread-block cluster of C CTAs (1,024 threads for fp32, 512 for 16-bit
// keys) per row of up to 65,536 scores; CTA `rank` owns the contiguous slice [rank * per, (rank + 1) *
// per) of at most SL keys (SL = 8,192, 16,384, 24,576 or 32,768; C = ceil(n / SL) <= 8). Few rows
// take the smallest slice whose clusters all fit on the device at once (decode: 16 rows x 8 CTAs), so
// a thread holds 16-48 keys instead of 64 (issue 14 session 5); many rows keep the 32,768-key slice.
// Scores -> order-preserving uint32 keys (fp32 scores, or 16-bit keys from the scoring kernel in
// the top half). Each CTA reads its slice once (16-byte loads, all in flight before the first use),
// keeps the keys in shared memory and builds the first digit's histogram. Each radix pass then sums
// the C histograms as a reduce-scatter through distributed shared memory (DSMEM): each bin group has
// an owner CTA, every CTA adds its non-zero counts into the owners' sums, cluster barrier, each thread
// reads its group's sums from the owner; the block finds the digit of the K-th largest key (the same
// in every CTA: integer sums); the next digit's histogram counts only the slice's keys that share the
// prefix. Digits 11 + 11 + 10 bits (fp32) or 11 + 5 (16-bit keys); the passes stop early when the
// K-th key's bin is taken whole. The slice is scanned once after the first merge: each thread flags
// its keys above the first digit's bin and in it (the candidates, a few per thread), counting the
// candidates' next digit; later passes and the final flags look at the candidates only (issue 14
// session 4). Each CTA then counts its keys above the threshold and equal to it and hands the counts
// to the CTAs after it (one more cluster barrier), so its selected pages take known contiguous
// positions: their local indices are staged in shared memory in order, then all threads translate
// them through the block table at once (physical IDs, ascending logical order), and the window and
// tail pages are appended.
// Deterministic: no floating-point reductions, ties resolved by index (lower first).
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "cisa_kernels/topk.hpp"
#include "common.cuh"

namespace cisa::kernels {
namespace {

namespace cg = cooperative_groups;

constexpr int kMaxN = 65536;    // keys per row
constexpr int kMaxCluster = 8;  // portable cluster size
constexpr int kMaxSlice = 32768;

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
// the cluster sums of pass 2 (fp32 only)
template <int KB, int B0>
constexpr int hist_c_bins() {
  if constexpr (KB == 32)
    return Digit<KB, B0, 2>::bins;
  else
    return 0;
}

// Per input type: key width, keys per 16-byte load, key type in shared memory, threads per CTA
// (fp32: 1,024 threads, 128 KB of keys, one CTA per SM; 16-bit keys: 512 threads, 64 KB, two).
template <class T>
struct KeyIn;
template <>
struct KeyIn<float> {
  using Smem = uint32_t;
  static constexpr int kBits = 32, kVec = 4, kThreads = 1024, kMinBlocks = 1;
  __device__ static uint32_t key(float f) {
    const uint32_t u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
  __device__ static Smem stored(float f) { return key(f); }
  __device__ static uint32_t widen(uint32_t k) { return k; }
  static constexpr int kListCap = 8192;  // selected pages per CTA staged in shared memory
};
template <>
struct KeyIn<uint16_t> {
  using Smem = uint16_t;
  static constexpr int kBits = 16, kVec = 8, kThreads = 512, kMinBlocks = 2;
  __device__ static Smem stored(uint16_t k) { return k; }
  __device__ static uint32_t widen(uint32_t k) { return k << 16; }
  static constexpr int kListCap = 4096;  // K <= 4,096 always fits; more are written directly
};

constexpr int kB0 = 11;  // first digit (12 and 13 bits measured slower: issue 14 session 4, S4-3)

template <class T, int SL>
constexpr int list_cap() {
  return KeyIn<T>::kListCap < SL ? KeyIn<T>::kListCap : SL;
}
template <class T, int SL>
constexpr int smem_bytes() {
  return SL * static_cast<int>(sizeof(typename KeyIn<T>::Smem)) +
         (2 * hist_a_bins<KeyIn<T>::kBits, kB0>() + 2 * hist_b_bins<KeyIn<T>::kBits, kB0>() +
          hist_c_bins<KeyIn<T>::kBits, kB0>()) *
             4 +
         list_cap<T, SL>() * 2;
}

// Exclusive block scan (NT threads); *total = block sum.
template <int NT>
__device__ __forceinline__ uint32_t block_exclusive_scan(uint32_t v, uint32_t* warp_sums,
                                                         uint32_t* total) {
  constexpr int kWarps = NT / 32;
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

// Phase clocks of thread 0 of the first kPhaseCtas CTAs of the last launch (SM cycles; read by
// topk_phase_cycles for the benchmark's breakdown): start, keys loaded + first histogram, first
// merge, second histogram, last merge, flags scanned, list staged, output written.
constexpr int kPhaseCtas = 128, kPhases = 8;
__device__ long long g_topk_clk[kPhaseCtas][kPhases];
#define TOPK_MARK(i) \
  if (threadIdx.x == 0 && blockIdx.x < kPhaseCtas) g_topk_clk[blockIdx.x][i] = clock64()

struct PassResult {
  uint32_t digit, kk, bin_count;
};

// Thread t's group of PER = BINS / NT bins (one bin when BINS < NT, threads t < BINS): bins
// BINS-1-PER*t-i, i < PER (descending: group 0 holds the largest keys). Loads them from h.
template <int NT, int BINS>
__device__ __forceinline__ void load_group(const uint32_t* h, int t, uint32_t* c) {
  constexpr int PER = BINS >= NT ? BINS / NT : 1;
  if constexpr (PER % 4 == 0) {  // 16-byte loads
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
    c[0] = t < BINS ? h[BINS - 1 - t] : 0u;
  }
}

// One radix pass over the cluster (issue 14 session 5: a reduce-scatter through distributed shared
// memory). The local histogram `hist` is complete. Group t of the bins is owned by CTA t % C: every
// CTA adds its non-zero counts of group t into the owner's `gsum` (zeroed at kernel start), cluster
// barrier, and thread t reads the cluster's sums of its group from the owner: one remote read per
// thread whatever C, the owners spread over the cluster. Then the block finds the bin holding the
// kk-th largest key (highest bin = largest keys) and the rank inside it.
template <int NT, int BINS>
__device__ __forceinline__ PassResult merge_select(const cg::cluster_group& cl, const uint32_t* hist,
                                                   uint32_t* gsum, uint32_t kk, uint32_t* warp_sums,
                                                   uint32_t* s) {
  constexpr int PER = BINS >= NT ? BINS / NT : 1;
  const int t = threadIdx.x;
  const unsigned C = cl.num_blocks();
  const bool has = PER > 1 || t < BINS;
  uint32_t* owner = cl.map_shared_rank(gsum, static_cast<int>(static_cast<unsigned>(t) % C));
  __syncthreads();  // the local histogram is complete
  if (has) {
    uint32_t c[PER];
    load_group<NT, BINS>(hist, t, c);
#pragma unroll
    for (int i = 0; i < PER; ++i)
      if (c[i] != 0) atomicAdd(owner + (BINS - 1 - (t * PER + i)), c[i]);
  }
  cl.sync();  // every CTA's counts are in the owners' sums
  uint32_t tot[PER];
  if (has)
    load_group<NT, BINS>(owner, t, tot);
  else
    tot[0] = 0;
  uint32_t cnt = 0;
#pragma unroll
  for (int i = 0; i < PER; ++i) cnt += tot[i];
  uint32_t total;
  uint32_t above = block_exclusive_scan<NT>(cnt, warp_sums, &total);
  if (above < kk && kk <= above + cnt) {
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      if (above + tot[i] >= kk) {
        s[0] = static_cast<uint32_t>(BINS - 1 - (t * PER + i));
        s[1] = kk - above;
        s[2] = tot[i];
        break;
      }
      above += tot[i];
    }
  }
  __syncthreads();
  PassResult res;
  res.digit = s[0];
  res.kk = s[1];
  res.bin_count = s[2];
  __syncthreads();  // s[] is reused by the next pass
  return res;
}

struct SelectState {
  uint32_t kk, prefix = 0, mask = 0;
};

// Pass P: merge, select the digit, update the state. Returns true when the selection is decided
// (the digit's bin is taken whole, or no bits are left).
template <int NT, int KB, int P>
__device__ __forceinline__ bool radix_pass(const cg::cluster_group& cl, const uint32_t* hist,
                                           uint32_t* gsum, SelectState& st, uint32_t* warp_sums,
                                           uint32_t* s_sel) {
  using D = Digit<KB, kB0, P>;
  const PassResult r = merge_select<NT, D::bins>(cl, hist, gsum, st.kk, warp_sums, s_sel);
  st.prefix |= r.digit << D::shift;
  st.mask |= static_cast<uint32_t>(D::bins - 1) << D::shift;
  st.kk = r.kk;
  return r.bin_count == st.kk || D::last;
}

template <class T, int SL>
__global__ void __launch_bounds__(KeyIn<T>::kThreads, KeyIn<T>::kMinBlocks)
    topk_kernel(const T* __restrict__ scores, int score_stride, const TopkRow* __restrict__ rows,
                const int* __restrict__ table, int table_stride, int* __restrict__ out,
                int out_stride, int K) {
  using In = KeyIn<T>;
  using KS = typename In::Smem;
  constexpr int KB = In::kBits, NT = In::kThreads, EPT = SL / NT, B0 = kB0;
  constexpr int CK = 16 / static_cast<int>(sizeof(KS)), NCH = EPT / CK;  // keys per chunk, chunks
  static_assert(NCH == 2 || NCH == 4 || NCH == 6 || NCH == 8, "2, 4, 6 or 8 chunks of 16 bytes");
  // chunk c of a thread is read at step (c + t / (8 / gcd(NCH, 8))) % NCH: the 8 threads of a
  // quarter warp hit 8 distinct 16-byte bank groups
  constexpr int kRot = NCH == 8 ? 0 : NCH == 4 ? 1 : 2;
  extern __shared__ __align__(16) unsigned char tk_smem[];
  KS* keys = reinterpret_cast<KS*>(tk_smem);  // [SL]
  constexpr int kHA = hist_a_bins<KB, B0>(), kHB = hist_b_bins<KB, B0>();
  constexpr int kListCap = list_cap<T, SL>();
  constexpr int kHC = hist_c_bins<KB, B0>();
  uint32_t* hist_a = reinterpret_cast<uint32_t*>(keys + SL);  // [kHA] local, passes 0 and 2
  uint32_t* hist_b = hist_a + kHA;                                // [kHB] local, pass 1
  uint32_t* gsum_a = hist_b + kHB;  // [kHA] cluster sums of the bin groups this CTA owns, pass 0
  uint32_t* gsum_b = gsum_a + kHA;  // [kHB] pass 1
  uint32_t* gsum_c = gsum_b + kHB;  // [kHC] pass 2
  uint16_t* list = reinterpret_cast<uint16_t*>(gsum_c + kHC);  // [kListCap] staged, local index
  __shared__ uint32_t warp_sums[32];
  __shared__ uint32_t s_sel[3];
  __shared__ uint32_t x_gt[kMaxCluster], x_eq[kMaxCluster];  // selected counts of the CTAs before
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

  TOPK_MARK(0);
  for (int i = tid; i < 2 * (kHA + kHB) + kHC; i += NT) hist_a[i] = 0;
  __syncthreads();
  cl.barrier_arrive();  // (release) the sums are zeroed before any CTA adds to them
  // the slice's only read: 16-byte loads, all issued before the first use; keys -> shared memory,
  // histogram of the first digit
  constexpr int sh0 = Digit<KB, B0, 0>::shift;
  constexpr int U = SL / (NT * In::kVec);
  if ((reinterpret_cast<uintptr_t>(s) & 15u) == 0) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = (u * NT + tid) * In::kVec;
      if (j + In::kVec <= m) {
        v[u] = __ldg(reinterpret_cast<const uint4*>(s + j));
      } else if (j < m) {  // partial chunk at the end of the slice
        T tmp[In::kVec];
        for (int e = 0; e < In::kVec; ++e) tmp[e] = j + e < m ? s[j + e] : T(0);
        memcpy(&v[u], tmp, 16);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = (u * NT + tid) * In::kVec;
      if (j >= m) break;
      T x[In::kVec];
      memcpy(x, &v[u], 16);
      KS k[In::kVec];
#pragma unroll
      for (int e = 0; e < In::kVec; ++e) k[e] = In::stored(x[e]);
      uint4 kv;
      memcpy(&kv, k, 16);
      *reinterpret_cast<uint4*>(keys + j) = kv;
#pragma unroll
      for (int e = 0; e < In::kVec; ++e)
        if (j + e < m) atomicAdd(&hist_a[In::widen(k[e]) >> sh0], 1u);
    }
  } else {  // a row that does not start on 16 bytes (score_stride not a multiple of the vector)
    for (int j = tid; j < m; j += NT) {
      const KS k = In::stored(s[j]);
      keys[j] = k;
      atomicAdd(&hist_a[In::widen(k) >> sh0], 1u);
    }
  }

  // radix passes: merge the C histograms, select the digit, next histogram
  SelectState st;
  st.kk = static_cast<uint32_t>(K);
  TOPK_MARK(1);
  cl.barrier_wait();
  const bool done0 = radix_pass<NT, KB, 0>(cl, hist_a, gsum_a, st, warp_sums, s_sel);
  TOPK_MARK(2);
  // Per-thread flags of the keys it owns (bit b = key base + b): above the threshold (gtm), equal
  // to it (eqm).
  static_assert(EPT <= 64, "flags in one 64-bit mask");
  uint64_t gtm = 0, eqm = 0;
  const int base = tid * EPT;
  // one pass over the thread's keys with the current (mask, prefix): gt / eq flags, and (hist) the
  // next digit of the keys equal to the prefix
  auto flag_scan = [&](uint32_t* hist, int shift, uint32_t bmask) {
    const uint32_t msk = st.mask, pre = st.prefix;
    if (base >= m) return;
#pragma unroll
    for (int c = 0; c < NCH; ++c) {  // rotated chunk order: no bank conflicts
      const int cc = (c + (tid >> kRot)) % NCH;
      const int j = base + cc * CK;
      const uint4 v = *reinterpret_cast<const uint4*>(keys + j);
      KS kv[CK];
      memcpy(kv, &v, 16);
      uint32_t g = 0, q = 0;  // flags of this chunk's keys, bit e = key j + e
#pragma unroll
      for (int e = 0; e < CK; ++e) {
        const uint32_t k = In::widen(kv[e]), km = k & msk;
        g |= static_cast<uint32_t>(km > pre) << e;
        const bool eq = km == pre && j + e < m;
        q |= static_cast<uint32_t>(eq) << e;
        if (hist != nullptr && eq) atomicAdd(&hist[(k >> shift) & bmask], 1u);
      }
      const uint32_t valid = j + CK <= m ? (1u << CK) - 1u : (j < m ? (1u << (m - j)) - 1u : 0u);
      gtm |= static_cast<uint64_t>(g & valid) << (cc * CK);
      eqm |= static_cast<uint64_t>(q) << (cc * CK);
    }
  };
  // the candidates (eqm) against a longer prefix: above -> gtm, below -> dropped, equal -> kept
  // (and, hist, their next digit counted)
  auto refine = [&](uint32_t* hist, int shift, uint32_t bmask) {
    const uint32_t msk = st.mask, pre = st.prefix;
    const uint64_t cand = eqm;
    eqm = 0;
    for (uint64_t r = cand; r != 0; r &= r - 1) {
      const int b = __ffsll(static_cast<long long>(r)) - 1;
      const uint32_t k = In::widen(keys[base + b]), km = k & msk;
      gtm |= static_cast<uint64_t>(km > pre) << b;
      if (km == pre) {
        eqm |= uint64_t{1} << b;
        if (hist != nullptr) atomicAdd(&hist[(k >> shift) & bmask], 1u);
      }
    }
  };
  using D1 = Digit<KB, B0, 1>;
  // After the first merge one scan of the slice flags the keys above the first digit's bin (gt) and
  // in it (the candidates) and counts the candidates' next digit; every later pass looks only at the
  // candidates (a few per thread): no further scan of the slice, no flag pass.
  flag_scan(done0 ? nullptr : hist_b, D1::shift, D1::bins - 1);
  TOPK_MARK(3);
  if (!done0) {
    [[maybe_unused]] const bool done1 =
        radix_pass<NT, KB, 1>(cl, hist_b, gsum_b, st, warp_sums, s_sel);
    if constexpr (KB == 32) {
      using D2 = Digit<KB, B0, 2>;
      if (!done1) {
        // the local pass-0 histogram was last read before the pass-0 cluster barrier: reuse it
        for (int i = tid; i < D2::bins; i += NT) hist_a[i] = 0;
        __syncthreads();
        refine(hist_a, D2::shift, D2::bins - 1);
        radix_pass<NT, KB, 2>(cl, hist_a, gsum_c, st, warp_sums, s_sel);
      }
    }
    refine(nullptr, 0, 0u);
  }
  TOPK_MARK(4);
  // keep every key above the threshold and the first kk (lowest index) equal to it; one block
  // scan of the flag counts gives each thread its running counts; this CTA's selected pages take
  // the contiguous positions [start, start + count) of the row.
  const uint32_t kk = st.kk;
  // counts <= 32,768 per CTA: gt in the low 16 bits, eq in the high 16 bits of one scan
  uint32_t total;
  const uint32_t before = block_exclusive_scan<NT>(
      static_cast<uint32_t>(__popcll(gtm)) | (static_cast<uint32_t>(__popcll(eqm)) << 16),
      warp_sums, &total);
  const uint32_t cta_gt = total & 0xffffu, cta_eq = total >> 16;
  // the CTAs after this one learn its counts (the cluster's last remote accesses), then each CTA
  // sums those of the CTAs before it
  if (static_cast<unsigned>(tid) > rank && static_cast<unsigned>(tid) < C) {
    cl.map_shared_rank(x_gt, tid)[rank] = cta_gt;
    cl.map_shared_rank(x_eq, tid)[rank] = cta_eq;
  }
  cl.sync();
  uint32_t gt_before = 0, eq_before = 0;
  for (unsigned r = 0; r < rank; ++r) {
    gt_before += x_gt[r];
    eq_before += x_eq[r];
  }
  TOPK_MARK(5);
  const uint32_t g_run = gt_before + (before & 0xffffu), e_run = eq_before + (before >> 16);
  const uint32_t start = gt_before + min(eq_before, kk);
  const uint32_t count = cta_gt + min(eq_before + cta_eq, kk) - min(eq_before, kk);
  for (uint64_t rem = gtm | eqm; rem != 0; rem &= rem - 1) {
    const int b = __ffsll(static_cast<long long>(rem)) - 1;
    const uint64_t low = (uint64_t{1} << b) - 1;
    const uint32_t g = g_run + __popcll(gtm & low), e = e_run + __popcll(eqm & low);
    const bool gt = (gtm >> b) & 1u;
    if (!gt && e >= kk) continue;
    const uint32_t pos = gt ? g + min(e, kk) : g + e;
    if (pos - start < kListCap)
      list[pos - start] = static_cast<uint16_t>(base + b);
    else
      orow[pos] = trow[lo + base + b];
  }
  __syncthreads();
  TOPK_MARK(6);
  // block-table lookups of the staged pages: every load of the thread issued before the first
  // store (one round trip, not one per iteration); coalesced stores
  {
    constexpr int kIt = (kListCap + NT - 1) / NT;
    const uint32_t nl = min(count, static_cast<uint32_t>(kListCap));
    int pid[kIt];
#pragma unroll
    for (int i = 0; i < kIt; ++i) {
      const uint32_t q = tid + i * NT;
      pid[i] = q < nl ? __ldg(trow + lo + list[q]) : 0;
    }
#pragma unroll
    for (int i = 0; i < kIt; ++i) {
      const uint32_t q = tid + i * NT;
      if (q < nl) orow[start + q] = pid[i];
    }
  }
  for (int j = row.n_e + static_cast<int>(rank) * NT + tid; j < row.list_end;
       j += static_cast<int>(C) * NT)
    orow[K + (j - row.n_e)] = trow[j];
  TOPK_MARK(7);
}

template <class T, int SL>
struct LaunchCfg {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  LaunchCfg(int cluster, int n_rows, Stream s) {
    cfg.gridDim = dim3(static_cast<unsigned>(cluster * n_rows));
    cfg.blockDim = dim3(KeyIn<T>::kThreads);
    cfg.dynamicSmemBytes = smem_bytes<T, SL>();
    cfg.stream = s;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
};

template <class T, int SL>
void set_smem_attr() {
  static bool attr = false;
  if (!attr) {
    CISA_CUDA(cudaFuncSetAttribute(topk_kernel<T, SL>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   smem_bytes<T, SL>()));
    attr = true;
  }
}

template <class T, int SL>
void launch(const TopkArgs& a, const T* scores, int cluster, int n_rows, Stream s) {
  set_smem_attr<T, SL>();
  LaunchCfg<T, SL> lc(cluster, n_rows, s);
  const cudaLaunchConfig_t& cfg = lc.cfg;
  CISA_CUDA(cudaLaunchKernelEx(&cfg, topk_kernel<T, SL>, scores, a.score_stride, a.rows,
                               static_cast<const int*>(a.table.ids), a.table.stride, a.out,
                               a.out_stride, a.k));
  CISA_LAUNCH_CHECK();
}

// Clusters of `cluster` CTAs of the SL-key kernel resident at once (occupancy query, cached).
template <class T, int SL>
int max_active_clusters(int cluster) {
  static int cache[kMaxCluster + 1] = {};
  if (cache[cluster] == 0) {
    int n = 0;
    set_smem_attr<T, SL>();
    LaunchCfg<T, SL> lc(cluster, 1024, nullptr);
    CISA_CUDA(cudaOccupancyMaxActiveClusters(&n, topk_kernel<T, SL>, &lc.cfg));
    cache[cluster] = n > 0 ? n : -1;
  }
  return cache[cluster];
}

template <class F>
auto with_slice(int slice, F&& f) {
  switch (slice) {
    case 8192:
      return f(std::integral_constant<int, 8192>{});
    case 16384:
      return f(std::integral_constant<int, 16384>{});
    case 24576:
      return f(std::integral_constant<int, 24576>{});
    default:
      return f(std::integral_constant<int, kMaxSlice>{});
  }
}

int resident_clusters(bool keys16, int slice, int cluster) {
  return with_slice(slice, [&](auto sl) {
    return keys16 ? max_active_clusters<uint16_t, decltype(sl)::value>(cluster)
                  : max_active_clusters<float, decltype(sl)::value>(cluster);
  });
}

}  // namespace

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

// The smallest slice (most CTAs per row, fewest keys per thread) whose clusters are all resident at
// once. A thread owns SL / threads contiguous keys whatever the row's share, so for a given slice the
// fewest CTAs that hold the row are as fast as more. When no slice fits, the smallest that holds a row
// in one CTA, or 2 CTAs of 32,768 (fewest CTAs in all: the merges and the output are a fixed cost
// per CTA).
TopkPlan topk_plan(int max_ne, int n_rows, bool keys16) {
  constexpr int kSlices[] = {8192, 16384, 24576, kMaxSlice};
  const char* ab = std::getenv("CISA_TOPK_SLICE_AB");  // TEMPORARY A/B, removed before commit
  for (const int sl : kSlices) {
    const int c = std::max(1, (max_ne + sl - 1) / sl);
    if (c > kMaxCluster) continue;
    const int res = resident_clusters(keys16, sl, c);
    if (ab ? std::atoi(ab) == sl : n_rows <= res) return TopkPlan{c, sl, res};
  }
  TopkPlan p;
  for (const int sl : kSlices)
    if (sl >= max_ne || sl == kMaxSlice) {
      p.slice = sl;
      break;
    }
  p.cluster = std::max(1, (max_ne + p.slice - 1) / p.slice);
  p.resident_clusters = resident_clusters(keys16, p.slice, p.cluster);
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
  with_slice(p.slice, [&](auto sl) {
    constexpr int SL = decltype(sl)::value;
    if (a.scores)
      launch<float, SL>(a, a.scores, p.cluster, n_rows, s);
    else
      launch<uint16_t, SL>(a, reinterpret_cast<const uint16_t*>(a.score_keys), p.cluster, n_rows, s);
  });
}

}  // namespace cisa::kernels
