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

}  // namespace cisa::kernels
