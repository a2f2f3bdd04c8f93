// Sparse-attention designs (issue 15): CISA, Quest, DSA, MSA, NSA and plain block top-k as one
// declarative record each, read by one traffic model. Pure: numbers in, numbers out (no YAML).
// The model is first-order and the same for every design: each plan (one selection) streams its
// selected K/V once (no L2 sharing between plans), scans its index once, writes its scores and
// IDs; the dense baseline packs M/r positions x r heads per work item and streams the history.
#pragma once

#include <cstdint>
#include <string>

#include "model/hardware.hpp"
#include "model/roofline.hpp"
#include "model/traffic.hpp"
#include "model/types.hpp"

namespace cisa::design {

enum class PlanScope { head, kv_group };  // one plan per query head, or one per KV group
enum class IndexerKind { representatives, index_keys, branch_scores };

PlanScope parse_plan_scope(const std::string& s);  // throws std::invalid_argument
IndexerKind parse_indexer_kind(const std::string& s);
std::string to_string(PlanScope s);
std::string to_string(IndexerKind k);

// One design. A value of 0 (or -1 for the window) means "take the scenario's setting".
struct Design {
  std::string name, source, summary;
  // Selection.
  int unit_tokens = 0;  // granularity: 1 = token, c = page, b = block (0: scenario c)
  PlanScope plan_scope = PlanScope::kv_group;
  int plan_positions = 0;          // consecutive positions sharing one plan (0: scenario G)
  std::int64_t budget_tokens = 0;  // selected tokens per plan, beyond the fixed parts (0: K c)
  // Fixed parts, always read.
  std::int64_t window_tokens = -1;  // recent tokens before the current unit (-1: scenario W c)
  std::int64_t sink_tokens = 0;     // first tokens of the sequence
  bool tail = true;                 // the current partial unit
  // Indexer: what is scored, and against what.
  IndexerKind indexer = IndexerKind::representatives;
  int index_vectors = 1;         // vectors per scored unit: 1 mean / key, 2 Quest min/max
  int index_dim = 0;             // elements per vector (0: head dim)
  double index_elem_bytes = 2;   // 2 BF16, 1 FP8
  double index_scale_bytes = 0;  // per vector (FP8 scale)
  int index_query_heads = 1;     // index queries dotted with each unit per plan position group
  int projection_dims = 0;       // index projection outputs per position (W_idx: hidden -> dims)
  // Extra branch: compressed attention over strided compressed K/V (NSA).
  int compressed_stride = 0;  // tokens per compressed K/V (0: no branch)
};

// A design with the scenario's settings filled in (every 0 / -1 resolved).
struct Resolved {
  Design d;
  int unit = 16, plan_positions = 1, heads_per_plan = 1, plans_per_step = 1;
  std::int64_t budget_units = 0, fixed_units = 0;
  // Selected units smaller than a page cost one page visit each (the hi bound of a token gather);
  // false: visits are counted in page-sized pieces (c tokens), as for page-granular designs.
  bool unit_visits = false;
};

// `equal_budget`: the design selects the scenario's K x c tokens instead of its own budget.
// Throws std::invalid_argument naming the field when the combination is impossible.
Resolved resolve(const Design& d, const Geometry& geo, const CisaConfig& cfg, int qshare_g,
                 bool equal_budget);

// Bytes per category, summed over the forward(s), one layer, whole batch.
struct DesignBytes {
  double kv_selected = 0;  // selected units' K and V
  double kv_fixed = 0;     // window, sink and tail (and everything on the dense path)
  double index_read = 0;   // representatives / index keys scanned by scoring
  double index_write = 0;  // index maintenance: representatives, index-key cache, compressed K/V
  double scores = 0;       // scores written by scoring and read by top-k
  double ids = 0;          // selected IDs written by top-k and read by attention; block tables
  double qo = 0;           // Q read, O written
  double branch = 0;       // compressed-branch K/V read
  double partials = 0;     // split-KV partial outputs written and read
  double other = 0;        // index projection weights and activations
  double total() const;
};

struct DesignCost {
  DesignBytes bytes, dense_bytes;
  ForwardCost forward;      // kernel classes, priced by cisa_times / dense_attention_time
  double plans = 0;         // selections on the sparse path
  double scored_units = 0;  // units scored, summed over plans
  double flops_attention = 0, flops_scoring = 0, flops_other = 0;  // useful FLOPs
  double flops_dense = 0;
};

// Cost of `work` (its phase) for design `r`, with kernel structure `sh`.
DesignCost design_cost(const Resolved& r, const Geometry& geo, const CisaConfig& cfg,
                       const Workload& work, const KernelShape& sh);

struct DesignTimes {
  ComponentTimes design;  // attention, scoring, top-k, setup, other
  double dense = 0;       // dense attention of the baseline
};
DesignTimes design_times(const DesignCost& c, const KernelShape& sh, const Rates& design_rates,
                         const Rates& dense_rates);

// Closed-form per-position ceilings, dense / design bytes (method doc section 3 generalised):
//   R = 2L / (h (2 (B + F)) + h (L/u) v (d_i b_i + s_i) / (d b_kv) / Gp + 2 L / s)
// h heads per plan scope (r for per-head plans, else 1), B budget and F fixed tokens, u unit,
// v vectors per unit, d_i b_i + s_i index bytes per vector, Gp positions per plan, s the
// compressed stride (no term without a branch). `ideal` leaves out F (the paper's R(L)).
double design_ceiling(const Resolved& r, const Geometry& geo, const CisaConfig& cfg,
                      std::int64_t context_tokens, int plan_positions, bool ideal);

}  // namespace cisa::design
