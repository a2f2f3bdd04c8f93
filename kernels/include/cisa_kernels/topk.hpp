// Top-k: per row choose the K highest of n_e fp32 scores (ties -> lower page index), output the chosen
// logical pages in ascending order translated to physical page IDs through the block table, followed
// by the window and tail pages (logical [n_e, list_end)) -> one row of the sparse block table.
// Input: fp32 scores, or 16-bit order-preserving score keys (what the scoring kernel writes; see
// scoring.hpp). Radix select over order-preserving uint32 keys by a cluster of 1-4 CTAs per row
// (digits 11 + 11 + 10 bits for fp32, 11 + 5 for 16-bit keys), one read of the scores.
#pragma once
#include <cstdint>
#include <vector>

#include "cisa_kernels/instrument.hpp"
#include "cisa_kernels/paged_kv.hpp"

namespace cisa::kernels {

struct TopkRow {
  int seq = 0;       // block-table row
  int n_e = 0;       // eligible pages (scores [0, n_e)); must be > K
  int list_end = 0;  // logical pages [n_e, list_end) are appended (window + tail)
};

struct TopkArgs {
  // device
  const float* scores = nullptr;            // [n_rows][score_stride], or
  const std::uint16_t* score_keys = nullptr;  // [n_rows][score_stride] 16-bit keys (exactly one is set)
  int score_stride = 0;
  const TopkRow* rows = nullptr;
  BlockTable table;
  int* out = nullptr;             // [n_rows][out_stride]: K selected + (list_end - n_e) appended
  int out_stride = 0;
  int k = 0;
  // let a programmatic dependent launch that follows (the CISA step's attention with an early
  // part) start at this kernel's start instead of its end
  bool trigger_dependents = false;
  // host copy
  const std::vector<TopkRow>* rows_host = nullptr;
};

// Launch shape of topk_select for n_rows rows of up to max_ne scores: CTAs per row (a thread-block
// cluster, 1-4), keys per CTA (16,384 or 32,768), clusters the device keeps resident at once. Rows
// few enough for one CTA per SM at 16,384 keys per CTA take that (e.g. 16 rows of 65,536: 4 CTAs
// each); more rows take 32,768 (2 CTAs for rows over 32,768). Threads per CTA: fp32 1,024, or 512
// at 32,768 keys per CTA when rows x CTAs > SMs (24 bits of each key in shared memory, two CTAs per
// SM; e.g. 256 rows of 65,536); 16-bit keys 512, or 1,024 at 32,768 keys per CTA while rows x CTAs
// <= SMs (e.g. 64 rows of 65,536).
struct TopkPlan {
  int cluster = 1, slice = 32768, resident_clusters = 0;
  int threads = 512;  // per CTA
};
TopkPlan topk_plan(int max_ne, int n_rows, bool keys16);

void topk_select(const TopkArgs& a, Stream s, Instrument* ins = nullptr);

// Benchmark breakdown of the last top-k launch: mean SM cycles of thread 0 of its first n_ctas CTAs
// (at most 128) in each phase: load + first histogram, first merge, second histogram, remaining
// merges, flags + scan, staging, output. (Pass 1 skipped: its phases read 0.)
std::vector<double> topk_phase_cycles(int n_ctas);
// Start and end of each of the last launch's first n_ctas CTAs (at most 1,024), in us after the
// earliest start (%globaltimer): [2 b] start, [2 b + 1] end of CTA b.
std::vector<double> topk_cta_times_us(int n_ctas);

}  // namespace cisa::kernels
