// Whole-model descriptions for deployment planning (models/deploy/*.yaml): every layer type with
// its shape, the weight and KV dtypes, embeddings. The attention geometry (q/kv heads, head dim,
// hidden) comes from the attention preset in models/llm/ named by `attention_preset`.
// Pure data + arithmetic (parameter counts, sharding, memory per GPU); no I/O beyond parsing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/hardware.hpp"
#include "cisa/presets.hpp"
#include "model/types.hpp"
#include "cisa/yaml_util.hpp"

namespace cisa::plan {

enum class WeightDtype { bf16, fp8, nvfp4 };
// Bytes per parameter: bf16 2, fp8 1 (per-tensor/channel scales neglected), nvfp4 0.5625
// (4-bit values + one FP8 E4M3 scale per 16-value block).
double weight_bytes_per_param(WeightDtype d);
std::string to_string(WeightDtype d);
WeightDtype parse_weight_dtype(const std::string& s);  // std::invalid_argument listing the values

enum class LayerType { global_attention, sliding_attention, mamba, moe, mlp };
std::string to_string(LayerType t);

// One group of identical layers (blocks). Fields that do not apply to the type stay 0.
struct LayerGroup {
  LayerType type = LayerType::mlp;
  Figure count;
  Figure window;                 // sliding_attention: window in tokens
  Figure heads, head_dim, state, groups, conv;  // mamba (Mamba-2 / SSD)
  Figure experts, active, shared;               // moe: routed experts, experts per token, shared experts
  Figure intermediate;                          // mlp width; moe: routed expert width
  Figure shared_intermediate;                   // moe: width of each shared expert
  Figure latent;                                // moe: LatentMoE dim (routed experts run in it), 0 = none
  bool gated = true;                            // 3 matrices (SwiGLU) vs 2 (relu2)
  int n() const { return static_cast<int>(count.value); }
};

struct DeployModel {
  std::string name, display_name;
  ModelPreset attn;  // the attention preset (models/llm/<attention_preset>.yaml)
  Figure vocab;
  bool tied_embeddings = false;
  std::string tied_source;
  WeightDtype weight_dtype = WeightDtype::bf16;
  std::string weight_dtype_source;
  Dtype kv_dtype = Dtype::bf16;
  std::string kv_dtype_source;
  std::vector<LayerGroup> layers;
  std::string yaml;  // as loaded (provenance)

  int hidden() const { return static_cast<int>(attn.hidden.value); }
  int count(LayerType t) const;  // layers of a type
  const LayerGroup* first(LayerType t) const;
};

DeployModel parse_deploy_model(const YamlDoc& doc, const YAML::Node& node, const std::string& prefix);
std::vector<std::string> deploy_preset_names();
DeployModel deploy_preset(const std::string& name);  // InputError if unknown (with suggestion)

// ---- parameter counts (elements, whole model, unsharded) ----
struct ParamCounts {
  double attention = 0;      // global + sliding attention projections (q, k, v, o) + norms
  double mamba = 0;
  double moe_routed = 0;     // all routed experts
  double moe_routed_active = 0;  // routed experts used per token (active / experts share)
  double moe_dense = 0;      // router, shared experts, latent projections
  double mlp = 0;
  double embedding = 0;      // input embedding
  double lm_head = 0;        // 0 when tied
  double total() const { return attention + mamba + moe_routed + moe_dense + mlp + embedding + lm_head; }
  double active() const { return attention + mamba + moe_routed_active + moe_dense + mlp + embedding + lm_head; }
};
ParamCounts count_params(const DeployModel& m);

// ---- sharding ----
struct Parallel {
  int tp = 1;  // tensor parallel: heads, Mamba heads, MLP/shared-expert widths, vocab split
  int dp = 1;  // data parallel replicas (each with its own sequences)
  int ep = 1;  // expert parallel: routed experts split over ep GPUs (1 = TP-sharded in each replica)
  int gpus() const { return tp * dp; }
};
// Throws std::invalid_argument naming the problem (heads not divisible, ep not a multiple of tp...).
void validate_parallel(const DeployModel& m, const Parallel& p);

// ---- memory per GPU ----
struct MemoryOptions {
  double reserve_fraction = 0.10;  // framework reserve as a share of HBM (CUDA context, graphs, NCCL, fragmentation)
  double reserve_bytes = 0;        // extra fixed reserve
  double workspace_bytes = -1;     // activations/workspace; < 0 = estimate from max batched tokens
  std::int64_t max_batched_tokens = 8192;  // tokens per forward (chunked prefill size + decode tokens)
};

struct CacheShape {  // what CISA adds and how pages round
  int chunk_tokens = 16;
  int rep_dim = 0;  // 0 = head_dim
  Dtype rep_dtype = Dtype::bf16;
  bool minmax = false;  // Quest-style bounds: two vectors per chunk
};

struct MemoryPlan {
  double hbm = 0;              // bytes per GPU
  double weights = 0;          // bytes per GPU after sharding
  double weights_experts = 0;  // of which routed experts
  double workspace = 0, reserve = 0;
  double free_for_cache = 0;   // hbm - weights - workspace - reserve (may be negative)
  // per sequence, per GPU, at the planned sequence length
  double kv_per_seq = 0;       // global + sliding K/V
  double kv_global_per_seq = 0, kv_sliding_per_seq = 0;
  double rep_per_seq = 0;      // CISA representatives (global layers)
  double ssm_per_seq = 0;      // Mamba SSM + conv state
  double seq_dense() const { return kv_per_seq + ssm_per_seq; }
  double seq_cisa() const { return kv_per_seq + rep_per_seq + ssm_per_seq; }
  std::int64_t max_seqs_dense = 0, max_seqs_cisa = 0;  // per replica (0 when nothing fits)
  bool weights_fit = false;
  std::string reason;  // why nothing fits ("" when weights fit)
};

// K/V bytes per token for the whole model on one GPU at tensor parallelism tp (global layers;
// sliding layers hold at most their window), KV heads replicated when tp > kv_heads.
double kv_bytes_per_token_global(const DeployModel& m, int tp, Dtype kv_dtype);
// Sequence memory per GPU at length `tokens` (pages of `chunk_tokens`).
double kv_bytes_per_seq(const DeployModel& m, int tp, Dtype kv_dtype, std::int64_t tokens, int chunk_tokens);
double rep_bytes_per_seq(const DeployModel& m, int tp, std::int64_t tokens, const CacheShape& cs);
double ssm_bytes_per_seq(const DeployModel& m, int tp);
double weight_bytes_per_gpu(const DeployModel& m, const Parallel& p, WeightDtype wd, double* experts_part = nullptr);
double workspace_estimate(const DeployModel& m, const Parallel& p, std::int64_t max_batched_tokens);

MemoryPlan plan_memory(const DeployModel& m, const Parallel& p, const Hardware& hw, WeightDtype wd,
                       Dtype kv_dtype, const CacheShape& cs, std::int64_t seq_tokens, const MemoryOptions& opt);

}  // namespace cisa::plan
