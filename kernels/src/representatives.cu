// Representatives: mean of each page's 16 keys, fp32 accumulation, BF16 out.
// One warp per (page, kv head): half-warps read alternate tokens with 16-byte loads (a 256-byte row),
// accumulate 8 channels each in fp32, then the two halves are combined with one shuffle.
#include "cisa_kernels/representatives.hpp"
#include "common.cuh"

namespace cisa::kernels {
namespace {

__global__ void __launch_bounds__(256) reps_kernel(const __nv_bfloat16* __restrict__ k, const int* __restrict__ ids,
                                                   std::int64_t n, int kv_heads, __nv_bfloat16* __restrict__ reps) {
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * 8 + (threadIdx.x >> 5);
  if (item >= n * kv_heads) return;
  const int lane = threadIdx.x & 31;
  const std::int64_t slot = item / kv_heads;
  const int h = static_cast<int>(item % kv_heads);
  const std::int64_t page = ids ? ids[slot] : slot;
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
    reinterpret_cast<uint4*>(reps + (page * kv_heads + h) * kHeadDim)[ch] = o;
  }
}

void launch(const PagedKV& kv, const int* ids, std::int64_t n, bf16_bits* reps, Stream s, Instrument* ins,
            const char* name) {
  if (n <= 0) return;
  const double items = static_cast<double>(n) * kv.kv_heads;
  ScopedLaunch sl(ins, Component::other, name, items * (kPageTokens + 1) * kHeadDim * 2.0 + (ids ? n * 4.0 : 0.0),
                  items * kPageTokens * kHeadDim, items * kPageTokens * kHeadDim, s);
  const std::int64_t blocks = (n * kv.kv_heads + 7) / 8;
  reps_kernel<<<static_cast<unsigned>(blocks), 256, 0, s>>>(reinterpret_cast<const __nv_bfloat16*>(kv.k), ids, n,
                                                           kv.kv_heads, reinterpret_cast<__nv_bfloat16*>(reps));
  CISA_LAUNCH_CHECK();
}

}  // namespace

void rebuild_representatives(const PagedKV& kv, bf16_bits* reps, Stream s, Instrument* ins) {
  launch(kv, nullptr, kv.num_pages, reps, s, ins, "reps_rebuild");
}

void update_representatives(const PagedKV& kv, const int* page_ids, int n, bf16_bits* reps, Stream s,
                            Instrument* ins) {
  launch(kv, page_ids, n, reps, s, ins, "reps_update");
}

}  // namespace cisa::kernels
