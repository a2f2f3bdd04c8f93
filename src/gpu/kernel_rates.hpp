// Achieved rates of this project's kernel classes at reference shapes, for `cisa-sim calibrate`:
// the model's efficiencies come from the kernels it is compared with, measured on the card.
#pragma once

#include <string>

#include "model/hardware.hpp"
#include "model/implementation.hpp"
#include "model/traffic.hpp"

namespace cisa::gpu {

struct KernelRates {
  double attention_tflops = 0;  // useful FLOPs / time, dense prefill with full 128-row tiles
  std::string attention_method;
  double attention_read_bw_tbs = 0;  // model DRAM bytes / time, dense decode (streaming)
  std::string attention_read_method;
  double attention_gather_bw_tbs =
      0;  // model DRAM bytes / time, CISA decode attention (page gather)
  std::string attention_gather_method;
  // The decode step's CISA attention over calibrate's decode steps: floor per launch + bytes / rate.
  double attention_decode_floor_us = 0, attention_decode_gather_bw_tbs = 0;
  std::string attention_decode_method;
  // The same form over decode steps of 32-row tiles (r = 32: the 17-32 q heads a KV head class).
  double attention_decode_m32_floor_us = 0, attention_decode_m32_gather_bw_tbs = 0;
  std::string attention_decode_m32_method;
  // Top-k per-SM key-pass rate (model: 4 passes per key, one CTA per row, waves of rows), in the
  // pipeline (scores written by the scoring kernel just before): rows whose scores come from DRAM
  // (prefill, many waves) and rows whose scores are still in L2 (decode, one wave).
  double topk_elem_passes_per_ns_per_sm = 0, topk_l2_elem_passes_per_ns_per_sm = 0;
  // The output pass, per CTA (a row's whole list per wave: TopkTerms::row_ids, the form installed
  // since session 25); the two per-SM forms' rates are fitted beside it for the method text only.
  double topk_out_ids_per_ns_per_cta = 0;
  double topk_cta_us = 0;  // fixed time per wave of top-k CTAs (0: the fit did not support it)
  double topk_cluster_us =
      0;  // per wave and other CTA of a row's cluster (0: the fit did not support it)
  std::string topk_method, topk_l2_method;
  // The decode step's top-k on its own grid (0: not solved; cluster 0: no merge term found)
  double topk_decode_floor_us = 0, topk_decode_cluster_us = 0, topk_decode_keys_per_ns_per_sm = 0;
  std::string topk_decode_method;
  // Scoring: read and write rates solved from two reference shapes (read-heavy decode,
  // write-heavy prefill) with the model's own byte split; 0 when the solve is not physical.
  double scoring_read_bw_tbs = 0, scoring_write_bw_tbs = 0;
  std::string scoring_method;
  // The decode step's scoring kernel: fixed cost and read rate from two decode steps (0: not
  // solved).
  double scoring_decode_floor_us = 0, scoring_decode_read_bw_tbs = 0;
  std::string scoring_decode_method;
  // The prefill scoring kernels on the top-k grid's steps: floor, time per summed index query,
  // read and write rates (overlapping streams; 0: not solved).
  double scoring_prefill_floor_us = 0, scoring_prefill_query_us = 0, scoring_prefill_read_bw_tbs = 0,
         scoring_prefill_write_bw_tbs = 0;
  double scoring_prefill_mma_tflops = 0;  // on issued FLOPs (0: no shape bound by it, no term)
  ScoringStreams scoring_prefill_streams = ScoringStreams::shared;  // the form of that fit
  std::string scoring_prefill_method;
  // Fixed cost per launch of each class: a one-selection step on a 2,048-token sequence.
  double attention_floor_us = 0, scoring_floor_us = 0, topk_floor_us = 0, setup_floor_us = 0;
  double scoring_tile_us = 0;  // one representative-tile load step of a scoring CTA (0: not solved)
  std::string setup_method;
  double other_floor_us = 0;  // fixed cost per launch of the index projection
  std::string other_method;
  double rep_update_floor_us = 0;  // fixed cost per launch of the representative update
  std::string rep_update_method;
  std::string floor_method;
  // Attention SM time per page visit with the pages in L2, for 16/32/64/128-row tiles.
  double attention_page_ns[4] = {0, 0, 0, 0};
  std::string attention_page_method;
};

// `shape`: the cisa_kernels profile's structure (tile rows, radix passes, scoring tiles, score
// bytes), for the model's byte and row counts of the reference shapes.
// `card`: the card's rates just probed (the `other` component's roofline).
KernelRates measure_kernel_rates(int sms, const KernelShape& shape, const Rates& card);

}  // namespace cisa::gpu
