// Representatives: mean of each page's 16 keys, fp32 accumulation, BF16 out.
// One warp per (page, kv head): half-warps read alternate tokens with 16-byte loads (a 256-byte row),
// accumulate 8 channels each in fp32, then the two halves are combined with one shuffle.
#include "cisa_kernels/representatives.hpp"
#include "common.cuh"

namespace cisa::kernels {
namespace {

// Where item `slot`'s page is read from and its representative written (element offset of head 0).
struct PhysicalDst {  // reps [num_pages][kv_heads][128]; ids: the pages (nullptr: slot = page)
  const int* ids;
  __device__ void at(std::int64_t slot, int kv_heads, int h, std::int64_t& page, std::int64_t& dst) const {
    page = ids ? ids[slot] : slot;
    dst = (page * kv_heads + h) * kHeadDim;
  }
};
struct LogicalDst {  // reps in logical order; pairs (sequence, logical page), or nullptr: slot = b * pages + j
  const int* seq_pages;
  int pages;
  const int* table;
  int table_stride;
  const int* rep_table;
  int rep_stride;
  __device__ void at(std::int64_t slot, int kv_heads, int h, std::int64_t& page, std::int64_t& dst) const {
    int b, j;
    if (seq_pages) {
      b = seq_pages[2 * slot];
      j = seq_pages[2 * slot + 1];
    } else {
      b = static_cast<int>(slot / pages);
      j = static_cast<int>(slot % pages);
    }
    page = table[static_cast<std::int64_t>(b) * table_stride + j];
    const std::int64_t blk = rep_table[static_cast<std::int64_t>(b) * rep_stride + j / kRepBlockPages];
    dst = ((blk * kv_heads + h) * kRepBlockPages + j % kRepBlockPages) * kHeadDim;  // rep_offset_logical
  }
};

template <class Dst>
__global__ void __launch_bounds__(256) reps_kernel(const __nv_bfloat16* __restrict__ k, Dst where,
                                                   std::int64_t n, int kv_heads, __nv_bfloat16* __restrict__ reps) {
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * 8 + (threadIdx.x >> 5);
  if (item >= n * kv_heads) return;
  const int lane = threadIdx.x & 31;
  const std::int64_t slot = item / kv_heads;
  const int h = static_cast<int>(item % kv_heads);
  std::int64_t page, dst;
  where.at(slot, kv_heads, h, page, dst);
  const int half = lane >> 4, ch = lane & 15;
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
  for (int t = half; t < kPageTokens; t += 2) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(k + ((page * kPageTokens + t) * kv_heads + h) * kHeadDim) + ch);
    const __nv_bfloat162* b = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __bfloat1622float2(b[i]);
      acc[2 * i] += f.x;
      acc[2 * i + 1] += f.y;
    }
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], 16);
  if (half == 0) {
    uint4 o;
    uint32_t* ow = reinterpret_cast<uint32_t*>(&o);
#pragma unroll
    for (int i = 0; i < 4; ++i) ow[i] = detail::pack_bf16(acc[2 * i] * (1.0f / kPageTokens), acc[2 * i + 1] * (1.0f / kPageTokens));
    reinterpret_cast<uint4*>(reps + dst)[ch] = o;
  }
}

template <class Dst>
void launch(const PagedKV& kv, Dst where, std::int64_t n, double id_bytes, bf16_bits* reps, Stream s,
            Instrument* ins, const char* name) {
  if (n <= 0) return;
  const double items = static_cast<double>(n) * kv.kv_heads;
  ScopedLaunch sl(ins, Component::other, name, items * (kPageTokens + 1) * kHeadDim * 2.0 + id_bytes,
                  items * kPageTokens * kHeadDim, items * kPageTokens * kHeadDim, s);
  const std::int64_t blocks = (n * kv.kv_heads + 7) / 8;
  reps_kernel<<<static_cast<unsigned>(blocks), 256, 0, s>>>(reinterpret_cast<const __nv_bfloat16*>(kv.k), where, n,
                                                           kv.kv_heads, reinterpret_cast<__nv_bfloat16*>(reps));
  CISA_LAUNCH_CHECK();
}

}  // namespace

void rebuild_representatives(const PagedKV& kv, bf16_bits* reps, Stream s, Instrument* ins) {
  launch(kv, PhysicalDst{nullptr}, kv.num_pages, 0.0, reps, s, ins, "reps_rebuild");
}

void update_representatives(const PagedKV& kv, const int* page_ids, int n, bf16_bits* reps, Stream s,
                            Instrument* ins) {
  launch(kv, PhysicalDst{page_ids}, n, n * 4.0, reps, s, ins, "reps_update");
}

void rebuild_representatives(const PagedKV& kv, const BlockTable& table, const BlockTable& rep_table, int batch,
                             int pages, bf16_bits* reps, Stream s, Instrument* ins) {
  const std::int64_t n = static_cast<std::int64_t>(batch) * pages;
  launch(kv, LogicalDst{nullptr, pages, table.ids, table.stride, rep_table.ids, rep_table.stride}, n, n * 4.0, reps, s,
         ins, "reps_rebuild");
}

void update_representatives(const PagedKV& kv, const BlockTable& table, const BlockTable& rep_table,
                            const int* seq_pages, int n, bf16_bits* reps, Stream s, Instrument* ins) {
  // per item: its (sequence, page) pair, its block-table entry and its rep-table entry
  launch(kv, LogicalDst{seq_pages, 1, table.ids, table.stride, rep_table.ids, rep_table.stride}, n, n * 16.0, reps,
         s, ins, "reps_update");
}

}  // namespace cisa::kernels
