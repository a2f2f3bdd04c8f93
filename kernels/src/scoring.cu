// Scoring: one summed index query per selection dotted with the eligible pages' representatives.
// score_pages is a small GEMM per (sequence, KV head) group: up to 128 summed queries stacked in M
// (shared memory), 64 representatives per CTA streamed once with 16-byte cp.async through the block
// table, BF16 mma.sync with fp32 accumulation, fp32 scores written straight from the accumulators.
#include "cisa_kernels/scoring.hpp"
#include "common.cuh"

namespace cisa::kernels {
namespace {

constexpr int kTilePages = 64;
constexpr int kTilesPerCta = 4;  // the stacked queries are loaded once per 256 pages

__global__ void __launch_bounds__(128) sum_iq_kernel(const __nv_bfloat16* __restrict__ iq, int kv_heads,
                                                     const ScoreRow* __restrict__ rows, __nv_bfloat16* __restrict__ qsum) {
  const ScoreRow r = rows[blockIdx.x];
  const int d = threadIdx.x;
  float s = 0.0f;
  for (int t = 0; t < r.n_q; ++t)
    s += __bfloat162float(iq[(static_cast<std::int64_t>(r.q_tok0 + t) * kv_heads + r.kv_head) * kHeadDim + d]);
  qsum[static_cast<std::int64_t>(blockIdx.x) * kHeadDim + d] = __float2bfloat16_rn(s);
}

__global__ void __launch_bounds__(128) score_kernel(const __nv_bfloat16* __restrict__ qsum,
                                                    const __nv_bfloat16* __restrict__ reps, int kv_heads,
                                                    const int* __restrict__ table, int table_stride,
                                                    const ScoreRow* __restrict__ rows,
                                                    const ScoreGroup* __restrict__ groups, float* __restrict__ scores,
                                                    int score_stride) {
  extern __shared__ __align__(128) unsigned char smem[];
  const ScoreGroup g = groups[blockIdx.y];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int mtiles = (g.n_rows + 15) / 16;
  unsigned char* sR = smem;                       // [64][128] bf16
  unsigned char* sQ = smem + kTilePages * 256;    // [mtiles*16][128] bf16
  const uint32_t uR = detail::smem_u32(sR), uQ = detail::smem_u32(sQ);
  const int* trow = table + static_cast<std::int64_t>(g.seq) * table_stride;
  for (int c = tid; c < mtiles * 16 * 16; c += 128) {
    const int rr = c >> 4, ch = c & 15;
    const bool ok = rr < g.n_rows;
    detail::cp_async16(uQ + detail::swz(rr, ch), qsum + static_cast<std::int64_t>(g.row0 + (ok ? rr : 0)) * kHeadDim + ch * 8,
                       ok ? 16 : 0);
  }
  const int gid = lane >> 2, tig = lane & 3;
  for (int t = 0; t < kTilesPerCta; ++t) {
    const int page0 = (blockIdx.x * kTilesPerCta + t) * kTilePages;
    if (page0 >= g.max_ne) break;
    if (t > 0) __syncthreads();  // previous tile consumed
    // representatives of 64 pages: 1024 16-byte chunks
#pragma unroll
    for (int i = 0; i < (kTilePages * 16) / 128; ++i) {
      const int c = tid + i * 128;
      const int p = c >> 4, ch = c & 15;
      const int j = page0 + p;
      const bool ok = j < g.max_ne;
      const std::int64_t pid = ok ? trow[j] : 0;
      detail::cp_async16(uR + detail::swz(p, ch), reps + (pid * kv_heads + g.kv_head) * kHeadDim + ch * 8, ok ? 16 : 0);
    }
    detail::cp_async_commit();
    detail::cp_async_wait<0>();
    __syncthreads();
    for (int mt = warp; mt < mtiles; mt += 4) {
      float acc[8][4];
#pragma unroll
      for (int n = 0; n < 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
#pragma unroll
      for (int ks = 0; ks < 8; ++ks) {
        uint32_t a0, a1, a2, a3;
        detail::ldmatrix_x4(a0, a1, a2, a3, uQ + detail::swz(mt * 16 + (lane & 15), 2 * ks + (lane >> 4)));
#pragma unroll
        for (int np = 0; np < 4; ++np) {
          uint32_t b0, b1, b2, b3;
          detail::ldmatrix_x4(b0, b1, b2, b3,
                              uR + detail::swz(np * 16 + (lane & 7) + ((lane >> 4) << 3), 2 * ks + ((lane >> 3) & 1)));
          detail::mma_bf16(acc[2 * np], a0, a1, a2, a3, b0, b1);
          detail::mma_bf16(acc[2 * np + 1], a0, a1, a2, a3, b2, b3);
        }
      }
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int rr = mt * 16 + gid + half * 8;
        if (rr >= g.n_rows) continue;
        const int row = g.row0 + rr;
        const int ne = rows[row].n_e;
        float* out = scores + static_cast<std::int64_t>(row) * score_stride;
#pragma unroll
        for (int n = 0; n < 8; ++n) {
          const int j = page0 + n * 8 + 2 * tig;
          if (j + 1 < ne) {
            __stcs(reinterpret_cast<float2*>(out + j), make_float2(acc[n][2 * half], acc[n][2 * half + 1]));
          } else if (j < ne) {
            out[j] = acc[n][2 * half];
          }
        }
      }
    }
  }
}

}  // namespace

void score_pages(const ScoreArgs& a, Stream s, Instrument* ins) {
  const auto& rows = *a.rows_host;
  const auto& groups = *a.groups_host;
  if (rows.empty()) return;
  double q_tokens = 0, ne_sum = 0, rep_bytes = 0, issued = 0;
  int max_ne = 0;
  for (const auto& r : rows) {
    q_tokens += r.n_q;
    ne_sum += r.n_e;
  }
  for (const auto& g : groups) {
    rep_bytes += static_cast<double>(g.max_ne) * (kHeadDim * 2.0 + 4.0);
    issued += 2.0 * kHeadDim * ((g.n_rows + 15) / 16 * 16.0) * ((g.max_ne + kTilePages - 1) / kTilePages * kTilePages);
    max_ne = std::max(max_ne, g.max_ne);
  }
  {
    ScopedLaunch sl(ins, Component::scoring, "sum_index_queries", q_tokens * kHeadDim * 2.0 + rows.size() * kHeadDim * 2.0,
                    q_tokens * kHeadDim, q_tokens * kHeadDim, s);
    sum_iq_kernel<<<static_cast<unsigned>(rows.size()), 128, 0, s>>>(reinterpret_cast<const __nv_bfloat16*>(a.iq),
                                                                    a.kv_heads, a.rows,
                                                                    reinterpret_cast<__nv_bfloat16*>(a.qsum));
    CISA_LAUNCH_CHECK();
  }
  int max_rows = 0;
  for (const auto& g : groups) max_rows = std::max(max_rows, g.n_rows);
  const int smem = kTilePages * 256 + (max_rows + 15) / 16 * 16 * 256;
  static bool attr_set = false;
  if (!attr_set) {
    CISA_CUDA(cudaFuncSetAttribute(score_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kTilePages * 256 + kMaxScoreGroupRows * 256));
    attr_set = true;
  }
  ScopedLaunch sl(ins, Component::scoring, "score_pages",
                  rep_bytes + ne_sum * 4.0 + rows.size() * kHeadDim * 2.0, 2.0 * kHeadDim * ne_sum, issued, s);
  dim3 grid(static_cast<unsigned>((max_ne + kTilePages * kTilesPerCta - 1) / (kTilePages * kTilesPerCta)),
            static_cast<unsigned>(groups.size()));
  score_kernel<<<grid, 128, static_cast<size_t>(smem), s>>>(
      reinterpret_cast<const __nv_bfloat16*>(a.qsum), reinterpret_cast<const __nv_bfloat16*>(a.reps), a.kv_heads,
      a.table.ids, a.table.stride, a.rows, a.groups, a.scores, a.score_stride);
  CISA_LAUNCH_CHECK();
}

}  // namespace cisa::kernels
