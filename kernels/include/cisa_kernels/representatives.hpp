// Representatives: rep[page][kvh][:] = mean of the page's 16 keys (fp32 accumulation, BF16 stored).
#pragma once
#include "cisa_kernels/instrument.hpp"
#include "cisa_kernels/paged_kv.hpp"

namespace cisa::kernels {

// Full rebuild over physical pages [0, kv.num_pages). reps: [num_pages][kv_heads][128] (device).
void rebuild_representatives(const PagedKV& kv, bf16_bits* reps, Stream s, Instrument* ins = nullptr);

// Incremental update when pages fill: page_ids (device) lists n physical pages to recompute.
void update_representatives(const PagedKV& kv, const int* page_ids, int n, bf16_bits* reps, Stream s,
                            Instrument* ins = nullptr);

// Logical order (paged_kv.hpp): reps [num_rep_blocks][kv_heads][64][128] through rep_table.
// Rebuild of logical pages [0, pages) of sequences [0, batch): the page of (b, j) is table[b][j],
// its representative goes to rep block rep_table[b][j / 64], row j % 64 (every entry read must be
// valid).
void rebuild_representatives(const PagedKV& kv, const BlockTable& table, const BlockTable& rep_table, int batch,
                             int pages, bf16_bits* reps, Stream s, Instrument* ins = nullptr);

// Incremental update: seq_pages (device) lists n pairs (sequence, logical page) to recompute.
void update_representatives(const PagedKV& kv, const BlockTable& table, const BlockTable& rep_table,
                            const int* seq_pages, int n, bf16_bits* reps, Stream s, Instrument* ins = nullptr);

}  // namespace cisa::kernels
