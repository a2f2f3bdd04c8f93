// Paged KV cache layout (BF16, 16-token pages):
//   K, V      [num_pages][16][kv_heads][128]   (token-major inside a page; one head's row = 256 B)
//   reps      [num_pages][kv_heads][128]       (representative cache, BF16, mean of the page's keys)
//             or, in logical order (a rep table given): [num_rep_blocks][kv_heads][64][128], block
//             rep_table[b][j] holding logical pages [64 j, 64 j + 64) of sequence b (16 KB per head)
//   rep_table [batch][rep_stride]              (per-sequence rep table: logical block -> rep block)
//   table     [batch][table_stride]            (per-sequence block table: logical page -> physical page)
// Queries / outputs are token-major: Q, O [T][H_q][128] with T = sum of new positions per sequence,
// index queries IQ [T][kv_heads][128]. GQA: query head hq belongs to KV head hq / r.
// Pointers are device pointers when handed to the CUDA entry points, host pointers for references.
#pragma once
#include <cstdint>

#include "cisa_kernels/types.hpp"

namespace cisa::kernels {

struct PagedKV {
  const bf16_bits* k = nullptr;
  const bf16_bits* v = nullptr;
  std::int64_t num_pages = 0;
  int kv_heads = 1;
};

struct BlockTable {
  const int* ids = nullptr;  // [batch][stride]
  int stride = 0;            // entries per sequence row
};

// Representatives in logical order: each sequence's representatives stored contiguously in blocks of
// kRepBlockPages logical pages (one 16 KB block per KV head), so that scoring streams them instead
// of gathering 256-byte rows through the block table. A BlockTable with ids == nullptr: no rep
// table, the representatives are indexed by physical page (the first layout above).
inline constexpr int kRepBlockPages = 64;

// Element offset of (sequence's logical page j, kv head) in logical-order reps, rep block `block`.
inline std::int64_t rep_offset_logical(std::int64_t block, int kv_heads, int kvh, int j) {
  return ((block * kv_heads + kvh) * kRepBlockPages + (j % kRepBlockPages)) * static_cast<std::int64_t>(kHeadDim);
}

// Element offset of (page, token-in-page, kv head) in K or V.
inline std::int64_t kv_offset(std::int64_t page, int tok, int kv_heads, int kvh) {
  return ((page * kPageTokens + tok) * kv_heads + kvh) * static_cast<std::int64_t>(kHeadDim);
}

}  // namespace cisa::kernels
