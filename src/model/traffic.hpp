// The time view of traffic (method doc section 3-4): what real tiled kernels move for one
// forward of P positions per sequence, for the dense baseline and for CISA, per kernel class.
// Pure arithmetic: numbers in, numbers out. Counts are for one layer and the whole batch.
#pragma once

#include <cstdint>

#include "model/types.hpp"

namespace cisa {

// Kernel-level knobs of the model, resolved from the GPU preset and its calibration.
struct KernelShape {
  int attention_tile_rows = 128;     // most rows per attention work item (G*r pack into it)
  int attention_min_tile_rows = 16;  // smallest tile; the kernel picks the power of two >= rows
  int score_tile_rows = 64;       // selections stacked per scoring tile (reps read once per tile)
  int score_pages_per_tile = 64;  // representatives a scoring CTA loads per step ...
  int score_tiles_per_cta = 4;    // ... and the steps it takes one after another
  int topk_radix_passes = 4;
  int sms = 132;          // for split-KV sizing
  double l2_reuse = 1.0;  // h: share of re-reads of the same pages by co-resident CTAs hit in L2
  int split_min_tokens = 256;  // a split-KV piece streams at least this many tokens
  SplitKv split_kv = SplitKv::always;  // which phases split the KV length, and how many pieces
  bool decode_visits_context = false;  // a decode work item visits every page of its context, not only its selection
  bool dense_rows_packed =
      false;  // dense tiles pack a KV group's r x P rows across positions (GQA-folded query)
  double l2_capacity_bytes = 0;  // L2 size: window over which co-resident CTAs share pages
  bool share_selected = true;  // co-resident CTAs of a sequence find each other's random picks in L2
  // Weight of the staggered estimate of a sequence's selected reads, per tile class (16 / 32 / 64 /
  // 128 rows); the rest takes the convoy estimate, where co-resident CTAs walk their sorted page
  // lists in step (a fixed budget gives every selection the same work) and each wave reads its
  // selections' union once. 1: staggered; 0: convoy (the band's low end at every class); 0.5: the
  // middle of the two (SelectedSchedule::unknown).
  double selected_staggered[4] = {1, 1, 1, 1};
  bool gqa_packing = true;     // G*r rows per work item; false: one work item per query head
  double score_bytes = 4;      // bytes per score written by scoring, read by top-k
  int topk_cluster_above = 0;  // top-k rows with more eligible keys run on 2 CTAs (0: never)
  int topk_few_rows_slice = 0;  // few rows: ceil(N_e / this) CTAs per row when they fit one per SM (0: never)
  int topk_ctas_per_sm = 1;     // top-k CTAs resident per SM (a wave is this x SMs CTAs)
  int decode_tile_rows = 0;     // dense decode: most query heads per work item (0: attention_tile_rows)
  double decode_tile_reuse = 1.0;  // share of the extra decode work items' history re-reads hit in L2
};

// Tile rows the attention kernel uses for work items of `rows` rows: the smallest power of two
// >= rows between the minimum and the maximum tile (16/32-row tiles take the mma.sync path,
// 64/128-row tiles wgmma, in this project's kernels).
int attention_tile_for(int rows, const KernelShape& sh);

// Bytes of one descriptor as this project's kernels lay it out (kernels/include/cisa_kernels:
// ScoreRow, ScoreGroup, TopkRow, AttnWork); tests/unit/test_traffic.cpp checks them against sizeof.
inline constexpr double kScoreRowBytes = 20, kScoreGroupBytes = 20, kTopkRowBytes = 12,
                        kAttnWorkBytes = 48;

// Bytes of a step's descriptor blob as this project's kernels lay it out (setup's copy): sections
// of scoring rows, scoring groups, top-k rows and attention work items, each padded to 256 bytes.
double descriptor_blob_bytes(double selections, double score_groups, double work_items);

// One kernel class summed over the forward.
struct KernelCost {
  double dram_bytes = 0;        // predicted DRAM bytes (after the L2 model), read + written
  double dram_write_bytes = 0;  // the written part of dram_bytes (streams at the write bandwidth)
  double l2_bytes = 0;          // bytes requested from L2 by the kernel (before reuse)
  double flops_issued = 0;      // MMA FLOPs including padding of partly filled tiles
  double flops_useful = 0;
  double launches = 0;
  double ctas = 0;         // independent work units (after split-KV)
  // SM fill of a grid whose CTAs are not all alike (a tail of split works: grid_fill); 0: alike,
  // the roofline's ctas / (waves x SMs). Per forward: a sum of forwards keeps none.
  double wave_fill = 0;
  double page_visits = 0;  // (work item, page) pairs: a work item streams its page list once
  double serial_steps =
      0;              // dependent load steps of the longest CTA (scoring representative tiles)
  int tile_rows = 0;  // attention tile of the kernel (max over its work items)
  double summed_queries = 0;  // index queries one thread sums, one after another (prefill scoring: G)
  void add(const KernelCost& o);
};

// DRAM bytes by category (the HDF5 bytes_* columns), for one side (dense or CISA).
struct ByteCategories {
  double kv = 0;        // K and V pages
  double rep = 0;       // representatives read by scoring
  double meta = 0;      // block tables, scores, selected page IDs
  double qo = 0;        // Q read + O written
  double partials = 0;  // split-KV partial outputs and log-sum-exp, written + read
  double other = 0;     // index projection weights/activations, representative update
  double total() const { return kv + rep + meta + qo + partials + other; }
  void add(const ByteCategories& o);
};

struct ForwardCost {
  KernelCost attention_dense;  // attention + split-KV combine, dense baseline
  KernelCost attention_cisa;   // dense prefix + sparse groups + combine
  KernelCost scoring, topk, setup;
  // The `other` component: the index projection (and a design's extra per-forward work) in `other`,
  // the representative update of the chunks the forward completes in `rep_update` (its own kernel,
  // with its own fixed cost).
  KernelCost other, rep_update;
  ByteCategories bytes_dense, bytes_cisa;
  double l2_kv_dense = 0, l2_kv_cisa = 0, l2_rep = 0;  // requested (pre-L2) K/V and rep bytes
  double selections = 0;       // sparse selections (QShare groups past the dense point)
  double dense_positions = 0;  // positions on the dense path in the CISA run
  double sparse_positions = 0;
  double topk_rows = 0;      // = selections
  double eligible_chunks_sum = 0;  // N_e summed over selections (eligible_chunks_mean x selections)
  double splits_dense = 1, splits_cisa = 1;
  double setup_h2d_bytes = 0;  // step descriptors uploaded host -> device (setup)
  double cisa_dense_prefix_bytes = 0;  // DRAM bytes of the CISA attention's dense prefix (N_e <= K)
  bool cisa_decode_kernel = false;  // the CISA attention ran a decode step (one position per sequence)
  void add(const ForwardCost& o);
};

// Cost of one forward (each component by its own function in traffic.cpp): each of `batch` sequences processes positions [start, start+positions),
// position t attending to tokens 0..t. `qshare_g` is the effective G of the phase.
ForwardCost forward_cost(const Geometry& geo, const CisaConfig& cfg, int qshare_g,
                         std::int64_t start, std::int64_t positions, int batch,
                         const KernelShape& shape);
// Only the dense baseline's attention (attention_dense, bytes_dense, l2_kv_dense, splits_dense).
ForwardCost dense_forward_cost(const Geometry& geo, const CisaConfig& cfg, int qshare_g, std::int64_t start,
                               std::int64_t positions, int batch, const KernelShape& shape);
// The same into f's dense fields, the others untouched: for a ForwardCost that only ever holds a
// dense_forward_cost (no 0.8 KB ForwardCost built and copied a call).
void dense_forward_cost_into(ForwardCost& f, const Geometry& geo, const CisaConfig& cfg,
                             int qshare_g, std::int64_t start, std::int64_t positions, int batch,
                             const KernelShape& shape);

// sum_{i=0}^{n-1} floor((a*i + b) / m) for n >= 0, m >= 1, a, b >= 0 (exact, O(log)).
std::int64_t floor_sum(std::int64_t n, std::int64_t m, std::int64_t a, std::int64_t b);

}  // namespace cisa
