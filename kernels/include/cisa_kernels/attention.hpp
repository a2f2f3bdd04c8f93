// Paged attention, one kernel family: each work item is a block of query rows (positions x heads of
// one KV group, row = position * r + head, at most 128 rows) that reads K/V in place through a page
// list. With the sequence's full block table it is the dense baseline; with a row of the sparse
// block table (top-K + window + tail) it is CISA. The pages from index `mask_from` on are causal
// (logically consecutive from token `mask_tok0`); earlier ones are fully visible.
// Online softmax (exp2), fp32 accumulation; BF16 mma.sync (16/32-row works), wgmma (64 rows), or a
// warp-specialised wgmma kernel with TMA page loads (128 rows, 128-token KV tiles; see
// src/attention.cu); split-KV with an fp32 partial output + log-sum-exp and a combine kernel when
// there are few work items, or for the works past the last whole wave of a many-work grid.
#pragma once
#include <cstdint>
#include <vector>

#include "cisa_kernels/instrument.hpp"
#include "cisa_kernels/paged_kv.hpp"

namespace cisa::kernels {

inline constexpr int kMaxAttnRows = 128;

struct AttnWork {
  int q_tok0 = 0;      // first token row in Q/O [T][H_q][128]
  int n_pos = 1;       // positions (rows = n_pos * r <= 128)
  int kv_head = 0;
  int q_pos0 = 0;      // logical position of the first query (keys 0..q_pos are visible)
  int list_src = 0;    // 0: block table row `list_row`; 1: sparse table row `list_row`
  int list_row = 0;
  int n_pages = 0;     // entries of the list read
  int mask_from = 0;   // list index where causal masking starts
  int mask_tok0 = 0;   // logical token of the first key of list[mask_from]
  // The last n_early entries of the list, [n_pages - n_early, n_pages), equal block-table row
  // early_row from entry early_col on (CISA: the window and tail pages that the top-k appends to
  // its selection). With AttnArgs::early they are read from the block table, before the previous
  // kernel (the top-k) has finished. 0: none.
  int n_early = 0;
  int early_row = 0;
  int early_col = 0;
};

struct AttnArgs {
  // device
  const bf16_bits* q = nullptr;  // [T][H_q][128]
  bf16_bits* o = nullptr;        // [T][H_q][128]
  PagedKV kv;
  BlockTable table;              // list_src 0
  BlockTable sparse;             // list_src 1
  const AttnWork* work = nullptr;
  int n_work = 0;
  int h_q = 0;                   // query heads (= kv_heads * r)
  int r = 1;
  float scale = 0.0f;            // softmax scale (0 -> 1/sqrt(128))
  float* scratch = nullptr;      // split-KV partials; size from attention_scratch_floats()
  std::int64_t scratch_floats = 0;
  int num_splits = 0;            // 0: choose automatically
  int n_full = -1;               // with num_splits > 1: -1 automatic; >= 0 forces a tail split
                                 // (works [0, n_full) whole, the rest num_splits ways; 0: all split)
  // Early part, taken where attention_early() says so (split launches of the 16/32-row kernels
  // whose CTAs are all resident at once: decode): each split reads its share of every work's early
  // entries (AttnWork::n_early) first, through the block table, and only then waits for the
  // previous kernel (programmatic dependent launch) before its share of the other entries. The
  // caller promises that Q, the block table and the K/V pages of the early entries are not written
  // by the kernel launched just before (CisaStep: the top-k, which it then lets start its
  // dependents at its own start: TopkArgs::trigger_dependents).
  bool early = false;
  // host copy
  const std::vector<AttnWork>* work_host = nullptr;
};

// Splits the launch would use and the fp32 scratch it needs.
int attention_num_splits(const AttnArgs& a, int num_sms);
// Whether paged_attention(a) takes the early part (a.early and a launch that allows it).
bool attention_early(const AttnArgs& a);
std::int64_t attention_scratch_floats(int n_work, int num_splits, int rows_per_cta);
int attention_rows_per_cta(const std::vector<AttnWork>& work, int r);
// Split-KV pieces for n_work (>= capacity / 2) equal works of `tiles` 64-token tiles on `capacity`
// CTA slots: 1, or the split that fills the last wave when that saves > 1 % (pure host logic).
int attention_wave_splits(int n_work, int capacity, int tiles);
// The full choice: `splits` ways for every work (n_full = 0), or, a tail split (n_full > 0), works
// [0, n_full) whole (whole waves) and the rest `splits` ways in the slots left after them.
struct WaveSplit {
  int splits = 1, n_full = 0;
};
WaveSplit attention_wave_plan(int n_work, int capacity, int tiles);

void paged_attention(const AttnArgs& a, Stream s, Instrument* ins = nullptr);

// Progress of the first CTAs (linear block id, at most 16,384) of the last paged_attention launch:
// %globaltimer (ns) at the CTA's start, when it reached tiles ntiles/4, ntiles/2, 3 ntiles/4 (0
// when it has fewer than 4 tiles), and before its epilogue; its SM, tile count and work index.
// Whether co-resident CTAs of a stream walk their sorted page lists in step (NOTES session 22).
// Synchronises.
struct AttnCtaTime {
  std::uint64_t ns[5] = {0, 0, 0, 0, 0};  // start, 1/4, 1/2, 3/4, end
  int sm = 0, tiles = 0, work = 0;
};
std::vector<AttnCtaTime> attention_cta_times(int n_ctas);
// Zeroes the record, so that after the next launches only their CTAs have a start time.
void attention_cta_times_reset();

// Expected HBM bytes and FLOPs of a work list (the time view: each work reads its pages once).
struct AttnCost {
  double bytes = 0, flops_useful = 0, flops_issued = 0;
  double kv_bytes = 0;
};
AttnCost attention_cost(const std::vector<AttnWork>& work, int r, int kv_heads, int rows_per_cta,
                        int num_splits);

}  // namespace cisa::kernels
