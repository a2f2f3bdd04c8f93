// Hugging Face config.json -> model geometry (issue 13): small configs written here, compared with
// the shipped presets; unused fields listed; missing fields and unknown architectures are exit-2
// errors naming the file, line and field.
#include <filesystem>
#include <fstream>
#include <string>

#include "catch.hpp"
#include "cisa/errors.hpp"
#include "cisa/hf_config.hpp"
#include "cisa/presets.hpp"
#include "cisa/scenario.hpp"

using namespace cisa;
namespace fs = std::filesystem;

namespace {

std::string write_config(const std::string& dir, const std::string& text) {
  const fs::path d = fs::temp_directory_path() / "cisa_test_hf" / dir;
  fs::create_directories(d);
  const fs::path p = d / "config.json";
  std::ofstream(p) << text;
  return p.string();
}

// Llama-3.1-70B's config.json, shape fields as published (shared/docs/presets-facts.md A3).
const std::string kLlama70b = R"({
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "hidden_size": 8192,
  "intermediate_size": 28672,
  "num_attention_heads": 64,
  "num_hidden_layers": 80,
  "num_key_value_heads": 8,
  "max_position_embeddings": 131072,
  "rope_theta": 500000.0,
  "rope_scaling": {"factor": 8.0, "rope_type": "llama3"},
  "torch_dtype": "bfloat16",
  "vocab_size": 128256
})";

void same_geometry(const ModelPreset& hf, const ModelPreset& preset) {
  CHECK(hf.layers.value == preset.layers.value);
  CHECK(hf.global_attn_layers.value == preset.global_attn_layers.value);
  CHECK(hf.hidden.value == preset.hidden.value);
  CHECK(hf.q_heads.value == preset.q_heads.value);
  CHECK(hf.kv_heads.value == preset.kv_heads.value);
  CHECK(hf.head_dim.value == preset.head_dim.value);
  for (int tp : {1, 2, 8}) {
    const Geometry a = hf.per_rank(tp), b = preset.per_rank(tp);
    CHECK(a.q_heads == b.q_heads);
    CHECK(a.kv_heads == b.kv_heads);
    CHECK(a.head_dim == b.head_dim);
    CHECK(a.hidden == b.hidden);
  }
}

std::string error_of(const std::string& text) {
  try {
    (void)parse_hf_config(text, "bad/config.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("A Hugging Face Llama config gives the preset's geometry", "[hf]") {
  const HfModel m = load_hf_config(write_config("llama70b", kLlama70b));
  CHECK(m.family == "llama");
  CHECK(m.vocab == 128256);
  CHECK(m.intermediate == 28672);
  CHECK(m.preset.name == "llama70b");
  same_geometry(m.preset, model_preset("llama3_1_70b"));
  CHECK(contains(m.preset.q_heads.source, "CFG"));
  // Fields it does not read are listed (once, by note_unused_once).
  CHECK(m.unused == std::vector<std::string>{"max_position_embeddings", "rope_theta", "rope_scaling", "torch_dtype"});
}

TEST_CASE("A scenario takes model: path/to/config.json and --set model=...", "[hf]") {
  const std::string path = write_config("llama70b_scn", kLlama70b);
  const Scenario a = load_scenario("", {"model=" + path, "tp=8"});
  const Scenario b = load_scenario("", {"model=llama3_1_70b", "tp=8"});
  REQUIRE(a.points.size() == b.points.size());
  CHECK(a.points.front().geo.q_heads == 8);
  CHECK(a.points.front().geo.kv_heads == 1);
  CHECK(a.points.front().geo.hidden == b.points.front().geo.hidden);
  CHECK(a.points.front().model == "llama70b_scn@tp8");
  // model: in a scenario file finds the config beside the scenario, from any folder.
  const fs::path dir = fs::path(path).parent_path();
  std::ofstream(dir / "s.yaml") << "name: s\nmodel: config.json\ntp: 8\nhardware: h200_sxm\n";
  const Scenario c = load_scenario((dir / "s.yaml").string(), {});
  CHECK(c.points.front().geo.q_heads == 8);
  CHECK(c.points.front().model == "llama70b_scn@tp8");
}

TEST_CASE("Qwen2.5, Qwen3-MoE, Mistral and Mixtral configs", "[hf]") {
  const HfModel qwen = parse_hf_config(R"({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 8192,
    "intermediate_size": 29568, "num_attention_heads": 64, "num_hidden_layers": 80, "num_key_value_heads": 8,
    "use_sliding_window": false, "sliding_window": 131072, "max_window_layers": 70, "vocab_size": 152064})",
                                       "qwen/config.json");
  same_geometry(qwen.preset, model_preset("qwen2_5_72b"));
  // With the sliding window on, layers from max_window_layers up are windowed.
  const HfModel qwin = parse_hf_config(R"({"model_type": "qwen2", "hidden_size": 1024, "intermediate_size": 4096,
    "num_attention_heads": 16, "num_hidden_layers": 24, "num_key_value_heads": 2, "use_sliding_window": true,
    "sliding_window": 4096, "max_window_layers": 21, "vocab_size": 151936})",
                                       "qwin/config.json");
  CHECK(qwin.preset.global_attn_layers.value == 21);
  const HfModel q3 = parse_hf_config(R"({"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 4096,
    "head_dim": 128, "num_attention_heads": 64, "num_key_value_heads": 4, "num_hidden_layers": 94,
    "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "intermediate_size": 12288,
    "vocab_size": 151936})",
                                     "q3/config.json");
  CHECK(q3.preset.head_dim.value == 128);  // explicit, not hidden / heads = 64
  CHECK(q3.experts == 128);
  CHECK(q3.experts_per_token == 8);
  CHECK(q3.expert_intermediate == 1536);
  const HfModel mixtral = parse_hf_config(R"({"architectures": ["MixtralForCausalLM"], "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "num_local_experts": 8, "num_experts_per_tok": 2, "sliding_window": null, "vocab_size": 32000})",
                                          "mixtral/config.json");
  same_geometry(mixtral.preset, model_preset("mixtral_8x7b"));
  CHECK(mixtral.experts == 8);
  CHECK(mixtral.experts_per_token == 2);
  // Mistral 7B v0.1 windows every layer: no global-attention layer for CISA to sparsify.
  const HfModel mistral = parse_hf_config(R"({"architectures": ["MistralForCausalLM"], "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "sliding_window": 4096, "vocab_size": 32000})",
                                          "mistral/config.json");
  CHECK(mistral.preset.global_attn_layers.value == 0);
  CHECK(contains(mistral.preset.global_attn_layers.source, "sliding_window"));
}

TEST_CASE("Nemotron-H: the hybrid layer pattern gives layers and global-attention layers", "[hf]") {
  const std::string nano_pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME";
  const HfModel nano = parse_hf_config(R"({"architectures": ["NemotronHForCausalLM"], "hidden_size": 2688,
    "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "num_hidden_layers": 52,
    "hybrid_override_pattern": ")" + nano_pattern + R"(", "n_routed_experts": 128, "num_experts_per_tok": 6,
    "moe_intermediate_size": 1856, "n_shared_experts": 1, "moe_shared_expert_intermediate_size": 3712,
    "mamba_num_heads": 64, "vocab_size": 131072})",
                                       "nano/config.json");
  same_geometry(nano.preset, model_preset("nemotron3_nano"));
  CHECK(nano.layer_pattern == nano_pattern);
  CHECK(nano.experts == 128);
  CHECK(nano.shared_experts == 1);
  CHECK(nano.unused == std::vector<std::string>{"mamba_num_heads"});
  // The newer form: layers_block_type, without num_hidden_layers (as Ultra's config).
  const HfModel list = parse_hf_config(R"({"architectures": ["NemotronHForCausalLM"], "hidden_size": 2688,
    "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
    "layers_block_type": ["mamba", "moe", "attention", "moe"], "vocab_size": 131072})",
                                       "list/config.json");
  CHECK(list.preset.layers.value == 4);
  CHECK(list.preset.global_attn_layers.value == 1);
}

TEST_CASE("Missing fields and unknown architectures are errors naming file, line and field", "[hf]") {
  CHECK(contains(error_of(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256})"),
                 "bad/config.json:1: field 'num_attention_heads': missing"));
  CHECK(contains(error_of(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "intermediate_size": 14336})"),
                 "field 'vocab_size': missing"));
  CHECK(contains(error_of(R"({"model_type": "deepseek_v3", "hidden_size": 7168})"), "model type 'deepseek_v3' is not supported"));
  CHECK(contains(error_of(R"({"architectures": ["NemotronHForCausalLM"], "hidden_size": 2688,
    "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 131072,
    "hybrid_override_pattern": "M*X"})"),
                 "unknown layer letter 'X'"));
  CHECK(contains(error_of(R"({"architectures": ["LlamaForCausalLM"],
    "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 6,
    "num_hidden_layers": 32, "intermediate_size": 14336, "vocab_size": 128256})"),
                 "bad/config.json:2: field 'num_key_value_heads'"));
  // Through a scenario, the error also names the referring field; a missing file is an error too.
  try {
    (void)load_scenario("", {"model=/nonexistent/config.json"});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(contains(e.what(), "model"));
    CHECK(contains(e.what(), "cannot open file"));
  }
}
