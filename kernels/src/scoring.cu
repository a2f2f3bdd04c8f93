// Scoring: one summed index query per selection dotted with the eligible pages' representatives.
// Groups of more than one row (prefill): sum_index_queries, then score_pages: a small GEMM per
// (sequence, KV head) group on wgmma: up to 128 summed queries (one warpgroup per 64) in shared
// memory, A fragments in registers; 64 representatives per tile streamed through a ring of tiles
// with 16-byte cp.async through the block table (the CTA's 512 table entries read once); 16-bit
// order-preserving score keys written from the accumulators (lane pairs swap halves so that every
// store fills a 32-byte sector). score_pages' kernel is launched with PDL after sum_iq_kernel: its
// CTAs read their block-table entries while the sums finish, then wait for them (session 7).
// Groups of one summed query (decode): score_gemv_kernel, one launch, no tensor cores: the summed
// query is formed in registers (no sum_index_queries launch), each warp streams batches of 32
// representatives through its own shared-memory ring (cp.async, one batch in flight while one is
// dotted; 4 warps x 2 stages, 3 CTAs per SM: 12 warps per SM, session 16), dots them in fp32 and
// reduce-scatters the 16 partial sums of each half-warp (15 shuffles for 16 pages).
#include "cisa_kernels/scoring.hpp"

#include <algorithm>
#include <utility>

#include "common.cuh"
#include "wgmma.cuh"

namespace cisa::kernels {
namespace {

constexpr int kTilePages = 64;
constexpr int kTileBytes = kTilePages * 256;

// Tile layout shared by ldmatrix and wgmma (as attention.cu's): [d half (2)][nrows][128 B], 16-byte
// chunks XOR-swizzled with (row & 7) inside each 1024-byte atom of 8 rows (the wgmma
// 128-byte-swizzle canonical layout).
__device__ __forceinline__ uint32_t tswz(int row, int ch, int nrows) {
  return static_cast<uint32_t>((ch >> 3) * nrows * 128 + row * 128 + (((ch & 7) ^ (row & 7)) << 4));
}

__device__ __forceinline__ uint32_t key16(float f) {
  const uint32_t u = __float_as_uint(f);
  return ((u & 0x80000000u) ? ~u : (u | 0x80000000u)) >> 16;
}

// Programmatic dependent launch (PDL): score_pages' kernel is launched with programmatic stream
// serialisation after sum_iq_kernel, whose CTAs allow it at their start; it waits
// (detail::pdl_wait) before reading the summed queries.

// One thread per (row, 16-byte chunk of 8 dimensions), 8 rows per CTA: few, small CTAs, so that
// score_pages' CTAs (PDL) become resident beside them at once. The same fp32 sum in token order,
// rounded to BF16.
__global__ void __launch_bounds__(128)
    sum_iq_kernel(const __nv_bfloat16* __restrict__ iq, int kv_heads,
                  const ScoreRow* __restrict__ rows, int row_begin, int n_rows,
                  __nv_bfloat16* __restrict__ qsum) {
  detail::pdl_trigger();  // score_pages' kernel may start (it waits for this grid before reading qsum)
  const int item = static_cast<int>(blockIdx.x) * 128 + static_cast<int>(threadIdx.x);
  if (item >= n_rows * 16) return;
  const int row = row_begin + (item >> 4), ch = item & 15;
  const ScoreRow r = rows[row];
  float q[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
#pragma unroll 4
  for (int t = 0; t < r.n_q; ++t) {
    const uint4 x = __ldg(reinterpret_cast<const uint4*>(
        iq + (static_cast<std::int64_t>(r.q_tok0 + t) * kv_heads + r.kv_head) * kHeadDim + ch * 8));
    const __nv_bfloat162* xb = reinterpret_cast<const __nv_bfloat162*>(&x);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = __bfloat1622float2(xb[e]);
      q[2 * e] += f.x;
      q[2 * e + 1] += f.y;
    }
  }
  uint4 o;
  o.x = detail::pack_bf16(q[0], q[1]);
  o.y = detail::pack_bf16(q[2], q[3]);
  o.z = detail::pack_bf16(q[4], q[5]);
  o.w = detail::pack_bf16(q[6], q[7]);
  *reinterpret_cast<uint4*>(qsum + static_cast<std::int64_t>(row) * kHeadDim + ch * 8) = o;
}

// Groups of one row (decode). CTA = W warps, grid (nx, groups); CTA x takes the batches (32 pages
// each) [nb x / nx, nb (x + 1) / nx) of its group, warp w every W-th of them from the CTA's first
// on. Each warp streams its batches through its own ring of S stages of 8 KB in shared memory with
// cp.async (S - 1 batches in flight while one is dotted: the bytes in flight no longer depend on
// registers). Lane l loads (and later reads back: no barrier) the 16-byte chunk (l & 15) of pages
// 2u + (l >> 4), u < 16, of each batch. The block-table entries run kGemvTableAhead batches ahead
// of the loads (a register ring: lane l holds page l of each batch). The summed query is the same
// fp32 sum rounded to BF16 as sum_iq_kernel's (8 dimensions per lane, chunk l & 15). Partial dots
// p[u] are reduce-scattered over the 16 lanes of each half: afterwards lane l holds the score of
// page 2 (l & 15) + (l >> 4); lanes 0-15 store the key pair of pages 2l, 2l + 1.
constexpr int kGemvStageBytes = 32 * 256;
constexpr int kGemvTableAhead = 4;
constexpr int kGemvMinBatches = 8;

// one reduce-scatter step of width W over p[0 .. 2W): p[k] (k < W) keeps index k + W * (bit W of
// the lane) and adds the partner lane's value of it
template <int W>
__device__ __forceinline__ void rs_step(float* p, int lane) {
  const bool hi = (lane & W) != 0;
#pragma unroll
  for (int k = 0; k < W; ++k) {
    const float send = hi ? p[k] : p[k + W];
    const float keep = hi ? p[k + W] : p[k];
    p[k] = keep + __shfl_xor_sync(0xffffffffu, send, W);
  }
}

template <int W, int S>
constexpr int gemv_smem() {
  return W * S * kGemvStageBytes;
}

// LOG (representatives in logical order, paged_kv.hpp): `table` is the rep table; a batch is half of
// one rep block, 8 KB contiguous per KV head, so each of a lane's 16 loads is part of 512 contiguous
// bytes across the warp; the table ring holds one rep-block id per batch (the same in every lane)
// and the loads need no shuffles.
template <int W, int S, bool LOG>
__global__ void __launch_bounds__(W * 32)
    score_gemv_kernel(const __nv_bfloat16* __restrict__ iq, const __nv_bfloat16* __restrict__ reps,
                      int kv_heads, const int* __restrict__ table, int table_stride,
                      const ScoreRow* __restrict__ rows, const ScoreGroup* __restrict__ groups,
                      uint16_t* __restrict__ keys, int key_stride) {
  extern __shared__ __align__(128) unsigned char smem[];
  const ScoreGroup g = groups[blockIdx.y];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const ScoreRow r = rows[g.row0];
  const int ne = r.n_e;
  const int nb = (ne + 31) >> 5;
  const int b_lo = static_cast<int>(static_cast<std::int64_t>(nb) * blockIdx.x / gridDim.x);
  const int b_hi = static_cast<int>(static_cast<std::int64_t>(nb) * (blockIdx.x + 1) / gridDim.x);
  const int my_n = b_hi - b_lo > warp ? (b_hi - b_lo - warp + W - 1) / W : 0;
  if (my_n == 0) return;  // whole warp; no block barrier below
  const int* trow = table + static_cast<std::int64_t>(g.seq) * table_stride;
  // table entries: slot k % R holds batch k's (lane l: page l), R - S + 1 iterations ahead
  constexpr int R = S - 1 + kGemvTableAhead;
  int pid_l[R];
#pragma unroll
  for (int k = 0; k < R; ++k) {
    if constexpr (LOG) {
      pid_l[k] = k < my_n ? __ldg(trow + ((b_lo + warp + W * k) >> 1)) : 0;
    } else {
      const int j = (b_lo + warp + W * k) * 32 + lane;
      pid_l[k] = k < my_n && j < ne ? __ldg(trow + j) : 0;
    }
  }
  const int ch = lane & 15, hp = lane >> 4;
  // summed query (the row's n_q index queries; L2-resident)
  float q[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  for (int t = 0; t < r.n_q; ++t) {
    const uint4 x = __ldg(reinterpret_cast<const uint4*>(
        iq + (static_cast<std::int64_t>(r.q_tok0 + t) * kv_heads + r.kv_head) * kHeadDim + ch * 8));
    const __nv_bfloat162* xb = reinterpret_cast<const __nv_bfloat162*>(&x);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = __bfloat1622float2(xb[e]);
      q[2 * e] += f.x;
      q[2 * e + 1] += f.y;
    }
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) q[e] = __bfloat162float(__float2bfloat16_rn(q[e]));
  const __nv_bfloat16* rbase =
      LOG ? reps + (static_cast<std::int64_t>(g.kv_head) * kRepBlockPages + hp) * kHeadDim + ch * 8
          : reps + static_cast<std::int64_t>(g.kv_head) * kHeadDim + ch * 8;
  uint16_t* orow = keys + static_cast<std::int64_t>(g.row0) * key_stride;
  const uint32_t ring = detail::smem_u32(smem) + warp * (S * kGemvStageBytes) + hp * 256 + ch * 16;
  // batch i's loads into stage i % S; pid = the table entries of batch i (lane l: page l)
  auto issue = [&](int i, int pid_lane) {
    const int page0 = (b_lo + warp + W * i) * 32;
    const uint32_t dst = ring + (i % S) * kGemvStageBytes;
    if constexpr (LOG) {
      const __nv_bfloat16* src =
          rbase + (static_cast<std::int64_t>(pid_lane) * kv_heads * kRepBlockPages + (page0 & (kRepBlockPages - 1))) *
                      kHeadDim;
#pragma unroll
      for (int u = 0; u < 16; ++u)
        detail::cp_async16(dst + u * 512, src + u * 2 * kHeadDim, page0 + 2 * u + hp < ne ? 16 : 0);
    } else {
#pragma unroll
      for (int u = 0; u < 16; ++u) {
        const int p = 2 * u + hp;
        const int pid = __shfl_sync(0xffffffffu, pid_lane, p);
        detail::cp_async16(dst + u * 512,
                           rbase + static_cast<std::int64_t>(pid) * kv_heads * kHeadDim,
                           page0 + p < ne ? 16 : 0);
      }
    }
  };
#pragma unroll
  for (int k = 0; k < S - 1; ++k) {
    if (k < my_n) issue(k, pid_l[k]);
    detail::cp_async_commit();
  }
  // the main loop unrolled by R: slot (i % R) of the table ring is static, so that a table load
  // in flight is not touched (moved) until the iteration that issues its batch
#pragma unroll 1
  for (int i0 = 0; i0 < my_n; i0 += R) {
#pragma unroll
    for (int kk = 0; kk < R; ++kk) {
      const int i = i0 + kk;
      if (i >= my_n) break;
      if (i + S - 1 < my_n) issue(i + S - 1, pid_l[(kk + S - 1) % R]);
      detail::cp_async_commit();
      if constexpr (LOG) {  // slot kk (batch i, issued) <- batch i + R
        pid_l[kk] = i + R < my_n ? __ldg(trow + ((b_lo + warp + W * (i + R)) >> 1)) : 0;
      } else {
        const int j = (b_lo + warp + W * (i + R)) * 32 + lane;
        pid_l[kk] = i + R < my_n && j < ne ? __ldg(trow + j) : 0;
      }
      detail::cp_async_wait<S - 1>();  // batch i (this lane's chunks) landed
      const uint32_t src = ring + (i % S) * kGemvStageBytes;
      float p[16];
#pragma unroll
      for (int u = 0; u < 16; ++u) {
        uint4 v;
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "r"(src + u * 512));
        const __nv_bfloat162* xb = reinterpret_cast<const __nv_bfloat162*>(&v);
        float acc = 0.f;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float2 f = __bfloat1622float2(xb[e]);
          acc = fmaf(q[2 * e], f.x, acc);
          acc = fmaf(q[2 * e + 1], f.y, acc);
        }
        p[u] = acc;
      }
      // reduce-scatter: after the step of width s, p[i] (i < s) holds index i + s * (bit s of lane)
      // of the previous list; at the end p[0] = sum over the half-warp of index (lane & 15)
      rs_step<8>(p, lane);
      rs_step<4>(p, lane);
      rs_step<2>(p, lane);
      rs_step<1>(p, lane);
      const uint32_t k = key16(p[0]);
      const uint32_t k_odd = __shfl_down_sync(0xffffffffu, k, 16);  // page 2l + 1 (lane l + 16)
      if (lane < 16) {
        const int j = (b_lo + warp + W * i) * 32 + 2 * lane;
        if (j + 1 < ne)
          *reinterpret_cast<uint32_t*>(orow + j) = k | (k_odd << 16);
        else if (j < ne)
          orow[j] = static_cast<uint16_t>(k);
      }
    }
  }
  detail::cp_async_wait<0>();
}

// Groups of more than one row: a small GEMM per group on the tensor cores. CTA = NWG warpgroups
// (wgmma M = 64 rows each); the group's summed queries (sum_iq_kernel's, q_rows rounded up to 16)
// in shared memory, A fragments loaded once into registers (zero for warps past the rows); TILES
// tiles of 64 pages, the representatives streamed through a ring of STAGES tiles with 16-byte
// cp.async (STAGES - 1 tiles in flight while one is multiplied); per tile one chain of 8 wgmma
// m64n64k16 per warpgroup (B = the tile, K-major, 128-byte swizzle).
template <int STAGES>
constexpr int score_smem(int q_rows) {
  return 1024 + STAGES * kTileBytes + (q_rows + 15) / 16 * 16 * 256;
}

// LOG (representatives in logical order): `table` is the rep table; a tile is one rep block (tiles
// start at multiples of 64 pages), read as 16 KB contiguous per KV head; s_pid holds the CTA's
// TILES rep-block ids.
template <int NWG, int STAGES, int TILES, int MINB, bool LOG>
__global__ void __launch_bounds__(NWG * 128, MINB)
    score_kernel(const __nv_bfloat16* __restrict__ qsum, const __nv_bfloat16* __restrict__ reps,
                 int kv_heads, const int* __restrict__ table, int table_stride,
                 const ScoreRow* __restrict__ rows, const ScoreGroup* __restrict__ groups,
                 uint16_t* __restrict__ keys, int key_stride) {
  constexpr int NT = NWG * 128;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const uint32_t uR = (detail::smem_u32(smem_raw) + 1023u) & ~1023u;  // STAGES x [64][128], tswz
  const uint32_t uQ = uR + STAGES * kTileBytes;                       // [mq][128], tswz
  __shared__ int s_pid[TILES * kTilePages];
  const ScoreGroup g = groups[blockIdx.y];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int gid = lane >> 2, tig = lane & 3;
  const int mq = (g.n_rows + 15) / 16 * 16;
  const int* trow = table + static_cast<std::int64_t>(g.seq) * table_stride;
  const int page_base = blockIdx.x * TILES * kTilePages;
  const int n_tiles = min(TILES, (g.max_ne - page_base + kTilePages - 1) / kTilePages);
  // the CTA's block-table entries, read once (no table round trip before each tile's loads)
  if constexpr (LOG) {
    static_assert(kTilePages == kRepBlockPages, "a scoring tile is one rep block");
    for (int t = tid; t < TILES; t += NT) {
      const int j = page_base + t * kTilePages;
      s_pid[t] = j < g.max_ne ? trow[j / kRepBlockPages] : 0;
    }
  } else {
    for (int p = tid; p < TILES * kTilePages; p += NT) {
      const int j = page_base + p;
      s_pid[p] = j < g.max_ne ? trow[j] : 0;
    }
  }
  detail::pdl_wait();
  for (int c = tid; c < mq * 16; c += NT) {
    const int rr = c >> 4, ch = c & 15;
    const bool ok = rr < g.n_rows;
    detail::cp_async16(uQ + tswz(rr, ch, mq),
                       qsum + static_cast<std::int64_t>(g.row0 + (ok ? rr : 0)) * kHeadDim + ch * 8,
                       ok ? 16 : 0);
  }
  __syncthreads();
  // representatives of 64 pages (1024 16-byte chunks) into stage buffer `st`
  auto load_tile = [&](int t, int st) {
    const int page0 = page_base + t * kTilePages;
    const __nv_bfloat16* blk =
        LOG ? reps + (static_cast<std::int64_t>(s_pid[t]) * kv_heads + g.kv_head) * kRepBlockPages * kHeadDim : reps;
#pragma unroll
    for (int i = 0; i < (kTilePages * 16) / NT; ++i) {
      const int c = tid + i * NT;
      const int p = c >> 4, ch = c & 15;
      const bool ok = page0 + p < g.max_ne;
      if constexpr (LOG) {
        detail::cp_async16(uR + st * kTileBytes + tswz(p, ch, kTilePages), blk + p * kHeadDim + ch * 8, ok ? 16 : 0);
      } else {
        const std::int64_t pid = s_pid[t * kTilePages + p];
        detail::cp_async16(uR + st * kTileBytes + tswz(p, ch, kTilePages),
                           reps + (pid * kv_heads + g.kv_head) * kHeadDim + ch * 8, ok ? 16 : 0);
      }
    }
  };
#pragma unroll
  for (int t = 0; t < STAGES - 1; ++t) {
    if (t < n_tiles) load_tile(t, t);
    detail::cp_async_commit();  // group t (group 0 also holds the queries)
  }
  const int row_a = warp * 16 + gid;  // this thread's rows row_a, row_a + 8 (warpgroup warp / 4)
  int ne_row[2];
  const bool live = (warp & ~3) * 16 < g.n_rows;  // the warpgroup has rows
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int rr = row_a + half * 8;
    ne_row[half] = rr < g.n_rows ? rows[g.row0 + rr].n_e : 0;
  }
  uint32_t qf[8][4];
  for (int t = 0; t < n_tiles; ++t) {
    detail::cp_async_wait<STAGES - 2>();  // tile t (and the queries) landed
    detail::fence_proxy_async();
    __syncthreads();  // ... for every thread; every warpgroup is done with tile t - 1's stage
    if (t + STAGES - 1 < n_tiles) load_tile(t + STAGES - 1, (t + STAGES - 1) % STAGES);
    detail::cp_async_commit();
    if (!live) continue;
    if (t == 0) {
#pragma unroll
      for (int ks = 0; ks < 8; ++ks) {
        if (warp * 16 < mq) {
          detail::ldmatrix_x4(qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3],
                              uQ + tswz(warp * 16 + (lane & 15), 2 * ks + (lane >> 4), mq));
        } else {  // rows past the group's: no queries stored for them
          qf[ks][0] = qf[ks][1] = qf[ks][2] = qf[ks][3] = 0u;
        }
      }
    }
    const uint32_t uT = uR + (t % STAGES) * kTileBytes;
    float acc[8][4];
    detail::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < 8; ++ks)
      detail::wgmma_m64n64k16_rs(
          &acc[0][0], qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3],
          detail::gmma_desc(uT + (ks >> 2) * (kTilePages * 128) + (ks & 3) * 32, 16, 1024), ks > 0);
    detail::wgmma_commit();
    detail::wgmma_wait<0>();
    detail::fence_operands<8>(acc);
    const int page0 = page_base + t * kTilePages;
    // keys: lane pairs swap one packed pair per block of 8 pages, so that each lane stores 4
    // contiguous keys (8 bytes) and a quad covers 16 pages = one full 32-byte sector per row
    const bool odd = tig & 1;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int rr = row_a + half * 8;
      const int ne = ne_row[half];
      uint16_t* out =
          keys + static_cast<std::int64_t>(g.row0 + (rr < g.n_rows ? rr : 0)) * key_stride;
#pragma unroll
      for (int a = 0; a < 4; ++a) {
        const uint32_t p0 = key16(acc[2 * a][2 * half]) | (key16(acc[2 * a][2 * half + 1]) << 16);
        const uint32_t p1 =
            key16(acc[2 * a + 1][2 * half]) | (key16(acc[2 * a + 1][2 * half + 1]) << 16);
        const uint32_t y = __shfl_xor_sync(0xffffffffu, odd ? p0 : p1, 1);
        const uint2 chunk = odd ? make_uint2(y, p1) : make_uint2(p0, y);
        const int j = page0 + (2 * a + (odd ? 1 : 0)) * 8 + 2 * (tig & 2);  // first of the 4 pages
        if (j + 3 < ne) {
          *reinterpret_cast<uint2*>(out + j) = chunk;
        } else {
          const uint32_t w[2] = {chunk.x, chunk.y};
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (j + e < ne) out[j + e] = static_cast<uint16_t>(w[e >> 1] >> (16 * (e & 1)));
        }
      }
    }
  }
  detail::cp_async_wait<0>();
}

template <int NWG, int STAGES, int TILES, int MINB, bool LOG>
void launch_score(const ScoreArgs& a, int max_ne, int q_rows, Stream s) {
  constexpr int kPagesPerCta = kTilePages * TILES;
  const dim3 grid(static_cast<unsigned>((max_ne + kPagesPerCta - 1) / kPagesPerCta),
                  static_cast<unsigned>(a.groups_host->size()));
  static bool attr_set = false;
  if (!attr_set) {
    CISA_CUDA(cudaFuncSetAttribute(score_kernel<NWG, STAGES, TILES, MINB, LOG>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   score_smem<STAGES>(NWG * 64)));
    attr_set = true;
  }
  // PDL: its CTAs may start while sum_iq_kernel runs (it waits for that grid before the queries)
  const BlockTable& t = LOG ? a.rep_table : a.table;
  detail::launch_ex(score_kernel<NWG, STAGES, TILES, MINB, LOG>, grid, dim3(NWG * 128), score_smem<STAGES>(q_rows),
                    s, true, reinterpret_cast<const __nv_bfloat16*>(a.qsum),
                    reinterpret_cast<const __nv_bfloat16*>(a.reps), a.kv_heads, t.ids, t.stride,
                    a.rows, a.groups, a.score_keys, a.score_stride);
  CISA_LAUNCH_CHECK();
}

// The one-row path: nx CTAs per group, as many as fit on the card in one wave (at least one; less
// a.reserve_ctas slots), but no more than give each warp kGemvMinBatches batches.
template <int W, int S, bool LOG>
void launch_gemv(const ScoreArgs& a, Stream s) {
  static int slots = 0;
  if (slots == 0) {
    CISA_CUDA(cudaFuncSetAttribute(score_gemv_kernel<W, S, LOG>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, gemv_smem<W, S>()));
    int per_sm = 0;
    CISA_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, score_gemv_kernel<W, S, LOG>,
                                                            W * 32, gemv_smem<W, S>()));
    slots = std::max(1, per_sm) * detail::device_sm_count();
  }
  const int n_groups = static_cast<int>(a.groups_host->size());
  int max_nb = 0;
  for (const auto& g : *a.groups_host) max_nb = std::max(max_nb, (g.max_ne + 31) / 32);
  // at least kGemvMinBatches per warp (the table and first loads are one round trip per warp)
  const int avail = std::max(n_groups, slots - a.reserve_ctas);
  const int nx = std::max(
      1, std::min(avail / n_groups, (max_nb + W * kGemvMinBatches - 1) / (W * kGemvMinBatches)));
  const BlockTable& t = LOG ? a.rep_table : a.table;
  score_gemv_kernel<W, S, LOG><<<dim3(static_cast<unsigned>(nx), static_cast<unsigned>(n_groups)),
                                 W * 32, static_cast<size_t>(gemv_smem<W, S>()), s>>>(
      reinterpret_cast<const __nv_bfloat16*>(a.iq), reinterpret_cast<const __nv_bfloat16*>(a.reps),
      a.kv_heads, t.ids, t.stride, a.rows, a.groups, a.score_keys, a.score_stride);
  CISA_LAUNCH_CHECK();
}

}  // namespace

void score_pages(const ScoreArgs& a, Stream s, Instrument* ins) {
  const auto& rows = *a.rows_host;
  const auto& groups = *a.groups_host;
  if (rows.empty()) return;
  if (a.score_stride % 8 != 0)
    throw std::invalid_argument("score_pages: score_stride must be a multiple of 8");
  double q_tokens = 0, ne_sum = 0, rep_bytes = 0, issued = 0;
  int max_ne = 0, max_rows = 0, max_nq = 0;
  for (const auto& g : groups) max_rows = std::max(max_rows, g.n_rows);
  for (const auto& r : rows) max_nq = std::max(max_nq, r.n_q);
  for (const auto& r : rows) {
    q_tokens += r.n_q;
    ne_sum += r.n_e;
  }
  const bool logical = a.rep_table.ids != nullptr;
  for (const auto& g : groups) {
    // representatives + their table entries (block table: one per page; rep table: one per 64)
    rep_bytes += static_cast<double>(g.max_ne) * kHeadDim * 2.0 +
                 (logical ? (g.max_ne + kRepBlockPages - 1) / kRepBlockPages * 4.0 : g.max_ne * 4.0);
    // wgmma rows: 64 per warpgroup
    issued += 2.0 * kHeadDim * (max_rows > 64 ? 128.0 : 64.0) *
              ((g.max_ne + kTilePages - 1) / kTilePages * kTilePages);
    max_ne = std::max(max_ne, g.max_ne);
  }
  if (max_rows == 1 && max_nq <= 4) {
    // one row per group (decode): one launch, summed query in registers, representatives (+ ids)
    // read once, index queries read once, 2-byte keys written
    ScopedLaunch sl(ins, Component::scoring, "score_pages_gemv",
                    rep_bytes + ne_sum * 2.0 + q_tokens * kHeadDim * 2.0, 2.0 * kHeadDim * ne_sum,
                    2.0 * kHeadDim * ne_sum, s);
    // 4 warps x 2 stages (64 KB), 3 CTAs per SM at <= 168 registers (ptxas: 164 physical, 96
    // logical): 12 warps with one batch in flight each beat session 8's 4 x 3 at 2 CTAs per SM (8
    // warps with two): alone 81.6 -> 78.3 us, in the step 229.3 -> 225.2 us (session 16)
    if (logical)
      launch_gemv<4, 2, true>(a, s);
    else
      launch_gemv<4, 2, false>(a, s);
    return;
  }
  {
    ScopedLaunch sl(ins, Component::scoring, "sum_index_queries",
                    q_tokens * kHeadDim * 2.0 + rows.size() * kHeadDim * 2.0, q_tokens * kHeadDim,
                    q_tokens * kHeadDim, s);
    const int n_rows = static_cast<int>(rows.size());
    sum_iq_kernel<<<static_cast<unsigned>((n_rows + 7) / 8), 128, 0, s>>>(
        reinterpret_cast<const __nv_bfloat16*>(a.iq), a.kv_heads, a.rows, a.row_begin, n_rows,
        reinterpret_cast<__nv_bfloat16*>(a.qsum));
    CISA_LAUNCH_CHECK();
  }
  // representatives (+ block-table ids) read, 2-byte keys written, summed queries read
  ScopedLaunch sl(ins, Component::scoring, "score_pages",
                  rep_bytes + ne_sum * 2.0 + rows.size() * kHeadDim * 2.0, 2.0 * kHeadDim * ne_sum,
                  issued, s);
  // groups of 65-128 rows: two warpgroups sharing each representatives tile, 3 tiles in flight,
  // 2 CTAs per SM; groups of up to 64 rows: one warpgroup, 1 tile in flight, 5 CTAs per SM (more
  // CTAs per SM beat a deeper ring for these: NOTES.md, issue 14 session 5)
  if (max_rows > 64 && logical)
    launch_score<2, 4, 8, 2, true>(a, max_ne, max_rows, s);
  else if (max_rows > 64)
    launch_score<2, 4, 8, 2, false>(a, max_ne, max_rows, s);
  else if (logical)
    launch_score<1, 2, 8, 5, true>(a, max_ne, max_rows, s);
  else
    launch_score<1, 2, 8, 5, false>(a, max_ne, max_rows, s);
}

}  // namespace cisa::kernels
