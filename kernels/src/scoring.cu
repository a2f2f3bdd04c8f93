// Scoring: one summed index query per selection dotted with the eligible pages' representatives.
// score_pages is a small GEMM per (sequence, KV head) group: up to 128 summed queries stacked in M
// (shared memory), 64 representatives per tile streamed with 16-byte cp.async through the block
// table (the CTA's 256 table entries read once), a CTA walks 4 tiles (STAGES tile loads in flight),
// BF16 mma.sync with fp32 accumulation, 16-bit order-preserving score keys written from the
// accumulators (lane pairs swap halves so that every store fills a 32-byte sector).
// Groups of one summed query (decode): score_gemv_kernel, one launch, no tensor cores: the summed
// query is formed in registers (no sum_index_queries launch), each warp streams 32 representatives
// with 16 independent 16-byte loads per lane, dots them in fp32 and reduce-scatters the 16 partial
// sums of each half-warp (15 shuffles for 16 pages).
#include "cisa_kernels/scoring.hpp"
#include "common.cuh"

namespace cisa::kernels {
namespace {

constexpr int kTilePages = 64;
// tiles per CTA (the stacked queries are loaded once per CTA): 4 for groups of up to 64 rows, 8
// above
template <int MI>
constexpr int tiles_per_cta() {
  return MI == 1 ? 4 : 8;
}
constexpr int kTileBytes = kTilePages * 256;

template <int STAGES>
constexpr int score_smem(int q_rows) {
  return STAGES * kTileBytes + (q_rows + 15) / 16 * 16 * 256;
}

__device__ __forceinline__ uint32_t key16(float f) {
  const uint32_t u = __float_as_uint(f);
  return ((u & 0x80000000u) ? ~u : (u | 0x80000000u)) >> 16;
}

__global__ void __launch_bounds__(128)
    sum_iq_kernel(const __nv_bfloat16* __restrict__ iq, int kv_heads,
                  const ScoreRow* __restrict__ rows, __nv_bfloat16* __restrict__ qsum) {
  const ScoreRow r = rows[blockIdx.x];
  const int d = threadIdx.x;
  float s = 0.0f;
  for (int t = 0; t < r.n_q; ++t)
    s += __bfloat162float(
        iq[(static_cast<std::int64_t>(r.q_tok0 + t) * kv_heads + r.kv_head) * kHeadDim + d]);
  qsum[static_cast<std::int64_t>(blockIdx.x) * kHeadDim + d] = __float2bfloat16_rn(s);
}

// Groups of one row (decode). CTA = 8 warps; warp w of CTA x covers kGemvBatches batches of 32
// pages from page (8x + w) * 32 * kGemvBatches on. The table entries of all its batches are read
// first (lane l: page l of each batch, one round trip); then per batch, for u = 0..15, lane l reads
// the 16-byte chunk (l & 15) of page 2u + (l >> 4) (16 loads in flight per lane, 8 KB per warp).
// The summed query is the same fp32 sum rounded to BF16 as sum_iq_kernel's (8 dimensions per lane,
// chunk l & 15). Partial dots p[u] are reduce-scattered over the 16 lanes of each half: afterwards
// lane l holds the score of page 2 (l & 15) + (l >> 4); lanes 0-15 store the key pair of pages
// 2l, 2l + 1.
constexpr int kGemvWarps = 8;
constexpr int kGemvBatches = 4;
constexpr int kGemvPagesPerWarp = 32 * kGemvBatches;

__global__ void __launch_bounds__(kGemvWarps * 32, 2)
    score_gemv_kernel(const __nv_bfloat16* __restrict__ iq, const __nv_bfloat16* __restrict__ reps,
                      int kv_heads, const int* __restrict__ table, int table_stride,
                      const ScoreRow* __restrict__ rows, const ScoreGroup* __restrict__ groups,
                      uint16_t* __restrict__ keys, int key_stride) {
  const ScoreGroup g = groups[blockIdx.y];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wpage0 = (blockIdx.x * kGemvWarps + warp) * kGemvPagesPerWarp;
  const ScoreRow r = rows[g.row0];
  const int ne = r.n_e;
  if (wpage0 >= ne) return;  // whole warp; no block barrier below
  const int* trow = table + static_cast<std::int64_t>(g.seq) * table_stride;
  int pid_l[kGemvBatches];
#pragma unroll
  for (int b = 0; b < kGemvBatches; ++b) {
    const int j = wpage0 + 32 * b + lane;
    pid_l[b] = j < ne ? __ldg(trow + j) : 0;
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
  const __nv_bfloat16* rbase = reps + static_cast<std::int64_t>(g.kv_head) * kHeadDim + ch * 8;
  uint16_t* orow = keys + static_cast<std::int64_t>(g.row0) * key_stride;
#pragma unroll 1
  for (int b = 0; b < kGemvBatches; ++b) {
    const int page0 = wpage0 + 32 * b;
    if (page0 >= ne) break;
    uint4 v[16];
#pragma unroll
    for (int u = 0; u < 16; ++u) {
      const int p = 2 * u + hp;
      int pid = pid_l[0];
#pragma unroll
      for (int bb = 1; bb < kGemvBatches; ++bb)
        if (b == bb) pid = pid_l[bb];
      pid = __shfl_sync(0xffffffffu, pid, p);
      v[u] = page0 + p < ne ? __ldg(reinterpret_cast<const uint4*>(
                                  rbase + static_cast<std::int64_t>(pid) * kv_heads * kHeadDim))
                            : make_uint4(0u, 0u, 0u, 0u);
    }
    float p[16];
#pragma unroll
    for (int u = 0; u < 16; ++u) {
      const __nv_bfloat162* xb = reinterpret_cast<const __nv_bfloat162*>(&v[u]);
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
#pragma unroll
    for (int s = 8; s >= 1; s >>= 1) {
      const bool hi = (lane & s) != 0;
#pragma unroll
      for (int i = 0; i < s; ++i) {
        const float send = hi ? p[i] : p[i + s];
        const float keep = hi ? p[i + s] : p[i];
        p[i] = keep + __shfl_xor_sync(0xffffffffu, send, s);
      }
    }
    const uint32_t k = key16(p[0]);
    const uint32_t k_odd = __shfl_down_sync(0xffffffffu, k, 16);  // page 2l + 1 (lane l + 16)
    if (lane < 16) {
      const int j = page0 + 2 * lane;
      if (j + 1 < ne)
        *reinterpret_cast<uint32_t*>(orow + j) = k | (k_odd << 16);
      else if (j < ne)
        orow[j] = static_cast<uint16_t>(k);
    }
  }
}

// MI: 16-row tiles per warp (4 warps): 1 for groups of up to 64 rows, 2 for up to 128.
template <int STAGES, int MI>
__global__ void __launch_bounds__(128, MI == 1 ? 6 : 4)
    score_kernel(const __nv_bfloat16* __restrict__ qsum, const __nv_bfloat16* __restrict__ reps,
                 int kv_heads, const int* __restrict__ table, int table_stride,
                 const ScoreRow* __restrict__ rows, const ScoreGroup* __restrict__ groups,
                 uint16_t* __restrict__ keys, int key_stride) {
  constexpr int kTilesPerCta = tiles_per_cta<MI>();
  extern __shared__ __align__(128) unsigned char smem[];
  const ScoreGroup g = groups[blockIdx.y];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int mtiles = (g.n_rows + 15) / 16;
  const uint32_t uR = detail::smem_u32(smem);    // STAGES x [64][128] bf16
  const uint32_t uQ = uR + STAGES * kTileBytes;  // [mtiles*16][128] bf16
  const int* trow = table + static_cast<std::int64_t>(g.seq) * table_stride;
  const int page_base = blockIdx.x * kTilesPerCta * kTilePages;
  const int n_tiles = min(kTilesPerCta, (g.max_ne - page_base + kTilePages - 1) / kTilePages);
  for (int c = tid; c < mtiles * 16 * 16; c += 128) {
    const int rr = c >> 4, ch = c & 15;
    const bool ok = rr < g.n_rows;
    detail::cp_async16(uQ + detail::swz(rr, ch),
                       qsum + static_cast<std::int64_t>(g.row0 + (ok ? rr : 0)) * kHeadDim + ch * 8,
                       ok ? 16 : 0);
  }
  // the CTA's block-table entries, read once (no table round trip before each tile's loads)
  __shared__ int s_pid[kTilesPerCta * kTilePages];
  for (int p = tid; p < kTilesPerCta * kTilePages; p += 128) {
    const int j = page_base + p;
    s_pid[p] = j < g.max_ne ? trow[j] : 0;
  }
  __syncthreads();
  // representatives of 64 pages (1024 16-byte chunks) into stage buffer `st`
  auto load_tile = [&](int t, int st) {
    const int page0 = page_base + t * kTilePages;
#pragma unroll
    for (int i = 0; i < (kTilePages * 16) / 128; ++i) {
      const int c = tid + i * 128;
      const int p = c >> 4, ch = c & 15;
      const int j = page0 + p;
      const bool ok = j < g.max_ne;
      const std::int64_t pid = s_pid[t * kTilePages + p];
      detail::cp_async16(uR + st * kTileBytes + detail::swz(p, ch),
                         reps + (pid * kv_heads + g.kv_head) * kHeadDim + ch * 8, ok ? 16 : 0);
    }
  };
#pragma unroll
  for (int t = 0; t < STAGES - 1; ++t) {
    if (t < n_tiles) load_tile(t, t);
    detail::cp_async_commit();  // group t (group 0 also holds the queries)
  }
  const int gid = lane >> 2, tig = lane & 3;
  int ne_row[MI][2];  // n_e of this thread's output rows, loaded once
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int rr = (warp + 4 * mi) * 16 + gid + half * 8;
      ne_row[mi][half] = rr < g.n_rows ? rows[g.row0 + rr].n_e : 0;
    }
  for (int t = 0; t < n_tiles; ++t) {
    if (t + STAGES - 1 < n_tiles) load_tile(t + STAGES - 1, (t + STAGES - 1) % STAGES);
    detail::cp_async_commit();
    detail::cp_async_wait<STAGES - 1>();  // tile t (and the queries) landed
    __syncthreads();
    const uint32_t uT = uR + (t % STAGES) * kTileBytes;
    const int page0 = page_base + t * kTilePages;
    // the warp's row tiles mt = warp + 4 * mi; B fragments loaded once per k step for all of them
    float acc[MI][8][4];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int n = 0; n < 8; ++n)
        acc[mi][n][0] = acc[mi][n][1] = acc[mi][n][2] = acc[mi][n][3] = 0.0f;
    if (warp < mtiles) {
#pragma unroll
      for (int ks = 0; ks < 8; ++ks) {
        uint32_t a[MI][4];
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
          if (warp + 4 * mi < mtiles)
            detail::ldmatrix_x4(
                a[mi][0], a[mi][1], a[mi][2], a[mi][3],
                uQ + detail::swz((warp + 4 * mi) * 16 + (lane & 15), 2 * ks + (lane >> 4)));
#pragma unroll
        for (int np = 0; np < 4; ++np) {
          uint32_t b0, b1, b2, b3;
          detail::ldmatrix_x4(b0, b1, b2, b3,
                              uT + detail::swz(np * 16 + (lane & 7) + ((lane >> 4) << 3),
                                               2 * ks + ((lane >> 3) & 1)));
#pragma unroll
          for (int mi = 0; mi < MI; ++mi) {
            if (warp + 4 * mi >= mtiles) continue;
            detail::mma_bf16(acc[mi][2 * np], a[mi][0], a[mi][1], a[mi][2], a[mi][3], b0, b1);
            detail::mma_bf16(acc[mi][2 * np + 1], a[mi][0], a[mi][1], a[mi][2], a[mi][3], b2, b3);
          }
        }
      }
    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const int mt = warp + 4 * mi;
      if (mt >= mtiles) break;
      // keys: lane pairs swap one packed pair per block of 8 pages, so that each lane stores 4
      // contiguous keys (8 bytes) and a quad covers 16 pages = one full 32-byte sector per row
      const bool odd = tig & 1;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int rr = mt * 16 + gid + half * 8;
        const int ne = ne_row[mi][half];
        uint16_t* out =
            keys + static_cast<std::int64_t>(g.row0 + (rr < g.n_rows ? rr : 0)) * key_stride;
#pragma unroll
        for (int a = 0; a < 4; ++a) {
          const uint32_t p0 =
              key16(acc[mi][2 * a][2 * half]) | (key16(acc[mi][2 * a][2 * half + 1]) << 16);
          const uint32_t p1 =
              key16(acc[mi][2 * a + 1][2 * half]) | (key16(acc[mi][2 * a + 1][2 * half + 1]) << 16);
          const uint32_t y = __shfl_xor_sync(0xffffffffu, odd ? p0 : p1, 1);
          const uint2 chunk = odd ? make_uint2(y, p1) : make_uint2(p0, y);
          const int j =
              page0 + (2 * a + (odd ? 1 : 0)) * 8 + 2 * (tig & 2);  // first of the 4 pages
          if (rr >= g.n_rows) continue;
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
    __syncthreads();  // stage t % STAGES consumed before it is refilled
  }
  detail::cp_async_wait<0>();
}

template <int STAGES, int MI>
void launch_score(const ScoreArgs& a, int max_ne, int q_rows, Stream s) {
  constexpr int kPagesPerCta = kTilePages * tiles_per_cta<MI>();
  const dim3 grid(static_cast<unsigned>((max_ne + kPagesPerCta - 1) / kPagesPerCta),
                  static_cast<unsigned>(a.groups_host->size()));
  static bool attr_set = false;
  if (!attr_set) {
    CISA_CUDA(cudaFuncSetAttribute(score_kernel<STAGES, MI>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   score_smem<STAGES>(MI * 64)));
    attr_set = true;
  }
  score_kernel<STAGES, MI><<<grid, 128, static_cast<size_t>(score_smem<STAGES>(q_rows)), s>>>(
      reinterpret_cast<const __nv_bfloat16*>(a.qsum),
      reinterpret_cast<const __nv_bfloat16*>(a.reps), a.kv_heads, a.table.ids, a.table.stride,
      a.rows, a.groups, a.score_keys, a.score_stride);
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
  int max_ne = 0;
  for (const auto& r : rows) {
    q_tokens += r.n_q;
    ne_sum += r.n_e;
  }
  for (const auto& g : groups) {
    rep_bytes += static_cast<double>(g.max_ne) * (kHeadDim * 2.0 + 4.0);
    issued += 2.0 * kHeadDim * ((g.n_rows + 15) / 16 * 16.0) *
              ((g.max_ne + kTilePages - 1) / kTilePages * kTilePages);
    max_ne = std::max(max_ne, g.max_ne);
  }
  int max_rows = 0, max_nq = 0;
  for (const auto& g : groups) max_rows = std::max(max_rows, g.n_rows);
  for (const auto& r : rows) max_nq = std::max(max_nq, r.n_q);
  if (max_rows == 1 && max_nq <= 4) {
    // one row per group (decode): one launch, summed query in registers, representatives (+ ids)
    // read once, index queries read once, 2-byte keys written
    ScopedLaunch sl(ins, Component::scoring, "score_pages_gemv",
                    rep_bytes + ne_sum * 2.0 + q_tokens * kHeadDim * 2.0, 2.0 * kHeadDim * ne_sum,
                    2.0 * kHeadDim * ne_sum, s);
    constexpr int kPagesPerCta = kGemvWarps * kGemvPagesPerWarp;
    const dim3 grid(static_cast<unsigned>((max_ne + kPagesPerCta - 1) / kPagesPerCta),
                    static_cast<unsigned>(groups.size()));
    score_gemv_kernel<<<grid, kGemvWarps * 32, 0, s>>>(
        reinterpret_cast<const __nv_bfloat16*>(a.iq),
        reinterpret_cast<const __nv_bfloat16*>(a.reps), a.kv_heads, a.table.ids, a.table.stride,
        a.rows, a.groups, a.score_keys, a.score_stride);
    CISA_LAUNCH_CHECK();
    return;
  }
  {
    ScopedLaunch sl(ins, Component::scoring, "sum_index_queries",
                    q_tokens * kHeadDim * 2.0 + rows.size() * kHeadDim * 2.0, q_tokens * kHeadDim,
                    q_tokens * kHeadDim, s);
    sum_iq_kernel<<<static_cast<unsigned>(rows.size()), 128, 0, s>>>(
        reinterpret_cast<const __nv_bfloat16*>(a.iq), a.kv_heads, a.rows,
        reinterpret_cast<__nv_bfloat16*>(a.qsum));
    CISA_LAUNCH_CHECK();
  }
  // representatives (+ block-table ids) read, 2-byte keys written, summed queries read
  ScopedLaunch sl(ins, Component::scoring, "score_pages",
                  rep_bytes + ne_sum * 2.0 + rows.size() * kHeadDim * 2.0, 2.0 * kHeadDim * ne_sum,
                  issued, s);
  // small groups: 4 tiles per CTA, one 16-row tile per warp; large stacks of queries: 8 tiles per
  // CTA, two 16-row tiles per warp sharing the B fragments. One tile in flight per CTA (more stages
  // cost CTAs per SM and measured slower, run 2 of issue 14)
  if (max_rows <= 64)
    launch_score<1, 1>(a, max_ne, max_rows, s);
  else
    launch_score<1, 2>(a, max_ne, max_rows, s);
}

}  // namespace cisa::kernels
