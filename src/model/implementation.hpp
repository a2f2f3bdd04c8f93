// Implementation profiles: how one kernel family (this project's kernels, cuDNN, FlashAttention
// 2/3/4, FlexAttention) uses a card. A hardware preset describes the card alone; a profile gives
// the efficiencies and structure of the kernels that run on it, each figure keyed by the card it
// was measured or published on. On another card a figure is transferred by a stated rule and
// labelled XFER (README "Implementation profiles"). Pure data and arithmetic: no YAML here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/figure.hpp"
#include "model/types.hpp"

namespace cisa {

struct Hardware;

// A figure per card, in the order the profile lists them.
struct PerCard {
  std::vector<std::pair<std::string, Figure>> cards;
  bool empty() const { return cards.empty(); }
};

// How a figure measured on card A moves to card B (README "Transfer rules").
enum class Transfer {
  same,      // absolute times per launch/step (floors, latencies), per-SM select rates
  mma,       // MMA rates: same fraction of the card's dense BF16 peak
  read_bw,   // read rates: same fraction of the card's streaming read bandwidth
  write_bw,  // write rates: same fraction of the card's streaming write bandwidth
  sm_time,   // SM time per unit of tensor work: scales with 1 / (dense BF16 peak per SM)
};

// Whether co-resident CTAs of one sequence find each other's randomly selected pages in L2:
// a property of the kernel's CTA order. unknown = the model's two bounds (lo: shared, hi: none).
enum class L2Sharing { none, shared, unknown };

// Where they share them: how co-resident CTAs of a sequence walk their sorted selected-page lists,
// per attention tile class (16 / 32 / 64 / 128 rows). staggered: each at its own point (the
// fixed-point share of shared_selected_in_l2); convoy: in step, so each wave reads its selections'
// union once (selected_union_floor); unknown: the point takes the middle of the two (the band
// spans them either way). A property of the kernel's CTA schedule (NOTES "Session 26").
enum class SelectedSchedule { staggered, convoy, unknown };
std::string to_string(SelectedSchedule s);

// How the prefill scoring kernels' representative reads and key writes make up their time: shared
// (both cross the HBM: their times add; calibrations from session 14 on) or overlapped (the slower
// stream sets the time: the form that session 10-13 calibrations were fitted with).
enum class ScoringStreams { shared, overlapped };
std::string to_string(ScoringStreams s);
std::string to_string(L2Sharing s);

struct ImplProfile {
  std::string name, display_name, description;
  std::string yaml;  // the profile text as loaded (provenance)
  bool prices_dense = false, prices_cisa = false;
  std::vector<std::string> archs;  // architectures its kernels run on ("hopper", "blackwell")
  std::string
      superseded_by;  // archived version (re-scores old measurements): never "best" or "auto"

  // Attention: work items pack G*r rows (GQA heads x positions) into tiles of tile_rows_min..max
  // rows (powers of two); gqa_packing = false runs one work item per query head instead.
  int tile_rows_min = 128, tile_rows_max = 128;
  bool gqa_packing = true;
  PerCard mma_tflops;     // attention MMA rate on issued FLOPs, TF/s
  PerCard read_bw_tbs;    // dense attention: streaming read rate of the history, TB/s
  PerCard gather_bw_tbs;  // CISA attention: read rate of the selected pages (16-token page gather),
                          // TB/s
  bool page_visits = false;      // a per-(work item, page) SM cost is modelled
  PerCard page_visit_ns[4];      // tiles of 16 / 32 / 64 / 128 rows
  PerCard page_visit_decode_ns;  // its decode kernel, when that is another kernel (optional: else
                                 // by tile)
  PerCard attention_floor_us;
  // The decode step's CISA attention, fitted on decode steps (floor per launch and gather rate);
  // absent: floor_us and gather_bw_tbs (XFER).
  PerCard attention_decode_floor_us, attention_decode_gather_bw_tbs;
  // The same for decode steps of 32-row (and wider) tiles, the 17+ q heads a KV head kernels;
  // absent: the decode figures above (XFER).
  PerCard attention_decode_m32_floor_us, attention_decode_m32_gather_bw_tbs;
  L2Sharing l2_sharing = L2Sharing::unknown;
  std::string l2_sharing_source;
  // Per tile class (16 / 32 / 64 / 128 rows), where l2_sharing is shared or unknown; a profile
  // that prices CISA with shared pages must give it (attention.l2_sharing.schedule).
  SelectedSchedule selected_schedule[4] = {SelectedSchedule::staggered, SelectedSchedule::staggered,
                                           SelectedSchedule::staggered,
                                           SelectedSchedule::staggered};
  std::string selected_schedule_source;
  int split_min_tokens = 256;  // a split-KV piece streams at least this many tokens
  // CTAs of its prefill attention kernel resident per SM (attention.prefill_ctas_per_sm); the
  // page-visit figures are per-SM rates at that occupancy (model/roofline.hpp visit_rounds).
  int prefill_ctas_per_sm = 1;
  std::string prefill_ctas_per_sm_source;
  SplitKv split_kv =
      SplitKv::always;  // which phases split the KV length, and how (model/traffic.hpp)
  bool decode_visits_context =
      false;  // decode walks the whole block-mask row (every page of the context)
  std::string decode_visits_source;
  // The dense path's query rows: false cuts whole positions (all r heads of each) into a tile, as
  // this project's kernels plan them; true packs a KV group's r x P rows across positions (the
  // GQA-folded query of cuDNN and FlashAttention), ceil(r P / M) tiles.
  bool dense_rows_packed = false;
  std::string dense_rows_source;
  // Decode (one position per sequence) packs at most decode_tile_rows query heads per work item
  // (0: tile_rows_max); a KV group of more heads runs ceil(r / decode_tile_rows) work items, each
  // streaming the group's history. decode_tile_sharing: whether those items' re-reads hit L2.
  int decode_tile_rows = 0;
  L2Sharing decode_tile_sharing = L2Sharing::shared;
  std::string decode_tile_source;
  std::string split_kv_source;

  // Selection path (scoring, top-k, setup). selection_from names the profile whose selection
  // kernels this one uses (its figures are then labelled XFER); empty = its own, below.
  std::string selection_from;
  int score_tile_rows = 128, score_pages_per_tile = 64, score_tiles_per_cta = 4;
  int topk_radix_passes = 4;
  int topk_cluster_above = 0;  // rows with more eligible keys run on a 2-CTA cluster (0: never)
  int topk_few_rows_slice =
      0;  // few rows: ceil(N_e / this) CTAs per row when rows x CTAs <= SMs (0: never)
  int topk_ctas_per_sm = 1;    // top-k CTAs resident per SM
  int setup_inline_bytes = 0;  // a descriptor copy of at most this many bytes takes the card's
                               // small-copy latency (0: none)
  double score_bytes = 4;      // bytes per score written by scoring and read by top-k
  PerCard scoring_read_bw_tbs, scoring_write_bw_tbs, scoring_floor_us;
  PerCard scoring_step_us;  // one dependent load step of a scoring CTA; absent: no such term
                            // (structure)
  PerCard topk_keys_per_ns_per_sm, topk_l2_keys_per_ns_per_sm, topk_ids_per_ns_per_sm,
      topk_floor_us;
  // The output pass per CTA (a row's whole list per wave, NOTES "Session 25: top-k"): a card that
  // measured it is priced by it, one that measured topk_ids_per_ns_per_sm (the per-SM form) by that,
  // one that measured neither by the per-CTA figure transferred when there is one
  PerCard topk_ids_per_ns_per_cta;
  PerCard topk_cta_us;  // fixed time per wave of top-k CTAs; a profile without it has no such term
                        // (structure)
  PerCard topk_cluster_us;  // per wave and other CTA of a row's cluster (histogram merge); absent:
                            // no such term
  // The decode step's top-k (after the GEMV scoring, scores in L2, a CTA per SM): its own fixed
  // time (launch and first wave), merge time per other CTA of a row, key rate; absent: the terms
  // above.
  PerCard topk_decode_floor_us, topk_decode_cluster_us, topk_decode_keys_per_ns_per_sm;
  PerCard setup_latency_us, setup_bw_gbs;  // the step's descriptor upload, inside the step
  // The index projection (a cuBLAS GEMM, calibrate's own grid of shapes): floor + max(bytes /
  // read rate, FLOPs / MMA rate). Absent (all three needed): other_floor_us as its floor and the
  // card's streaming read and GEMM rates (XFER).
  PerCard projection_floor_us, projection_read_bw_tbs, projection_mma_tflops;
  // The decode step's projection (skinny GEMMs, one column per sequence), fitted on calibrate's
  // decode grid as floor + bytes / read rate: both or neither (the loaders refuse one alone);
  // absent: the projection's floor and read rate (XFER).
  PerCard projection_decode_floor_us, projection_decode_read_bw_tbs;
  PerCard other_floor_us;       // per launch of the index projection (the form before session 12)
  PerCard rep_update_floor_us;  // per launch of the representative update; absent: the
                                // projection's floor (XFER)
  // The decode step's scoring kernel (one GEMV launch): its own fixed cost and read rate; absent:
  // scoring_floor_us and scoring_read_bw_tbs (XFER).
  PerCard scoring_decode_floor_us, scoring_decode_read_bw_tbs;
  // The prefill scoring kernels (index queries summed, then the tile GEMM): their own fixed cost,
  // read and write rates (reads of representatives and writes of keys: see ScoringStreams) and
  // the time per index query one thread adds to a selection's sum; absent: the scoring_* figures
  // above, reads and writes added (the structure before session 10).
  PerCard scoring_prefill_floor_us, scoring_prefill_read_bw_tbs, scoring_prefill_write_bw_tbs,
      scoring_prefill_query_us, scoring_prefill_mma_tflops;
  // The form those figures were fitted with (the loaders require it beside them).
  std::optional<ScoringStreams> scoring_prefill_streams;
};

// A profile's figure resolved for one card, with how it got there.
struct UsedFigure {
  std::string field;
  Figure figure;
};

// Every number the roofline takes from a profile, for one card (absolute units).
struct ResolvedImpl {
  std::string name;
  bool prices_dense = false, prices_cisa = false;
  bool known_on_card = false;  // some attention figure is MEAS or PUB for this very card
  bool runs_on_card = false;   // the card's architecture is one of the profile's
  int tile_rows_min = 128, tile_rows_max = 128;
  bool gqa_packing = true;
  L2Sharing l2_sharing = L2Sharing::unknown;
  SelectedSchedule selected_schedule[4] = {SelectedSchedule::staggered, SelectedSchedule::staggered,
                                           SelectedSchedule::staggered,
                                           SelectedSchedule::staggered};
  int split_min_tokens = 256;
  int prefill_ctas_per_sm = 1;
  SplitKv split_kv = SplitKv::always;
  bool decode_visits_context = false;
  bool dense_rows_packed = false;
  int decode_tile_rows = 0;
  L2Sharing decode_tile_sharing = L2Sharing::shared;
  Figure mma_tflops, read_bw_tbs, gather_bw_tbs, attention_floor_us;
  bool attention_decode_term = false;  // the profile has the decode attention's own figures
  Figure attention_decode_floor_us, attention_decode_gather_bw_tbs;
  // decode with 32-row or wider tiles: the profile's own figures, else the ones above (XFER)
  Figure attention_decode_m32_floor_us, attention_decode_m32_gather_bw_tbs;
  bool page_visits = false;
  Figure page_visit_ns[4];
  bool page_visit_decode = false;  // the profile has a decode-kernel figure
  Figure page_visit_decode_ns;
  bool has_selection = false;
  std::string selection_impl;  // profile whose selection kernels price scoring / top-k / setup
  int score_tile_rows = 128, score_pages_per_tile = 64, score_tiles_per_cta = 4,
      topk_radix_passes = 4;
  int topk_cluster_above = 0;
  int topk_few_rows_slice = 0;
  int topk_ctas_per_sm = 1;
  int setup_inline_bytes = 0;
  double score_bytes = 4;
  Figure scoring_read_bw_tbs, scoring_write_bw_tbs, scoring_floor_us, scoring_step_us;
  bool scoring_step_term = false;  // the profile models the chain of load steps of a scoring CTA
  Figure topk_keys_per_ns_per_sm, topk_l2_keys_per_ns_per_sm, topk_ids_per_ns_per_sm, topk_floor_us;
  bool topk_ids_per_cta_term = false;  // the per-CTA output pass prices this card (its own figure,
                                       // or transferred where the card measured neither form)
  Figure topk_ids_per_ns_per_cta;
  bool topk_cta_term = false;  // the profile models a fixed time per wave of top-k CTAs
  Figure topk_cta_us;
  bool topk_cluster_term = false;  // the profile models the merge between a row's CTAs
  Figure topk_cluster_us;
  bool topk_decode_term = false;  // the profile has its own figures for the decode step's top-k
  bool topk_decode_cluster_term = false;  // ... and a merge term among them
  Figure topk_decode_floor_us, topk_decode_cluster_us, topk_decode_keys_per_ns_per_sm;
  Figure setup_latency_us, setup_bw_gbs;
  bool projection_term = false;  // the profile has the index projection's own rates
  Figure projection_floor_us, projection_read_bw_tbs, projection_mma_tflops;
  bool projection_decode_term = false;  // ... and the decode step's own floor and read rate
  Figure projection_decode_floor_us, projection_decode_read_bw_tbs;  // else the above (XFER)
  bool setup_bw_term =
      false;  // the profile has its own copy bandwidth (else the card's h2d_bw_gbs, XFER)
  bool rep_update_term = false;  // the profile has its own fixed cost for the representative update
  Figure rep_update_floor_us;
  bool scoring_decode_term =
      false;  // the profile has its own figures for the decode scoring kernel
  Figure scoring_decode_floor_us, scoring_decode_read_bw_tbs;
  bool scoring_prefill_term = false;  // the profile has the prefill scoring kernels' own figures
  bool scoring_prefill_query_term = false;  // ... and a time per summed index query
  bool scoring_prefill_mma_term = false;    // ... and an MMA rate on its issued FLOPs
  Figure scoring_prefill_floor_us, scoring_prefill_read_bw_tbs, scoring_prefill_write_bw_tbs,
      scoring_prefill_query_us, scoring_prefill_mma_tflops;
  ScoringStreams scoring_prefill_streams = ScoringStreams::shared;
  std::vector<UsedFigure> used;  // provenance, in resolution order
};

// Cards by preset name (the card a figure was measured on must be known to transfer it).
using CardCatalog = std::map<std::string, Hardware>;
using ImplCatalog = std::map<std::string, ImplProfile>;

// Resolves `impl` for `card`. Throws std::invalid_argument naming the profile and field when a
// needed figure is given for no card, or a transfer source card is unknown.
ResolvedImpl resolve_impl(const ImplProfile& impl, const Hardware& card, const CardCatalog& cards,
                          const ImplCatalog& impls);

// One figure of a profile on `card`: exact card match, else transferred from the first listed card
// of the same architecture, else from the first listed card.
Figure figure_on_card(const PerCard& pc, Transfer rule, const Hardware& card,
                      const CardCatalog& cards, const std::string& what);

}  // namespace cisa
