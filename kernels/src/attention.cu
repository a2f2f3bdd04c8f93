// Paged attention (dense and CISA): a work item = up to 128 query rows of one KV group
// (row = position * r + head, so one KV tile feeds G*r rows), reading K/V in place through a page
// list. CTA = WM x WN warps: WM warps split the rows (16 each), WN warps split each 64-token KV
// tile (64/WN tokens each; their partial softmax states are merged in shared memory at the end).
// K/V tiles (4 pages) stream through a STAGES-deep cp.async ring (16-byte chunks, zero-fill past
// the list, XOR-swizzled rows in the wgmma 128-byte-swizzle layout). S = Q K^T and O += P V use
// BF16 mma.sync (16/32-row tiles) or wgmma (64 rows, lockstep) with fp32 accumulators; online
// softmax in the exp2 domain. 128-row tiles use the warp-specialised kernel (WS): 128-token K/V
// tiles (8 pages) loaded by TMA from a producer warp, two consumer warpgroups ping-ponging S/PV
// issue against each other's softmax. Split-KV writes fp32 partial O + log2-sum-exp per split and a
// combine kernel merges them; grids of many works split only the works past their last whole wave
// (tail split).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

#include <cuda.h>

#include "cisa_kernels/attention.hpp"
#include "common.cuh"
#include "wgmma.cuh"

namespace cisa::kernels {
namespace {

constexpr int kTileTok = 64;
constexpr int kTilePages = kTileTok / kPageTokens;
constexpr int kOStride = 132;  // padded fp32 row stride for the epilogue
// The warp-specialised kernel: 128-token K/V tiles (8 pages) in a 3-deep ring (192 KB; 4 x 64-token
// tiles before session 7).
constexpr int kWsTile = 128, kWsStages = 3;
// setmaxnreg split of the warp-specialised kernel (384 threads, 168 registers each at launch):
// 128 x 40 + 256 x 232 = 64,512 registers.
constexpr int kWsProducerRegs = 40, kWsConsumerRegs = 232;

// Tile layout shared by ldmatrix and wgmma: [d half (2)][nrows][128 B], 16-byte chunks XOR-swizzled
// with (row & 7) inside each 1024-byte atom of 8 rows (the wgmma 128-byte-swizzle canonical
// layout).
__device__ __forceinline__ uint32_t tswz(int row, int ch, int nrows) {
  return static_cast<uint32_t>((ch >> 3) * nrows * 128 + row * 128 + (((ch & 7) ^ (row & 7)) << 4));
}

// Which MMA path the 64/128-row kernels use (CISA_ATTN_MMA=sync forces mma.sync, for comparisons).
bool use_wgmma() {
  static const bool v = [] {
    const char* e = std::getenv("CISA_ATTN_MMA");
    return !(e && std::string(e) == "sync");
  }();
  return v;
}

// Split launches are programmatic dependent launches (detail::launch_ex with pdl): the attention and
// combine kernels' CTAs start while the previous kernel drains (the combine's as soon as every
// attention CTA has started); each calls detail::pdl_wait before reading anything a kernel may have
// written (Q, the page lists, the partials).

struct KParams {
  CUtensorMap tk,
      tv;  // K and V as [tokens][kv_heads][128] (3-D, 64 x 1 x 16 boxes, 128-B swizzle); WS only
  const __nv_bfloat16* q;
  __nv_bfloat16* o;
  const __nv_bfloat16* k;
  const __nv_bfloat16* v;
  const int* table;
  int table_stride;
  const int* sparse;
  int sparse_stride;
  const AttnWork* work;
  int h_q, r, kv_heads;
  float scale_log2;
  int num_splits;
  // 0: every work split num_splits ways (grid works x splits). > 0 (tail split): works [0, n_full)
  // whole, the others num_splits ways, one CTA each, in a 1-D grid (whole works first)
  int n_full;
  float* part_o;
  float* part_lse;
};

// Progress of the first kAttnTimeCtas CTAs (linear block id) of the last attention launch, for
// the L2-sharing question of the CISA byte model (NOTES session 22: do co-resident CTAs of a stream
// walk their sorted page lists in step?): %globaltimer (ns) at the CTA's start, when its consumer
// reaches tiles ntiles/4, ntiles/2 and 3 ntiles/4, and before its epilogue; then SM id, tile
// count and work index. Thread 0 stores 7 words a CTA (attention_cta_times reads them).
constexpr int kAttnTimeCtas = 16384;
__device__ unsigned long long g_attn_gt[kAttnTimeCtas][8];
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned smid() {
  unsigned v;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(v));
  return v;
}

// WS: producer warpgroup + 2 consumer warpgroups (setmaxnreg moves registers to the consumers).
// TT: KV tile tokens (64; the warp-specialised kernel 128: half the ping-pong turns per FLOP).
// EARLY: the early part (AttnArgs::early; 16/32-row split launches whose CTAs are all resident):
// without it the kernel is the one before session 10.
template <int WM, int WN, int STAGES, bool WG, bool WS = false, int TT = kTileTok, bool EARLY = false>
__global__ void __launch_bounds__(WM* WN * 32 + (WS ? 128 : 0), 1)
    attn_kernel(const __grid_constant__ KParams p) {
  static_assert(!EARLY || (!WS && !WG), "early part: mma.sync kernels only");
  constexpr int NW = WM * WN, NT = NW * 32, M = 16 * WM, TN = TT / WN, TP = TT / kPageTokens;
  static_assert(TT == kTileTok || (WS && TT == 128), "128-token tiles: warp-specialised kernel only");
  constexpr int NTT = NT + (WS ? 128 : 0);  // + one producer warpgroup when warp-specialised
  static_assert(!WS || (WG && WM == 8), "warp specialisation: two consumer warpgroups of wgmma");
  __shared__ __align__(8) uint64_t mbar[2 * STAGES];  // WS: full[STAGES], empty[STAGES]
  static_assert(!WG || (WN == 1 && WM % 4 == 0), "wgmma path: whole warpgroups of rows");
  extern __shared__ __align__(128) unsigned char smem_raw[];
  unsigned char* smem =
      smem_raw + (((detail::smem_u32(smem_raw) + 1023u) & ~1023u) - detail::smem_u32(smem_raw));
  __shared__ float s_m[NW][16], s_l[NW][16];
  unsigned char* sQ = smem;
  unsigned char* sKV = smem + M * 256;  // [STAGES][K TTx256B | V TTx256B]
  const uint32_t uQ = detail::smem_u32(sQ), uKV = detail::smem_u32(sKV);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / WN, wn = warp % WN;
  const int gid = lane >> 2, tig = lane & 3;

  // work, its split and split count, and the partials' block index (pw) of this CTA
  int wi = blockIdx.x, split = blockIdx.y, nsplit = p.num_splits, pw = blockIdx.x;
  if (p.n_full > 0) {
    if (wi < p.n_full) {
      split = 0;
      nsplit = 1;
    } else {
      pw = (wi - p.n_full) / p.num_splits;
      split = (wi - p.n_full) % p.num_splits;
      wi = p.n_full + pw;
    }
  }
  const AttnWork w = p.work[wi];
  const int* list = w.list_src == 0
                        ? p.table + static_cast<std::int64_t>(w.list_row) * p.table_stride
                        : p.sparse + static_cast<std::int64_t>(w.list_row) * p.sparse_stride;
  // Two ranges with an early part (EARLY): the split's share of the early entries [n_sel, n_pages),
  // read through the block table (tiles [0, nte)), then its share of [0, n_sel) (tiles [nte,
  // ntiles)); each share rounded to whole tiles. Otherwise one range, nte = 0.
  const bool two = EARLY && w.n_early > 0;
  const int n_sel = two ? w.n_pages - w.n_early : w.n_pages;
  int per = (n_sel + nsplit - 1) / nsplit;
  per = (per + TP - 1) / TP * TP;
  const int p_begin = min(n_sel, split * per);
  const int p_end = min(n_sel, p_begin + per);
  int e_begin = n_sel, e_end = n_sel;
  std::int64_t e_base = 0;  // early entry li is p.table[e_base + li]
  if (two) {
    int pe = (w.n_early + nsplit - 1) / nsplit;
    pe = (pe + TP - 1) / TP * TP;
    e_begin = n_sel + min(w.n_early, split * pe);
    e_end = n_sel + min(w.n_early, split * pe + pe);
    e_base = static_cast<std::int64_t>(w.early_row) * p.table_stride + w.early_col - n_sel;
  }
  const int nrows = w.n_pos * p.r;
  const int nte = two ? (e_end - e_begin + TP - 1) / TP : 0;
  const int ntiles = nte + (p_end - p_begin + TP - 1) / TP;
  // progress record (g_attn_gt): thread 0 of the first kAttnTimeCtas CTAs
  const unsigned cta_lin = blockIdx.y * gridDim.x + blockIdx.x;
  unsigned long long* const rec =
      tid == 0 && cta_lin < static_cast<unsigned>(kAttnTimeCtas) ? g_attn_gt[cta_lin] : nullptr;
  if (rec) {
    rec[0] = global_ns();
    rec[1] = rec[2] = rec[3] = rec[4] = 0;
    rec[5] = smid();
    rec[6] = static_cast<unsigned long long>(ntiles);
    rec[7] = static_cast<unsigned long long>(wi);
  }
  auto mark_progress = [&](int tile) {
    if (rec && ntiles >= 4) {
      if (tile == ntiles / 4) rec[1] = global_ns();
      if (tile == ntiles / 2) rec[2] = global_ns();
      if (tile == 3 * ntiles / 4) rec[3] = global_ns();
    }
  };
  // first list index and end of the range of tile t
  auto tile_lb = [&](int t) { return two && t < nte ? e_begin + t * TP : p_begin + (t - nte) * TP; };
  auto tile_end = [&](int t) { return two && t < nte ? e_end : p_end; };
  // the work descriptors are plan data (copied before any kernel of the step); Q and the lists may
  // come from the previous kernel. With an early part the wait comes before the first tile of the
  // other entries (issue), or before the epilogue when the split has none.
  auto wait_prev = [&] {
    detail::pdl_wait();
    detail::pdl_trigger();  // the combine (if any) may be scheduled; it waits for this grid's end
  };
  if (!two) wait_prev();

  // Q rows -> shared memory (zero-filled past nrows)
  for (int c = tid; c < M * 16; c += NTT) {
    const int row = c >> 4, ch = c & 15;
    const bool ok = row < nrows;
    const int rr = ok ? row : 0;
    const __nv_bfloat16* src =
        p.q +
        (static_cast<std::int64_t>(w.q_tok0 + rr / p.r) * p.h_q + w.kv_head * p.r + rr % p.r) *
            kHeadDim +
        ch * 8;
    detail::cp_async16(uQ + tswz(row, ch, M), src, ok ? 16 : 0);
  }
  detail::cp_async_commit();

  // The list entries (page ids) of tile `tile`. The block table (and the early entries) through
  // the read-only path; the sparse table, which the previous kernel writes while this one may
  // already run (PDL), by L2 loads ordered after the wait (ld.global.nc may be served stale or
  // scheduled early)
  auto entries = [&](int tile, int& e0, int& e1, int& e2, int& e3) {
    const int lb = tile_lb(tile);
    const int n_ok = min(TP, tile_end(tile) - lb);
    const bool ro = !EARLY || tile < nte || w.list_src == 0;
    const int* lp = two && tile < nte ? p.table + e_base + lb : list + lb;
    auto ld = [&](const int* a) { return ro ? __ldg(a) : detail::ld_cg_ordered(a); };
    e0 = ld(lp);
    e1 = n_ok > 1 ? ld(lp + 1) : 0;
    e2 = n_ok > 2 ? ld(lp + 2) : 0;
    e3 = n_ok > 3 ? ld(lp + 3) : 0;
  };
  // EARLY (session 12): the entries of the next tile are loaded right after a tile's copies are
  // issued, so that their L2 round trip (ordered loads: no L1 line shared between tiles) overlaps
  // this tile's math instead of stalling the next issue; never for the first tile after the wait
  // (tile nte of a split with an early part), whose entries may only be read after it.
  int pf0 = 0, pf1 = 0, pf2 = 0, pf3 = 0, pf_tile = -1;
  auto issue = [&](int tile) {
    if (two && tile == nte) wait_prev();
    const int stage = tile % STAGES;
    const uint32_t dK = uKV + stage * (2 * TT * 256), dV = dK + TT * 256;
    const int lb = tile_lb(tile);
    const int n_ok = min(TP, tile_end(tile) - lb);
    int pid0, pid1, pid2, pid3;
    if (EARLY && tile == pf_tile) {
      pid0 = pf0;
      pid1 = pf1;
      pid2 = pf2;
      pid3 = pf3;
    } else {
      entries(tile, pid0, pid1, pid2, pid3);
    }
#pragma unroll
    for (int it = 0; it < (TT * 16) / NT; ++it) {
      const int c = tid + it * NT;
      const int tok = c >> 4, ch = c & 15, pg = tok >> 4;
      const int pid = pg == 0 ? pid0 : pg == 1 ? pid1 : pg == 2 ? pid2 : pid3;
      const bool ok = pg < n_ok;
      const std::int64_t off =
          ((static_cast<std::int64_t>(pid) * kPageTokens + (tok & 15)) * p.kv_heads + w.kv_head) *
              kHeadDim +
          ch * 8;
      detail::cp_async16(dK + tswz(tok, ch, TT), p.k + off, ok ? 16 : 0);
      detail::cp_async16(dV + tswz(tok, ch, TT), p.v + off, ok ? 16 : 0);
    }
    if constexpr (EARLY) {
      const int nt = tile + 1;
      if (nt < ntiles && !(two && nt == nte)) {
        entries(nt, pf0, pf1, pf2, pf3);
        pf_tile = nt;
      }
    }
  };

  if constexpr (!WS) {
#pragma unroll
    for (int t = 0; t < STAGES - 1; ++t) {
      if (t < ntiles) issue(t);
      detail::cp_async_commit();
    }
  } else {
    detail::cp_async_commit();
  }

  float oacc[16][4];
#pragma unroll
  for (int i = 0; i < 16; ++i) oacc[i][0] = oacc[i][1] = oacc[i][2] = oacc[i][3] = 0.0f;
  float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.0f, 0.0f};
  const int row_a = wm * 16 + gid;  // rows row_a and row_a + 8
  const int qpos[2] = {w.q_pos0 + row_a / p.r, w.q_pos0 + (row_a + 8) / p.r};
  const int mask_lim = min(p_end, w.mask_from);  // (the single range's)

  // Softmax of one S tile (exp2 domain): causal/list mask, running max and sum; P replaces S in
  // place; alpha = rescale factor of the previous O rows. The scale (> 0, so the max commutes with
  // it) is folded into one FFMA per element, the mask is skipped whole on tiles it cannot touch.
  auto softmax_tile = [&](float(&sc)[TN / 8][4], int tile, float(&alpha)[2]) {
    const int tli = tile_lb(tile), tend = tile_end(tile);
    if (tli + TP > (two ? min(tend, w.mask_from) : mask_lim)) {
#pragma unroll
      for (int j = 0; j < TN / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int tok = wn * TN + j * 8 + 2 * tig + (e & 1);
          const int li = tli + (tok >> 4);
          bool dead = li >= tend;
          if (!dead && li >= w.mask_from) {
            const int key = w.mask_tok0 + (li - w.mask_from) * kPageTokens + (tok & 15);
            dead = key > qpos[e >> 1];
          }
          if (dead) sc[j][e] = -INFINITY;
        }
    }
    const float sl2 = p.scale_log2;
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < TN / 8; ++j) mx = fmaxf(mx, fmaxf(sc[j][2 * hr], sc[j][2 * hr + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m_run[hr], mx * sl2);
      const float m_use = m_new == -INFINITY ? 0.0f : m_new;
      // wgmma paths: alpha = 1 exactly when the max did not move (rescale_o then skips the O)
      if constexpr (WG)
        alpha[hr] = m_new == m_run[hr] ? 1.0f : detail::exp2_approx(m_run[hr] - m_use);
      else
        alpha[hr] = detail::exp2_approx(m_run[hr] - m_use);
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < TN / 8; ++j) {
        const float p0 = detail::exp2_approx(fmaf(sc[j][2 * hr], sl2, -m_use));
        const float p1 = detail::exp2_approx(fmaf(sc[j][2 * hr + 1], sl2, -m_use));
        sc[j][2 * hr] = p0;
        sc[j][2 * hr + 1] = p1;
        sum += p0 + p1;
      }
      l_run[hr] = l_run[hr] * alpha[hr] + sum;
      m_run[hr] = m_new;
    }
  };
  // The tile steps shared by the mainloops: Q fragments, S = Q K^T (wgmma, async), P -> BF16 A
  // fragments, O += P V (wgmma, async).
  // S = Q K^T: A = Q fragments in registers (ldmatrix once), B = the K tile from shared memory
  // (K-major, 128-byte swizzle; k step ks = 16 columns: half ks / 4, 32 B per step in the row). A
  // from shared memory too saves 32 registers but doubles the tensor cores' shared-memory reads per
  // S (4 KB per 32-cycle m64n64k16): 15-24% slower (NOTES.md, issue 14 session 4).
  uint32_t qf[8][4];
  auto load_q = [&] {
#pragma unroll
    for (int ks = 0; ks < 8; ++ks)
      detail::ldmatrix_x4(qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3],
                          uQ + tswz(wm * 16 + (lane & 15), 2 * ks + (lane >> 4), M));
  };
  auto issue_s = [&](float(&s)[TN / 8][4], uint32_t uK) {
    detail::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < 8; ++ks) {
      const uint64_t desc = detail::gmma_desc(uK + (ks >> 2) * (TT * 128) + (ks & 3) * 32, 16, 1024);
      if constexpr (TN == 128)
        detail::wgmma_m64n128k16_rs(&s[0][0], qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3], desc,
                                    ks > 0);
      else
        detail::wgmma_m64n64k16_rs(&s[0][0], qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3], desc,
                                   ks > 0);
    }
    detail::wgmma_commit();
  };
  auto pack_p = [&](const float(&s)[TN / 8][4], uint32_t(&pk)[TN / 16][4]) {
#pragma unroll
    for (int kk = 0; kk < TN / 16; ++kk) {
      pk[kk][0] = detail::pack_bf16(s[2 * kk][0], s[2 * kk][1]);
      pk[kk][1] = detail::pack_bf16(s[2 * kk][2], s[2 * kk][3]);
      pk[kk][2] = detail::pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      pk[kk][3] = detail::pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
    }
  };
  auto issue_pv = [&](const uint32_t(&pk)[TN / 16][4], uint32_t uV) {
    detail::fence_operands<16>(oacc);
    detail::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < TN / 16; ++kk)
      detail::wgmma_m64n128k16_rs<1>(&oacc[0][0], pk[kk][0], pk[kk][1], pk[kk][2], pk[kk][3],
                                     detail::gmma_desc(uV + kk * 16 * 128, TT * 128, 1024), 1);
    detail::wgmma_commit();
  };
  // O *= alpha. The wgmma paths skip it when no row of the warp has a new max (alpha == 1 for
  // every lane: exact): on long KV lists the running max stops moving after a few tiles, and the
  // 64 multiplies were a quarter of the softmax's instructions (-6 to -7 % on the 128-row cases,
  // NOTES.md session 6). The mma.sync paths (16/32 rows, memory-bound) gained nothing: unchanged.
  auto rescale_o = [&](const float(&alpha)[2]) {
    if constexpr (WG)
      if (!__any_sync(0xffffffffu, alpha[0] != 1.0f || alpha[1] != 1.0f)) return;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      oacc[i][0] *= alpha[0];
      oacc[i][1] *= alpha[0];
      oacc[i][2] *= alpha[1];
      oacc[i][3] *= alpha[1];
    }
  };

  // Epilogue: merge the WN warps of each row block, normalise, write. Run by the consumer threads
  // (tid < NT); sync_c = a barrier over them (the whole CTA unless warp-specialised).
  auto sync_c = [&] {
    if constexpr (WS)
      detail::named_bar_sync(3, NT);
    else
      __syncthreads();
  };
  auto epilogue = [&] {
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      l_run[hr] += __shfl_xor_sync(0xffffffffu, l_run[hr], 1);
      l_run[hr] += __shfl_xor_sync(0xffffffffu, l_run[hr], 2);
      if (tig == 0 && warp < NW) {
        s_m[warp][gid + 8 * hr] = m_run[hr];
        s_l[warp][gid + 8 * hr] = l_run[hr];
      }
    }
    sync_c();
    // after the first barrier: every consumer has left the mainloop, the ring is free
    float* s_mt = reinterpret_cast<float*>(smem) + NW * 16 * kOStride;
    float* s_lt = s_mt + M;
    if (tid < M) {
      const int bw = (tid / 16) * WN, rr = tid % 16;
      float mt = -INFINITY;
      for (int i = 0; i < WN; ++i) mt = fmaxf(mt, s_m[bw + i][rr]);
      float lt = 0.0f;
      if (mt != -INFINITY)
        for (int i = 0; i < WN; ++i) lt += s_l[bw + i][rr] * exp2f(s_m[bw + i][rr] - mt);
      s_mt[tid] = mt;
      s_lt[tid] = lt;
    }
    sync_c();
    float* sO = reinterpret_cast<float*>(smem);  // [NW][16][kOStride], then s_mt, s_lt
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      if (warp >= NW) break;
      const float mt = s_mt[row_a + 8 * hr];
      const float f = (mt == -INFINITY || m_run[hr] == -INFINITY) ? 0.0f : exp2f(m_run[hr] - mt);
      float* dst = sO + (warp * 16 + gid + 8 * hr) * kOStride;
#pragma unroll
      for (int i = 0; i < 16; ++i)
        *reinterpret_cast<float2*>(dst + i * 8 + 2 * tig) =
            make_float2(oacc[i][2 * hr] * f, oacc[i][2 * hr + 1] * f);
    }
    sync_c();
    for (int idx = tid; idx < nrows * (kHeadDim / 2) && tid < NT; idx += NT) {
      const int row = idx / (kHeadDim / 2), d = (idx % (kHeadDim / 2)) * 2;
      const int bw = (row / 16) * WN, rr = row % 16;
      float2 acc = make_float2(0.f, 0.f);
#pragma unroll
      for (int i = 0; i < WN; ++i) {
        const float2 x = *reinterpret_cast<const float2*>(sO + ((bw + i) * 16 + rr) * kOStride + d);
        acc.x += x.x;
        acc.y += x.y;
      }
      const float lt = s_lt[row];
      const float inv = lt > 0.0f ? 1.0f / lt : 0.0f;
      if (nsplit == 1) {
        const std::int64_t off = (static_cast<std::int64_t>(w.q_tok0 + row / p.r) * p.h_q +
                                  w.kv_head * p.r + row % p.r) *
                                     kHeadDim +
                                 d;
        *reinterpret_cast<__nv_bfloat162*>(p.o + off) =
            __floats2bfloat162_rn(acc.x * inv, acc.y * inv);
      } else {
        const std::int64_t prow =
            (static_cast<std::int64_t>(pw) * p.num_splits + split) * M + row;
        *reinterpret_cast<float2*>(p.part_o + prow * kHeadDim + d) =
            make_float2(acc.x * inv, acc.y * inv);
        if (d == 0) p.part_lse[prow] = lt > 0.0f ? s_mt[row] + log2f(lt) : -INFINITY;
      }
    }
  };

  if constexpr (WS) {
    // Warp-specialised (FA3 structure): one producer warp (of a producer warpgroup that gives its
    // registers to the consumers with setmaxnreg) loads each K/V tile with 4 x TP TMA copies
    // (per page: K and V, two 64-column halves; the tensor map's 128-byte swizzle writes the wgmma
    // layout) completing on the stage's "full" mbarrier; the two consumer warpgroups take turns
    // (named barriers 1 and 2) to issue S(t) = Q K(t)^T and O += P(t-1) V(t-1) back to back, then
    // do the softmax of S(t) while the other warpgroup's GEMMs and their own P V run on the tensor
    // cores.
    const uint32_t ufull = detail::smem_u32(&mbar[0]), uempty = detail::smem_u32(&mbar[STAGES]);
    if (tid == 0) {
      for (int st = 0; st < STAGES; ++st) {
        detail::mbar_init(ufull + 8 * st, 1);
        detail::mbar_init(uempty + 8 * st, NT);
      }
      detail::fence_mbar_init();
    }
    detail::cp_async_wait<0>();  // Q, read by the tensor cores (async proxy)
    detail::fence_proxy_async();
    __syncthreads();
    if (warp >= NW) {
      detail::setmaxnreg_dec<kWsProducerRegs>();
      if (warp != NW) return;
      // lane = page * 4 + (V ? 2 : 0) + d half; lanes past 4 x TP only wait along
      constexpr int kLanes = 4 * TP;
      const int pg = (lane >> 2) % TP, half = lane & 1;
      const uint64_t map = reinterpret_cast<uint64_t>((lane & 2) ? &p.tv : &p.tk);
      const uint32_t doff =
          ((lane & 2) ? TT * 256 : 0) + half * (TT * 128) + pg * (kPageTokens * 128);
      for (int tile = 0; tile < ntiles; ++tile) {
        const int st = tile % STAGES;
        if (tile >= STAGES) detail::mbar_wait(uempty + 8 * st, ((tile / STAGES) & 1) ^ 1);
        const int lb = p_begin + tile * TP;
        const int n_ok = min(TP, p_end - lb);
        // pages past the list load the tile's first page again (finite data; masked to P = 0)
        const int pid = lane < kLanes ? __ldg(list + lb + (pg < n_ok ? pg : 0)) : 0;
        if (lane == 0) detail::mbar_arrive_expect_tx(ufull + 8 * st, 2 * TT * 256);
        __syncwarp();
        if (lane < kLanes)
          detail::tma_load_3d(uKV + st * (2 * TT * 256) + doff, map, half * 64, w.kv_head,
                              pid * kPageTokens, ufull + 8 * st);
      }
    } else {
      detail::setmaxnreg_inc<kWsConsumerRegs>();
      if (ntiles > 0) {
        const int wg = warp >> 2;
        load_q();
        if (wg == 1) detail::named_bar_arrive(1, 2 * 128);  // warpgroup 0 issues first
        detail::mbar_wait(ufull, 0);
        detail::named_bar_sync(1 + wg, 2 * 128);
        float sacc[TN / 8][4];
        issue_s(sacc, uKV);
        detail::named_bar_arrive(2 - wg, 2 * 128);
        detail::wgmma_wait<0>();
        detail::fence_operands<TN / 8>(sacc);
        float alpha[2];
        softmax_tile(sacc, 0, alpha);
        uint32_t pk[TN / 16][4];
        pack_p(sacc, pk);
        for (int tile = 1; tile < ntiles; ++tile) {
          mark_progress(tile);
          const int st = tile % STAGES, pst = (tile - 1) % STAGES;
          detail::mbar_wait(ufull + 8 * st, (tile / STAGES) & 1);
          float snew[TN / 8][4];
          detail::named_bar_sync(1 + wg, 2 * 128);
          issue_s(snew, uKV + st * (2 * TT * 256));
          issue_pv(pk, uKV + pst * (2 * TT * 256) + TT * 256);
          detail::named_bar_arrive(2 - wg, 2 * 128);
          detail::wgmma_wait<1>();  // S(tile) done; P V of the previous tile may still run
          detail::fence_operands<TN / 8>(snew);
          softmax_tile(snew, tile, alpha);
          detail::wgmma_wait<0>();
          detail::fence_operands<16>(oacc);
          detail::mbar_arrive(uempty + 8 * pst);
          rescale_o(alpha);
          pack_p(snew, pk);
        }
        const int lst = (ntiles - 1) % STAGES;
        detail::named_bar_sync(1 + wg, 2 * 128);
        issue_pv(pk, uKV + lst * (2 * TT * 256) + TT * 256);
        if (wg == 0)
          detail::named_bar_arrive(2, 2 * 128);  // warpgroup 1's last turn needs no answer
        detail::wgmma_wait<0>();
        detail::fence_operands<16>(oacc);
        detail::mbar_arrive(uempty + 8 * lst);
      }
      if (rec) rec[4] = global_ns();
      epilogue();
    }
  } else {
    for (int tile = 0; tile < ntiles; ++tile) {
      mark_progress(tile);
      detail::cp_async_wait<STAGES - 2>();
      if constexpr (WG) detail::fence_proxy_async();
      __syncthreads();
      if (tile + STAGES - 1 < ntiles) issue(tile + STAGES - 1);
      detail::cp_async_commit();
      const int stage = tile % STAGES;
      const uint32_t uK = uKV + stage * (2 * TT * 256), uV = uK + TT * 256;
      float sacc[TN / 8][4];
      if constexpr (WG) {  // wgmma, lockstep: S, softmax, P V in sequence
        if (tile == 0) load_q();
        issue_s(sacc, uK);
        detail::wgmma_wait<0>();
        detail::fence_operands<TN / 8>(sacc);
        float alpha[2];
        softmax_tile(sacc, tile, alpha);
        rescale_o(alpha);
        uint32_t pk[TN / 16][4];
        pack_p(sacc, pk);
        issue_pv(pk, uV);
        detail::wgmma_wait<0>();
        detail::fence_operands<16>(oacc);
      } else {  // mma.sync
#pragma unroll
        for (int j = 0; j < TN / 8; ++j) sacc[j][0] = sacc[j][1] = sacc[j][2] = sacc[j][3] = 0.0f;
#pragma unroll
        for (int ks = 0; ks < 8; ++ks) {
          uint32_t a0, a1, a2, a3;
          detail::ldmatrix_x4(a0, a1, a2, a3,
                              uQ + tswz(wm * 16 + (lane & 15), 2 * ks + (lane >> 4), M));
#pragma unroll
          for (int np = 0; np < TN / 16; ++np) {
            uint32_t b0, b1, b2, b3;
            detail::ldmatrix_x4(b0, b1, b2, b3,
                                uK + tswz(wn * TN + np * 16 + (lane & 7) + ((lane >> 4) << 3),
                                          2 * ks + ((lane >> 3) & 1), TT));
            detail::mma_bf16(sacc[2 * np], a0, a1, a2, a3, b0, b1);
            detail::mma_bf16(sacc[2 * np + 1], a0, a1, a2, a3, b2, b3);
          }
        }
        float alpha[2];
        softmax_tile(sacc, tile, alpha);
        rescale_o(alpha);
        uint32_t pk[TN / 16][4];
        pack_p(sacc, pk);
#pragma unroll
        for (int kk = 0; kk < TN / 16; ++kk)
#pragma unroll
          for (int dn = 0; dn < 8; ++dn) {
            uint32_t b0, b1, b2, b3;
            detail::ldmatrix_x4_trans(
                b0, b1, b2, b3,
                uV + tswz(wn * TN + kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8,
                          dn * 2 + (lane >> 4), TT));
            detail::mma_bf16(oacc[2 * dn], pk[kk][0], pk[kk][1], pk[kk][2], pk[kk][3], b0, b1);
            detail::mma_bf16(oacc[2 * dn + 1], pk[kk][0], pk[kk][1], pk[kk][2], pk[kk][3], b2, b3);
          }
      }
    }
  }
  if constexpr (!WS) {
    detail::cp_async_wait<0>();
    __syncthreads();
    if (two && ntiles == nte) wait_prev();
    if (rec) rec[4] = global_ns();
    epilogue();
  }
}

// One block per (work, row): the splits' log2-sum-exps read in parallel (one per thread), their
// weights through shared memory, then each thread sums two columns over the splits.
constexpr int kCombineThreads = 64;
__global__ void __launch_bounds__(kCombineThreads) combine_kernel(const KParams p, int M) {
  __shared__ float s_w[kCombineThreads];
  __shared__ float s_red[2];
  const AttnWork w = p.work[p.n_full + blockIdx.x];  // the split works
  const int row = blockIdx.y;
  if (row >= w.n_pos * p.r) return;
  detail::pdl_wait();
  const int t = threadIdx.x, d = t * 2;
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * p.num_splits * M + row;
  const int ns = p.num_splits;
  // max over the splits
  float mx = -INFINITY;
  for (int s = t; s < ns; s += kCombineThreads)
    mx = fmaxf(mx, __ldcg(p.part_lse + base + static_cast<std::int64_t>(s) * M));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  if ((t & 31) == 0) s_red[t >> 5] = mx;
  __syncthreads();
  mx = fmaxf(s_red[0], s_red[1]);
  float2 acc = make_float2(0.f, 0.f);
  float wsum = 0.f;
  for (int s0 = 0; s0 < ns; s0 += kCombineThreads) {
    const int nc = min(kCombineThreads, ns - s0);
    __syncthreads();
    if (t < nc) {
      const float lse = __ldcg(p.part_lse + base + static_cast<std::int64_t>(s0 + t) * M);
      s_w[t] = (mx == -INFINITY || lse == -INFINITY) ? 0.0f : exp2f(lse - mx);
    }
    __syncthreads();
#pragma unroll 4
    for (int i = 0; i < nc; ++i) {
      const float wt = s_w[i];
      const std::int64_t pr = base + static_cast<std::int64_t>(s0 + i) * M;
      const float2 x = __ldcg(reinterpret_cast<const float2*>(p.part_o + pr * kHeadDim + d));
      if (wt != 0.0f) {  // a split with no keys wrote no finite partial O
        acc.x += wt * x.x;
        acc.y += wt * x.y;
        wsum += wt;
      }
    }
  }
  const float inv = wsum > 0.f ? 1.0f / wsum : 0.f;
  const std::int64_t off =
      (static_cast<std::int64_t>(w.q_tok0 + row / p.r) * p.h_q + w.kv_head * p.r + row % p.r) *
          kHeadDim +
      d;
  *reinterpret_cast<__nv_bfloat162*>(p.o + off) = __floats2bfloat162_rn(acc.x * inv, acc.y * inv);
}

template <int WM, int WN, int STAGES, int TT = kTileTok>
constexpr int smem_bytes() {
  return 16 * WM * 256 + STAGES * 2 * TT * 256 + 1024;  // + alignment slack (1024-B atoms)
}

template <int WM, int WN, int STAGES, bool WG, bool WS = false, int TT = kTileTok, bool EARLY = false>
void launch_cfg(const KParams& kp, int n_work, Stream s) {  // n_work: CTAs along x
  constexpr int smem = smem_bytes<WM, WN, STAGES, TT>();
  static_assert(WM * WN * 16 * kOStride * 4 + 2 * 16 * WM * 4 <= smem - 1024,
                "epilogue does not fit");
  static_assert(smem <= 227 * 1024 - 1152, "shared memory (with the static arrays) over 227 KB");
  static bool set = false;
  if (!set) {
    CISA_CUDA(cudaFuncSetAttribute(attn_kernel<WM, WN, STAGES, WG, WS, TT, EARLY>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    set = true;
  }
  dim3 grid(static_cast<unsigned>(n_work), static_cast<unsigned>(kp.n_full > 0 ? 1 : kp.num_splits));
  detail::launch_ex(attn_kernel<WM, WN, STAGES, WG, WS, TT, EARLY>, grid,
                    dim3(WM * WN * 32 + (WS ? 128 : 0)), smem, s, kp.num_splits > 1, kp);
}

template <int WM, int WN, int STAGES, bool WG, bool WS = false, int TT = kTileTok>
int occupancy() {  // CTAs per SM (asked once)
  static const int n = [] {
    constexpr int smem = smem_bytes<WM, WN, STAGES, TT>();
    CISA_CUDA(cudaFuncSetAttribute(attn_kernel<WM, WN, STAGES, WG, WS, TT>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int v = 0;
    CISA_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &v, attn_kernel<WM, WN, STAGES, WG, WS, TT>, WM * WN * 32 + (WS ? 128 : 0), smem));
    return std::max(v, 1);
  }();
  return n;
}

// K or V as a 3-D tensor [tokens][kv_heads][128] BF16 for the TMA: one box = 16 tokens (one page) x
// one head x 64 columns (128 B), written with the 128-byte swizzle (the wgmma tile layout).
void encode_kv_map(CUtensorMap* map, const void* base, std::int64_t num_pages, int kv_heads) {
  using Encode =
      CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static Encode encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
#if CUDART_VERSION >= 12050
    CISA_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                               cudaEnableDefault, &q));
#else
    CISA_CUDA(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &q));
#endif
    if (fn == nullptr || q != cudaDriverEntryPointSuccess)
      throw std::runtime_error("cuTensorMapEncodeTiled not found");
    return reinterpret_cast<Encode>(fn);
  }();
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(kHeadDim), static_cast<cuuint64_t>(kv_heads),
                              static_cast<cuuint64_t>(num_pages) * kPageTokens};
  const cuuint64_t strides[2] = {kHeadDim * 2, static_cast<cuuint64_t>(kv_heads) * kHeadDim * 2};
  const cuuint32_t box[3] = {64, 1, kPageTokens}, estr[3] = {1, 1, 1};
  const CUresult r =
      encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(base), dims, strides, box,
             estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled failed: " +
                             std::to_string(static_cast<int>(r)));
}
void encode_kv_maps(KParams& kp, const PagedKV& kv) {
  encode_kv_map(&kp.tk, kv.k, kv.num_pages, kv.kv_heads);
  encode_kv_map(&kp.tv, kv.v, kv.num_pages, kv.kv_heads);
}

int occupancy_for(int rows) {
  const bool wg = use_wgmma();
  switch (rows) {
    case 16:
      return occupancy<1, 4, 3, false>();
    case 32:
      return occupancy<2, 2, 3, false>();
    case 64:
      return !wg ? occupancy<4, 1, 3, false>() : occupancy<4, 1, 2, true>();
    default:
      return !wg ? occupancy<8, 1, 2, false>()
                 : occupancy<8, 1, kWsStages, true, true, kWsTile>();
  }
}

// The early part is used for split launches (programmatic dependent launches) of the 16/32-row
// kernels whose CTAs are all resident at once (decode): only CTAs resident while the previous kernel
// runs can read their early part meanwhile; in grids of many works the reordering bought nothing
// and the sparse-list loads it needs (L2, not L1) cost the 16-row prefill (g4) 9 % (session 10).
bool early_fits(int n_work, int rows, int splits, int n_full, int num_sms) {
  if (rows > 32 || splits <= 1 || n_full > 0) return false;
  return static_cast<long long>(n_work) * splits <= static_cast<long long>(num_sms) * occupancy_for(rows);
}

}  // namespace

bool attention_early(const AttnArgs& a) {
  if (!a.early || a.work_host == nullptr || a.work_host->empty()) return false;
  const int num_sms = detail::device_sm_count();
  const int rows = attention_rows_per_cta(*a.work_host, a.r);
  const int splits = std::max(1, a.num_splits > 0 ? a.num_splits : attention_num_splits(a, num_sms));
  // a tail split (n_full > 0) needs more works than slots / 2, the early part all CTAs resident:
  // only a forced one can be set here
  const int n_full = splits > 1 && a.n_full > 0 ? a.n_full : 0;
  return early_fits(static_cast<int>(a.work_host->size()), rows, splits, n_full, num_sms);
}

void attention_cta_times_reset() {
  void* d = nullptr;
  CISA_CUDA(cudaGetSymbolAddress(&d, g_attn_gt));
  CISA_CUDA(cudaMemset(d, 0, sizeof(unsigned long long) * kAttnTimeCtas * 8));
}

std::vector<AttnCtaTime> attention_cta_times(int n_ctas) {
  std::vector<unsigned long long> h(static_cast<std::size_t>(kAttnTimeCtas) * 8);
  CISA_CUDA(cudaDeviceSynchronize());
  CISA_CUDA(cudaMemcpyFromSymbol(h.data(), g_attn_gt, h.size() * sizeof(unsigned long long)));
  const int n = std::clamp(n_ctas, 0, kAttnTimeCtas);
  std::vector<AttnCtaTime> out(static_cast<std::size_t>(n));
  for (int b = 0; b < n; ++b) {
    const unsigned long long* r = &h[static_cast<std::size_t>(b) * 8];
    out[static_cast<std::size_t>(b)] = AttnCtaTime{{r[0], r[1], r[2], r[3], r[4]},
                                                   static_cast<int>(r[5]),
                                                   static_cast<int>(r[6]),
                                                   static_cast<int>(r[7])};
  }
  return out;
}

std::int64_t attention_scratch_floats(int n_work, int num_splits, int rows_per_cta) {
  if (num_splits <= 1) return 0;
  return static_cast<std::int64_t>(n_work) * num_splits * rows_per_cta * (kHeadDim + 1);
}

WaveSplit attention_wave_plan(int n_work, int capacity, int tiles) {
  // Many works (> capacity / 2): split the KV only to fill the last wave. Cost in tile-times of one
  // CTA: waves x (tiles per split + kFixed) + kPartial tile-times per split CTA (fp32 partials
  // written, read back by the combine, an extra CTA start), spread over the slots. kPartial = 36 is
  // fitted to session 6's A/B on the H200 (dense Inkling, 256 works: 17 splits were 1.4 % slower;
  // dense Ultra, 2,048 works: 7 splits 1.5 % faster; kPartial = 4 had picked both). Equal-length
  // works are assumed (the longest counts); a split is taken only when it saves > 1 %.
  constexpr int kFixed = 4, kPartial = 36, kMaxSplits = 64, kMinTiles = 64, kMaxTail = 16;
  if (n_work <= 0 || capacity <= 0 || tiles <= 0) return {1, 0};
  auto cost = [&](int s) {
    const double waves = std::ceil(static_cast<double>(n_work) * s / capacity);
    const double per = std::ceil(static_cast<double>(tiles) / s) + kFixed;
    return waves * per + (s > 1 ? static_cast<double>(kPartial) * n_work * s / capacity : 0.0);
  };
  const double c1 = cost(1);
  int best = 1;
  double best_cost = c1;
  for (int s = 2; s <= kMaxSplits && tiles / s >= kMinTiles; ++s)
    if (cost(s) < best_cost) {
      best_cost = cost(s);
      best = s;
    }
  WaveSplit plan{best_cost < 0.99 * c1 ? best : 1, 0};
  if (plan.splits == 1) best_cost = c1;
  // Tail split: the works past the last whole wave (k = n_work mod capacity) split s ways into the
  // slots the whole waves leave; only those k x s CTAs write partials.
  const int full_waves = n_work / capacity, k = n_work - full_waves * capacity;
  if (full_waves >= 1 && k > 0)
    for (int s = 2; s <= kMaxTail && tiles / s >= kMinTiles; ++s) {
      const double c = full_waves * (static_cast<double>(tiles) + kFixed) +
                       std::ceil(static_cast<double>(k) * s / capacity) *
                           (std::ceil(static_cast<double>(tiles) / s) + kFixed) +
                       static_cast<double>(kPartial) * k * s / capacity;
      if (c < best_cost && c < 0.99 * c1) {
        best_cost = c;
        plan = WaveSplit{s, full_waves * capacity};
      }
    }
  return plan;
}

int attention_wave_splits(int n_work, int capacity, int tiles) {
  return attention_wave_plan(n_work, capacity, tiles).splits;
}

int attention_num_splits(const AttnArgs& a, int num_sms) {
  if (a.num_splits > 0) return a.num_splits;
  const auto& work = *a.work_host;
  if (work.empty()) return 1;
  const int rows = attention_rows_per_cta(work, a.r);
  const int capacity = num_sms * occupancy_for(rows);
  int max_pages = 0;
  for (const auto& w : work) max_pages = std::max(max_pages, w.n_pages);
  if (static_cast<int>(work.size()) * 2 > capacity)
    return attention_wave_splits(static_cast<int>(work.size()), capacity,
                                 (max_pages + kTilePages - 1) / kTilePages);
  int s = capacity / static_cast<int>(work.size());
  s = std::min(s, std::max(1, max_pages / (4 * kTilePages)));  // at least 4 tiles per split
  return std::max(s, 1);
}

void paged_attention(const AttnArgs& a, Stream s, Instrument* ins) {
  const auto& work = *a.work_host;
  if (work.empty()) return;
  const int rows = attention_rows_per_cta(work, a.r);
  const int num_sms = detail::device_sm_count();
  const int splits =
      std::max(1, a.num_splits > 0 ? a.num_splits : attention_num_splits(a, num_sms));
  const int n = static_cast<int>(work.size());
  // a many-work launch whose split count is the tail split's: whole works + split tail works
  int n_full = 0;
  if (a.n_full >= 0 && splits > 1)
    n_full = std::min(a.n_full, n);
  else if (const int capacity = num_sms * occupancy_for(rows); splits > 1 && n * 2 > capacity) {
    int max_pages = 0;
    for (const auto& w : work) max_pages = std::max(max_pages, w.n_pages);
    const WaveSplit plan =
        attention_wave_plan(n, capacity, (max_pages + kTilePages - 1) / kTilePages);
    if (plan.splits == splits) n_full = plan.n_full;
  }
  KParams kp{};
  kp.n_full = n_full;
  const bool early = a.early && early_fits(n, rows, splits, n_full, num_sms);
  kp.q = reinterpret_cast<const __nv_bfloat16*>(a.q);
  kp.o = reinterpret_cast<__nv_bfloat16*>(a.o);
  kp.k = reinterpret_cast<const __nv_bfloat16*>(a.kv.k);
  kp.v = reinterpret_cast<const __nv_bfloat16*>(a.kv.v);
  kp.table = a.table.ids;
  kp.table_stride = a.table.stride;
  kp.sparse = a.sparse.ids;
  kp.sparse_stride = a.sparse.stride;
  kp.work = a.work;
  kp.h_q = a.h_q;
  kp.r = a.r;
  kp.kv_heads = a.kv.kv_heads;
  const float scale = a.scale != 0.0f ? a.scale : 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  if (!(scale > 0.0f)) throw std::invalid_argument("paged_attention: scale must be > 0");
  kp.scale_log2 = scale * 1.4426950408889634f;
  kp.num_splits = splits;
  if (splits > 1) {
    const std::int64_t need = attention_scratch_floats(static_cast<int>(work.size()), splits, rows);
    if (a.scratch == nullptr || a.scratch_floats < need)
      throw std::runtime_error("paged_attention: scratch too small");
    kp.part_lse = a.scratch;
    kp.part_o = a.scratch + static_cast<std::int64_t>(work.size()) * splits * rows;
  }
  AttnCost cost = attention_cost(work, a.r, a.kv.kv_heads, rows, n_full > 0 ? 1 : splits);
  if (n_full > 0) {  // partials of the split tail works only (written and read back)
    double tail_rows = 0;
    for (int i = n_full; i < n; ++i) tail_rows += static_cast<double>(work[i].n_pos) * a.r;
    cost.bytes += 2.0 * tail_rows * splits * (kHeadDim * 4.0 + 4.0);
  }
  // CTAs along x (a tail split's grid is 1-D) and the split works the combine merges
  const int gx = n_full > 0 ? n_full + (n - n_full) * splits : n;
  const int n_comb = n - n_full;
  {
    ScopedLaunch sl(ins, Component::attention,
                    splits > 1 ? "paged_attention_split" : "paged_attention", cost.bytes,
                    cost.flops_useful, cost.flops_issued, s);
    switch (rows) {
      case 16:
        if (early)
          launch_cfg<1, 4, 3, false, false, kTileTok, true>(kp, gx, s);
        else
          launch_cfg<1, 4, 3, false>(kp, gx, s);
        break;
      case 32:
        if (early)
          launch_cfg<2, 2, 3, false, false, kTileTok, true>(kp, gx, s);
        else
          launch_cfg<2, 2, 3, false>(kp, gx, s);
        break;
      case 64:
        if (!use_wgmma())
          launch_cfg<4, 1, 3, false>(kp, gx, s);
        else
          launch_cfg<4, 1, 2, true>(kp, gx, s);  // 2 stages: two CTAs fit per SM
        break;
      default:
        if (!use_wgmma()) {
          launch_cfg<8, 1, 2, false>(kp, gx, s);
        } else {
          encode_kv_maps(kp, a.kv);
          launch_cfg<8, 1, kWsStages, true, true, kWsTile>(kp, gx, s);
        }
        break;
    }
    if (splits > 1) {
      detail::launch_ex(combine_kernel, dim3(static_cast<unsigned>(n_comb), static_cast<unsigned>(rows)),
                        dim3(kCombineThreads), 0, s, true, kp, rows);
    }
  }
}

}  // namespace cisa::kernels
