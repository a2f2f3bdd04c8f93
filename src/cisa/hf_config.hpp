// Model geometry from a Hugging Face `config.json` (Llama, Qwen2/2.5/3 incl. MoE, Mistral,
// Mixtral, Nemotron-H): layers, global-attention layers, heads, KV heads, head dim, hidden size,
// MoE fields and vocabulary. Every figure's source names the config key it came from (CFG).
#pragma once

#include <string>
#include <vector>

#include "cisa/presets.hpp"

namespace cisa {

struct HfModel {
  std::string file;
  std::string family;  // llama | qwen2 | qwen3 | qwen2_moe | qwen3_moe | mistral | mixtral | nemotron_h
  ModelPreset preset;  // attention geometry and layer counts, as a model preset
  long long vocab = 0, intermediate = 0;  // dense MLP width (0 when the model has none)
  long long experts = 0, experts_per_token = 0, shared_experts = 0, expert_intermediate = 0;
  std::string layer_pattern;          // Nemotron-H: M = Mamba2, * = attention, E = MoE, - = MLP
  std::vector<std::string> unused;    // top-level keys the derivation does not read
};

// Parses a config.json; InputError (exit 2) naming file, line and field for a missing or bad field
// or an architecture it does not know.
HfModel parse_hf_config(const std::string& text, const std::string& file);
HfModel load_hf_config(const std::string& path);

// "path/to/config.json" (a .json suffix) names a Hugging Face config.
bool is_hf_config_path(const std::string& s);

// The unused keys, once per file per process, on stderr.
void note_unused_once(const HfModel& m);

}  // namespace cisa
