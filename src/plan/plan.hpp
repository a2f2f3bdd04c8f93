// Deployment capacity planning (issue 5): a plan scenario (YAML) -> for every configuration of
// its search (TP/DP/EP, weight dtype, context, budget K, QShare G, batch), memory per GPU, max
// concurrency, TTFT, TPOT, tokens/s per GPU, dense vs CISA, the fixed-output throughput speedup
// S and S_adj = S / R, constraint checks and the Pareto front of throughput/GPU vs TPOT.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model/hardware.hpp"
#include "cisa/table.hpp"
#include "model/types.hpp"
#include "cisa/yaml_util.hpp"
#include "plan/deploy.hpp"
#include "plan/perf.hpp"

namespace cisa::plan {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct PlanConfig {  // one point of the search
  Parallel par;
  WeightDtype weights = WeightDtype::bf16;
  std::int64_t context = 1 << 20;
  std::int64_t budget = 4096;
  int G = 4;
  int batch = 0;  // sequences per replica; 0 = "max" (each side at its own max concurrency)
};

struct ContextShare {
  std::int64_t context = 0;
  double share = 0;
};

struct PlanScenario {
  std::string name, description, file, text, effective_yaml;
  std::vector<std::string> overrides;
  DeployModel model;
  Hardware hw;
  Basis basis = Basis::calibrated;
  std::string dense_impl = "best";  // implementation.dense: the baseline S divides by
  std::string cisa_impl = "auto";   // implementation.cisa
  CisaConfig cisa;  // chunk, window, dtypes, representatives (budget and G per config)
  std::int64_t output_tokens = 4096;
  int prefill_chunk = 8192;  // P: tokens per prefill forward (chunked prefill)
  int max_batch = 256;       // engine limit on concurrent sequences per replica
  int mtp_tokens = 1;        // k: positions verified per sequence per decode step (1 = plain decode)
  double mtp_accepted = 1;   // a: mean tokens emitted per sequence per decode step (1 <= a <= k)
  double output_length_ratio = std::numeric_limits<double>::quiet_NaN();  // R = CISA / dense mean output length
  std::vector<ContextShare> context_mix;  // optional distribution (memory-only concurrency)
  MemoryOptions mem;
  CommOptions comm;
  double tpot_target_ms = std::numeric_limits<double>::infinity();
  double ttft_target_s = std::numeric_limits<double>::infinity();
  int gpus_exact = 0, max_gpus = 0;  // 0 = unconstrained
  std::vector<PlanConfig> configs;   // the scenario's own configuration first, then the search
  std::size_t skipped = 0;           // search combinations that are impossible (heads do not split...)
  std::vector<std::string> skipped_examples;
};

// source: a file path or "embedded:scenarios/<name>.yaml"; sets: "dotted.key=value" overrides.
PlanScenario load_plan_scenario(const std::string& source, const std::vector<std::string>& sets);
PlanScenario parse_plan_scenario(YamlDoc doc, const std::vector<std::string>& sets);
// The attention pricing of the plan's card and implementations (std::invalid_argument if unknown).
PointPricing attention_pricing(const PlanScenario& sc);

struct PlanRow {
  PlanConfig cfg;
  MemoryPlan mem;
  CacheShape cache;
  int batch_dense = 0, batch_cisa = 0;        // per replica (0 = does not fit)
  std::string reason_dense, reason_cisa;      // "" when it fits and meets the constraints
  bool fits_dense = false, fits_cisa = false;  // memory
  bool feasible_dense = false, feasible_cisa = false;  // memory + TPOT/TTFT targets
  bool pareto_dense = false, pareto_cisa = false;
  StepTimes prefill;                   // one sequence, all chunks
  StepTimes decode_dense, decode_cisa;  // one step at each side's batch
  double ttft_s_dense = kNaN, ttft_s_cisa = kNaN;
  double decode_step_s_dense = kNaN, decode_step_s_cisa = kNaN;
  // TPOT = inter-token latency of a decode step (decode step / accepted tokens), as AIConfigurator
  // and vLLM report it; the interleaved figure adds each sequence's share of the prefills that
  // run between its decode steps under steady load.
  double tpot_s_dense = kNaN, tpot_s_cisa = kNaN;
  double tpot_interleaved_s_dense = kNaN, tpot_interleaved_s_cisa = kNaN;
  double tokens_per_s_per_user_dense = kNaN, tokens_per_s_per_user_cisa = kNaN;  // 1 / TPOT
  double tokens_per_s_per_gpu_dense = kNaN, tokens_per_s_per_gpu_cisa = kNaN;
  double speedup = kNaN, speedup_adj = kNaN;
  double mix_concurrency_dense = kNaN, mix_concurrency_cisa = kNaN;
};

// Evaluates every configuration; marks feasibility and the Pareto fronts.
std::vector<PlanRow> evaluate_plan(const PlanScenario& sc);
// Steady-state serving of fixed-length requests (context prompt, `output` tokens each) on one replica,
// `accepted` tokens emitted per sequence per decode step (1 without MTP):
// tokens/s = output / (T_prefill + output * T_step / (B * a)); TPOT = T_step / a (inter-token latency);
// TPOT with prefill interleaved = T_step / a + B * T_prefill / output.
double replica_tokens_per_s(double prefill_s, double step_s, int batch, std::int64_t output, double accepted = 1.0);
double tpot_s(double step_s, double accepted = 1.0);
double loaded_tpot_s(double prefill_s, double step_s, int batch, std::int64_t output, double accepted = 1.0);

Table plan_table(const PlanScenario& sc, const std::vector<PlanRow>& rows);
Attributes plan_attributes(const PlanScenario& sc, const std::string& command_line);

}  // namespace cisa::plan
