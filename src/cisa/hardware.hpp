// A GPU: datasheet figures ("speed of light") and calibration (measured on the card, or carried
// over from another card and labelled so). Every number keeps its source.
#pragma once

#include <cmath>
#include <string>

namespace cisa {

struct Figure {
  double value = 0.0;
  std::string source;  // e.g. "DS: NVIDIA H200 datasheet", "MEAS: h200-facts.md 2026-11-29"
  bool measured() const { return source.rfind("MEAS", 0) == 0; }
};

inline const Figure kNotMeasured{NAN, "not measured"};

struct Calibration {
  std::string basis;             // "measured on <card>" or "transferred from <card>: ..."
  Figure read_bw_tbs;            // streaming read bandwidth reached by a well-built kernel
  Figure copy_bw_tbs;            // read + write counted
  Figure gemm_bf16_tflops;       // large BF16 GEMM (scoring, projections)
  Figure attention_bf16_tflops;  // this project's attention kernels (used for CISA and dense)
  Figure
      peer_attention_bf16_tflops;  // best library kernel on the card (cuDNN SDPA): the dense peer
  Figure launch_overhead_us;       // per kernel launch in a back-to-back stream
  Figure topk_elem_passes_per_ns_per_sm;  // radix-select work rate of one SM
  Figure scoring_bw_tbs = kNotMeasured;   // legacy single achieved bandwidth of scoring (optional)
  Figure l2_reuse;  // share of same-page re-reads by co-resident CTAs hit in L2
  // Optional structure measured by `calibrate` (absent: the older single-number behaviour).
  Figure write_bw_tbs = kNotMeasured;         // streaming 16-byte stores
  Figure scoring_read_bw_tbs = kNotMeasured;  // scoring kernel class: representatives in ...
  Figure scoring_write_bw_tbs =
      kNotMeasured;  // ... fp32 scores out (two reference shapes solve for both)
  Figure topk_l2_elem_passes_per_ns_per_sm =
      kNotMeasured;  // top-k whose scores are still in L2 (small batches)
  Figure topk_out_ids_per_ns_per_sm =
      kNotMeasured;  // top-k output pass: K page IDs translated + written per row
  Figure kernel_floor_us =
      kNotMeasured;  // one isolated kernel between two CUDA events (empty work)
  Figure attention_floor_us =
      kNotMeasured;  // fixed cost per launch of each kernel class (tiny shape)
  Figure scoring_floor_us = kNotMeasured;  // scoring: fixed cost less its CTAs' load steps ...
  Figure scoring_tile_us = kNotMeasured;   // ... each step (one tile of representatives)
  Figure topk_floor_us = kNotMeasured;
  Figure h2d_latency_us = kNotMeasured;  // pinned host-to-device copy: fixed cost ...
  Figure h2d_bw_gbs = kNotMeasured;      // ... and bandwidth (setup uploads the step's descriptors)
  // Attention SM time per (work item, page) visit with the pages in L2, per tile class (16, 32,
  // 64, 128 rows): MMA issue, L2 traffic and per-page overhead of the kernel together.
  Figure attention_page_ns[4] = {kNotMeasured, kNotMeasured, kNotMeasured, kNotMeasured};
};

struct Hardware {
  std::string name;          // preset key, e.g. "h200_sxm"
  std::string display_name;  // "NVIDIA H200 SXM"
  Figure hbm_gb;             // capacity, GB (1e9)
  Figure hbm_bw_tbs;         // datasheet bandwidth
  Figure bf16_tflops;        // dense (no sparsity)
  Figure fp8_tflops;
  Figure sms;
  Figure l2_mb;
  Figure smem_per_sm_kb;
  Figure nvlink_gbs;              // per GPU, bidirectional
  int attention_tile_rows = 64;   // MMA M tile of the attention kernel (one Hopper warpgroup)
  int score_tile_rows = 64;       // index queries stacked per scoring tile
  int score_pages_per_tile = 64;  // the scoring kernel's representative tile ...
  int score_tiles_per_cta = 4;    // ... and tiles one CTA walks
  int topk_radix_passes = 4;      // 8-bit digits over fp32 keys
  bool has_calibration = false;
  Calibration cal;
  std::string yaml;  // the preset text as loaded (provenance)
};

enum class Basis { calibrated, speed_of_light };
std::string to_string(Basis b);
Basis parse_basis(const std::string& s);

// The numbers the roofline uses, resolved for a basis. speed_of_light: datasheet peaks,
// zero launch overhead, ideal top-k rate from shared-memory bandwidth, perfect L2 reuse.
struct Rates {
  Basis basis;
  double read_bw_Bps;
  double gemm_flops;
  double attention_flops;
  double peer_attention_flops;  // dense attention with the best library kernel
  double write_bw_Bps;          // streaming stores
  double scoring_read_bw_Bps;   // scoring: representatives in
  double scoring_write_bw_Bps;  //          fp32 scores out
  double launch_s;
  // Fixed cost per launch as a CUDA-event-timed component sees it (launch, ramp, tail).
  double attention_floor_s, scoring_floor_s, topk_floor_s, other_floor_s;
  double h2d_latency_s, h2d_Bps;  // setup: the step's descriptors are uploaded from pinned memory
  double topk_l2_elem_passes_per_s_per_sm;  // rows whose scores the scoring kernel left in L2
  double attention_page_s[4];        // SM-seconds per page visit for 16/32/64/128-row tiles (0: not
                                     // modelled)
  double topk_out_ids_per_s_per_sm;  // INFINITY: no per-output term
  double scoring_tile_s;             // one scoring CTA load step (0: no fill/drain term)
  double l2_bytes;
  double topk_elem_passes_per_s_per_sm;
  double l2_reuse;
  int sms;
  // Share of SMs whose in-flight loads saturate HBM. EST: BW x latency = 4.5 TB/s x ~600 ns
  // = 2.7 MB in flight; a 3-stage 16 KB cp.async pipeline per SM (>= 40 KB) needs ~half the SMs.
  double bw_saturation_sm_fraction = 0.5;
  std::string source;  // one line: where the numbers came from
};
Rates resolve_rates(const Hardware& hw, Basis basis);

}  // namespace cisa
