// A GPU: datasheet figures ("speed of light") and the card's own microbenchmarks (read, write and
// copy bandwidth, GEMM rate, launch gap, kernel floor, host-to-device copy), measured by
// `cisa-sim calibrate` or transferred from a measured card by fraction of the datasheet. How a
// kernel family uses the card is an implementation profile (implementation.hpp), not part of it.
#pragma once

#include <string>

#include "model/figure.hpp"
#include "model/implementation.hpp"
#include "model/traffic.hpp"

namespace cisa {

// Microbenchmarks of the card itself (no kernel of this project involved).
struct CardBench {
  std::string basis;          // "measured on <card> by ..." or "transferred from <card>: ..."
  Figure read_bw_tbs;         // streaming 16-byte loads
  Figure write_bw_tbs;        // streaming 16-byte stores
  Figure copy_bw_tbs;         // device-to-device copy, read + write counted
  Figure gemm_bf16_tflops;    // large cuBLAS BF16 GEMM (index projection, planner layers)
  Figure launch_overhead_us;  // per kernel in a back-to-back stream
  Figure kernel_floor_us;     // one isolated empty kernel between two CUDA events
  Figure h2d_bw_gbs;          // isolated pinned host-to-device copy: bandwidth ...
  Figure h2d_latency_us;      // ... and latency (small copy on an idle GPU)
};

struct Hardware {
  std::string name;          // preset key, e.g. "h200_sxm"
  std::string display_name;  // "NVIDIA H200 SXM"
  std::string arch;          // "hopper" | "blackwell": transfers prefer a card of the same one
  Figure hbm_gb;             // capacity, GB (1e9)
  Figure hbm_bw_tbs;         // datasheet bandwidth
  Figure bf16_tflops;        // dense (no sparsity)
  Figure fp8_tflops;
  Figure sms;
  Figure l2_mb;
  Figure smem_per_sm_kb;
  Figure nvlink_gbs;  // per GPU, bidirectional
  bool has_card = false;
  CardBench card;
  std::string card_transfer_from;  // preset whose measured bench this one's was transferred from
  std::string yaml;                // the preset text as loaded (provenance)
};

// Whether the CUDA device `device_name` is the card `hw` describes: the display name's model word
// ("H200" of "NVIDIA H200 SXM") appears in it ("NVIDIA H100 80GB HBM3" is an h100_sxm).
std::string card_model_word(const std::string& display_name);
bool is_card(const Hardware& hw, const std::string& device_name);

// The card bench of `to`, transferred from the measured bench of `from`: bandwidths and the GEMM
// rate as the same fraction of the datasheet figure, times (launch, floor, host copy) unchanged.
CardBench transfer_card(const Hardware& from, const Hardware& to);

enum class Basis { calibrated, speed_of_light };
std::string to_string(Basis b);
Basis parse_basis(const std::string& s);

// The fastest (lo), point and slowest (hi) ends of every figure's uncertainty band.
enum class Bound { lo, point, hi };

// The numbers the roofline uses for one implementation on one card, resolved for a basis and a
// bound. speed_of_light: datasheet peaks, zero floors, ideal top-k rate from shared-memory
// bandwidth, the implementation's structure (tiles, L2 sharing) kept.
struct Rates {
  Basis basis = Basis::calibrated;
  double read_bw_Bps = 0;   // the card's streaming read (other kernels, planner layers)
  double write_bw_Bps = 0;  // the card's streaming write
  double gemm_flops = 0;
  double attention_flops = 0;       // the implementation's attention MMA rate
  double attention_read_Bps = 0;    // its dense attention's streaming read rate
  double attention_gather_Bps = 0;  // its CISA attention's selected-page read rate
  // The decode step's CISA attention: its own floor per launch and gather rate (attention_decode_own)
  bool attention_decode_own = false;
  double attention_decode_floor_s = 0, attention_decode_gather_Bps = 0;
  // ... and of its 32-row (or wider) tiles (equal to the above when the profile has no such figure)
  double attention_decode_m32_floor_s = 0, attention_decode_m32_gather_Bps = 0;
  double scoring_read_bw_Bps = 0, scoring_write_bw_Bps = 0;
  // The decode step's scoring kernel (a GEMV): its read rate and fixed cost.
  double scoring_decode_read_bw_Bps = 0, scoring_decode_floor_s = 0;
  // The prefill scoring kernels' own figures (scoring_prefill_own); reads and writes add
  // (scoring_prefill_shared) or the slower sets the time.
  bool scoring_prefill_own = false, scoring_prefill_shared = true;
  double scoring_prefill_read_bw_Bps = 0, scoring_prefill_write_bw_Bps = 0, scoring_prefill_floor_s = 0,
         scoring_prefill_query_s = 0;
  double scoring_prefill_flops = 0;  // MMA rate on the prefill kernel's issued FLOPs (0: the card's GEMM rate)
  double launch_s = 0;
  // Fixed cost per launch as a CUDA-event-timed component sees it (launch, ramp, tail).
  double attention_floor_s = 0, scoring_floor_s = 0, topk_floor_s = 0;
  // The index projection (other): floor + max(bytes / read rate, FLOPs / MMA rate).
  double projection_floor_s = 0, projection_read_Bps = 0, projection_flops = 0;
  // The decode step's projection (skinny GEMMs): its own floor and read rate when
  // projection_decode_own, else the two above; FLOPs at projection_flops either way.
  bool projection_decode_own = false;
  double projection_decode_floor_s = 0, projection_decode_read_Bps = 0;
  double rep_update_floor_s =
      0;  // per launch of the representative update (other: the index projection)
  double setup_latency_s = 0, setup_Bps = 0;  // setup: the step's descriptors uploaded in the step
  // A copy of at most setup_inline_bytes (0: none) takes the card's small-copy latency instead.
  double setup_inline_bytes = 0, setup_small_latency_s = 0;
  double topk_keys_per_s_per_sm = 0;     // radix-select key passes of one SM, scores from DRAM
  double topk_l2_keys_per_s_per_sm = 0;  // the same with the scores still in L2
  double topk_ids_per_s_per_sm = 0;      // output pass: page IDs translated + written
  double topk_ids_per_s_per_cta = 0;     // the same per CTA, a row's whole list (0: the per-SM form)
  double topk_cta_s =
      0;  // fixed SM time per wave of top-k CTAs: scans, barriers (0: the profile has no such term)
  double topk_cluster_s =
      0;  // per wave and other CTA of a row's cluster: the histogram merge (0: no such term)
  // The decode step's top-k: fixed time (launch + first wave), merge per other CTA, key rate
  // (scores in L2); without figures of its own (topk_decode_own false) it is priced by the terms
  // above.
  bool topk_decode_own = false;
  double topk_decode_floor_s = 0, topk_decode_cluster_s = 0, topk_decode_keys_per_s_per_sm = 0;
  double attention_page_s[4] = {0, 0, 0, 0};  // SM-s per page visit, 16/32/64/128-row tiles
  double attention_page_decode_s = -1;  // the implementation's decode kernel (< 0: by tile class)
  // Prefill attention CTAs resident per SM, and a lone CTA's time per visit in units of the per-SM
  // visit figure (1..ctas_per_sm: lo 1, hi ctas_per_sm, point the middle; roofline visit_rounds).
  int attention_ctas_per_sm = 1;
  double attention_lone_cta = 1.0;
  double scoring_step_s = 0;            // one dependent load step of a scoring CTA
  double l2_capacity_bytes = 0;         // L2 size
  double l2_reuse =
      1.0;  // h: immediate re-reads of the same pages by co-resident CTAs hit L2 (EST)
  int sms = 0;
  // Share of SMs whose in-flight loads saturate HBM. EST: BW x latency = 4.5 TB/s x ~600 ns
  // = 2.7 MB in flight; a 3-stage 16 KB cp.async pipeline per SM (>= 40 KB) needs ~half the SMs.
  double bw_saturation_sm_fraction = 0.5;
  std::string source;  // one line: where the numbers came from
};

// Rates of `impl` on `hw`. calibrated needs the card's bench (measured or transferred).
Rates make_rates(const Hardware& hw, const ResolvedImpl& impl, Basis basis,
                 Bound bound = Bound::point);
// Card-only rates (the planner's non-attention layers): the card bench, no implementation.
Rates card_rates(const Hardware& hw, Basis basis, Bound bound = Bound::point);

// The kernel structure a profile declares (tile rows, GQA packing, split-KV policy, the selection
// kernels' layout) as the model's KernelShape knobs; the card's (SMs, L2) are the caller's. One
// function for a loaded profile (ImplProfile, as `calibrate` uses it) and a resolved one.
template <class Profile>
KernelShape structure_of(const Profile& p) {
  KernelShape s;
  s.attention_tile_rows = p.tile_rows_max;
  s.attention_min_tile_rows = p.tile_rows_min;
  s.gqa_packing = p.gqa_packing;
  s.score_tile_rows = p.score_tile_rows;
  s.score_pages_per_tile = p.score_pages_per_tile;
  s.score_tiles_per_cta = p.score_tiles_per_cta;
  s.topk_radix_passes = p.topk_radix_passes;
  s.score_bytes = p.score_bytes;
  s.topk_cluster_above = p.topk_cluster_above;
  s.topk_few_rows_slice = p.topk_few_rows_slice;
  s.topk_ctas_per_sm = p.topk_ctas_per_sm;
  s.split_min_tokens = p.split_min_tokens;
  s.split_kv = p.split_kv;
  s.decode_visits_context = p.decode_visits_context;
  s.dense_rows_packed = p.dense_rows_packed;
  s.decode_tile_rows = p.decode_tile_rows;
  return s;
}

// Kernel structure of `impl` on the card, for the traffic model. `bound` picks an unknown L2
// sharing's end (lo: shared, hi: none); an unknown sharing between a KV group's decode work items
// takes the middle of its band at the point (half their re-reads hit L2).
KernelShape kernel_shape(const ResolvedImpl& impl, const Rates& rates, Bound bound = Bound::point);

}  // namespace cisa
