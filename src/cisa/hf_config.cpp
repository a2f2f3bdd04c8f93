#include "cisa/hf_config.hpp"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "cisa/yaml_util.hpp"

namespace cisa {

namespace {

// Reads keys of the config's top level and remembers which ones it read.
class Reader {
 public:
  Reader(const YamlDoc& doc) : doc_(doc) {}
  bool has(const std::string& k) {
    used_.insert(k);
    const YAML::Node n = doc_.root[k];
    return n && !n.IsNull();
  }
  long long integer(const std::string& k, const std::string& why) {
    if (!has(k)) throw InputError(locate(doc_, doc_.root, k), "missing '" + k + "' (" + why + ")");
    const long long v = get_int(doc_, doc_.root[k], k);
    if (v < 1) throw InputError(locate(doc_, doc_.root[k], k), "must be >= 1");
    return v;
  }
  long long integer_or(const std::string& k, long long fallback) {
    return has(k) ? get_int(doc_, doc_.root[k], k) : fallback;
  }
  bool flag(const std::string& k) { return has(k) && get_bool(doc_, doc_.root[k], k); }
  YAML::Node node(const std::string& k) {
    used_.insert(k);
    return doc_.root[k];
  }
  std::vector<std::string> unused() const {
    std::vector<std::string> out;
    for (const auto& kv : doc_.root) {
      const std::string k = kv.first.as<std::string>();
      if (!used_.count(k)) out.push_back(k);
    }
    return out;
  }
  const YamlDoc& doc() const { return doc_; }

 private:
  const YamlDoc& doc_;
  std::set<std::string> used_;
};

Figure cfg(double v, const std::string& what) { return {v, "CFG: config.json " + what}; }

std::string family_of(Reader& r) {
  static const std::map<std::string, std::string> by_arch = {
      {"LlamaForCausalLM", "llama"},       {"Qwen2ForCausalLM", "qwen2"},     {"Qwen3ForCausalLM", "qwen3"},
      {"Qwen2MoeForCausalLM", "qwen2_moe"}, {"Qwen3MoeForCausalLM", "qwen3_moe"}, {"MistralForCausalLM", "mistral"},
      {"MixtralForCausalLM", "mixtral"},   {"NemotronHForCausalLM", "nemotron_h"}};
  const YamlDoc& doc = r.doc();
  r.has("model_type");
  if (r.has("architectures")) {
    const YAML::Node a = r.node("architectures");
    if (a.IsSequence() && a.size() > 0 && a[0].IsScalar()) {
      const auto it = by_arch.find(a[0].Scalar());
      if (it != by_arch.end()) return it->second;
    }
  }
  if (r.has("model_type")) {
    const std::string t = get_string(doc, r.node("model_type"), "model_type");
    for (const auto& [arch, fam] : by_arch)
      if (fam == t) return fam;
    throw InputError(locate(doc, r.node("model_type"), "model_type"),
                     "model type '" + t + "' is not supported (llama, qwen2, qwen3, qwen2_moe, qwen3_moe, mistral, "
                     "mixtral, nemotron_h); write a model preset YAML instead (cisa-sim presets --show llama3_1_70b)");
  }
  throw InputError(locate(doc, doc.root, "architectures"),
                   "neither a known 'architectures' entry nor 'model_type': not a supported Hugging Face config");
}

// Nemotron-H: the layer pattern from hybrid_override_pattern (M * E -) or layers_block_type.
std::string nemotron_pattern(Reader& r) {
  const YamlDoc& doc = r.doc();
  if (r.has("hybrid_override_pattern")) {
    const std::string p = get_string(doc, r.node("hybrid_override_pattern"), "hybrid_override_pattern");
    for (char ch : p)
      if (std::string("M*E-").find(ch) == std::string::npos)
        throw InputError(locate(doc, r.node("hybrid_override_pattern"), "hybrid_override_pattern"),
                         std::string("unknown layer letter '") + ch + "' (M Mamba2, * attention, E MoE, - MLP)");
    return p;
  }
  if (r.has("layers_block_type")) {
    const YAML::Node l = r.node("layers_block_type");
    if (!l.IsSequence()) throw InputError(locate(doc, l, "layers_block_type"), "expected a list of layer types");
    static const std::map<std::string, char> letter = {{"mamba", 'M'}, {"attention", '*'}, {"moe", 'E'}, {"mlp", '-'}};
    std::string p;
    for (std::size_t i = 0; i < l.size(); ++i) {
      const std::string t = get_string(doc, l[i], "layers_block_type[" + std::to_string(i) + "]");
      const auto it = letter.find(t);
      if (it == letter.end())
        throw InputError(locate(doc, l[i], "layers_block_type[" + std::to_string(i) + "]"),
                         "unknown layer type '" + t + "' (mamba, attention, moe, mlp)");
      p += it->second;
    }
    return p;
  }
  throw InputError(locate(doc, doc.root, "hybrid_override_pattern"),
                   "missing 'hybrid_override_pattern' or 'layers_block_type' (Nemotron-H's layer pattern)");
}

// Layers with full (global) attention; the rest use a sliding window or are not attention.
long long global_layers(Reader& r, const std::string& fam, long long layers, std::string& why) {
  const YamlDoc& doc = r.doc();
  if (r.has("layer_types")) {
    const YAML::Node l = r.node("layer_types");
    long long n = 0;
    for (std::size_t i = 0; i < l.size(); ++i)
      n += get_string(doc, l[i], "layer_types[" + std::to_string(i) + "]") == "full_attention";
    why = "layer_types: full_attention";
    return n;
  }
  if ((fam == "mistral" || fam == "mixtral") && r.has("sliding_window")) {
    why = "sliding_window on every layer";
    return 0;
  }
  r.has("sliding_window");
  if (fam.rfind("qwen", 0) == 0 && r.flag("use_sliding_window")) {
    why = "use_sliding_window: layers below max_window_layers keep full attention";
    return std::min(layers, r.integer("max_window_layers", "use_sliding_window is true"));
  }
  r.has("use_sliding_window");
  r.has("max_window_layers");
  why = "num_hidden_layers (every layer attends globally)";
  return layers;
}

}  // namespace

bool is_hf_config_path(const std::string& s) { return s.size() > 5 && s.substr(s.size() - 5) == ".json"; }

HfModel parse_hf_config(const std::string& text, const std::string& file) {
  const YamlDoc doc = parse_yaml(text, file);
  if (!doc.root.IsMap()) throw InputError({file, 1, ""}, "expected a JSON object (a Hugging Face config.json)");
  Reader r(doc);
  HfModel m;
  m.file = file;
  m.family = family_of(r);
  ModelPreset& p = m.preset;
  // "scenario.yaml:3 -> models/x/config.json" when referenced from a scenario: name it by the path.
  const auto arrow = file.rfind(" -> ");
  const std::filesystem::path path(arrow == std::string::npos ? file : file.substr(arrow + 4));
  p.name = path.stem() == "config" && path.has_parent_path() && !path.parent_path().filename().empty()
               ? path.parent_path().filename().string()
               : path.stem().string();
  p.display_name = r.has("_name_or_path") ? get_string(doc, r.node("_name_or_path"), "_name_or_path") : p.name;
  const std::string why_heads = "the attention geometry";
  const long long hidden = r.integer("hidden_size", "the model width");
  const long long q = r.integer("num_attention_heads", why_heads);
  const long long kv = r.has("num_key_value_heads") ? r.integer("num_key_value_heads", why_heads) : q;
  long long head_dim = 0;
  if (r.has("head_dim"))
    head_dim = r.integer("head_dim", why_heads);
  else if (m.family == "nemotron_h" && r.has("attention_head_dim"))
    head_dim = r.integer("attention_head_dim", why_heads);
  else if (hidden % q == 0)
    head_dim = hidden / q;
  else
    throw InputError(locate(doc, doc.root, "head_dim"), "missing 'head_dim' and hidden_size is not a multiple of num_attention_heads");
  if (q % kv != 0) throw InputError(locate(doc, r.node("num_key_value_heads"), "num_key_value_heads"), "num_attention_heads must be a multiple of it (GQA)");
  long long layers = 0, global = 0;
  std::string why_global;
  if (m.family == "nemotron_h") {
    m.layer_pattern = nemotron_pattern(r);
    layers = static_cast<long long>(m.layer_pattern.size());
    if (r.has("num_hidden_layers") && r.integer("num_hidden_layers", "layer count") != layers)
      throw InputError(locate(doc, r.node("num_hidden_layers"), "num_hidden_layers"),
                       "differs from the layer pattern's length " + std::to_string(layers));
    for (char ch : m.layer_pattern) global += ch == '*';
    why_global = "attention layers of the layer pattern";
    if (r.has("n_routed_experts")) {
      m.experts = r.integer("n_routed_experts", "MoE");
      m.experts_per_token = r.integer("num_experts_per_tok", "MoE with n_routed_experts");
      m.expert_intermediate = r.integer("moe_intermediate_size", "MoE with n_routed_experts");
      m.shared_experts = r.integer_or("n_shared_experts", 0);
      r.has("moe_shared_expert_intermediate_size");
    }
    m.intermediate = r.integer_or("intermediate_size", 0);
  } else {
    layers = r.integer("num_hidden_layers", "the layer count");
    global = global_layers(r, m.family, layers, why_global);
    if (m.family == "mixtral") {
      m.experts = r.integer("num_local_experts", "Mixtral's experts");
      m.experts_per_token = r.integer("num_experts_per_tok", "Mixtral's router");
      m.expert_intermediate = r.integer("intermediate_size", "Mixtral's expert width");
    } else if (m.family == "qwen2_moe" || m.family == "qwen3_moe") {
      m.experts = r.integer("num_experts", "the MoE");
      m.experts_per_token = r.integer("num_experts_per_tok", "the MoE router");
      m.expert_intermediate = r.integer("moe_intermediate_size", "the expert width");
      if (r.has("shared_expert_intermediate_size")) m.shared_experts = 1;
      m.intermediate = r.integer_or("intermediate_size", 0);
    } else {
      m.intermediate = r.integer("intermediate_size", "the MLP width");
    }
  }
  m.vocab = r.integer("vocab_size", "the vocabulary");
  p.layers = cfg(static_cast<double>(layers), m.family == "nemotron_h" ? "layer pattern length" : "num_hidden_layers");
  p.global_attn_layers = cfg(static_cast<double>(global), why_global);
  p.hidden = cfg(static_cast<double>(hidden), "hidden_size");
  p.q_heads = cfg(static_cast<double>(q), "num_attention_heads");
  p.kv_heads = cfg(static_cast<double>(kv), r.has("num_key_value_heads") ? "num_key_value_heads" : "no num_key_value_heads: MHA");
  p.head_dim = cfg(static_cast<double>(head_dim), r.has("head_dim") ? "head_dim" : "hidden_size / num_attention_heads");
  p.total_params_b = {NAN, "NF: not derived from a Hugging Face config"};
  p.active_params_b = {NAN, "NF: not derived from a Hugging Face config"};
  p.default_tp = {1, "default"};
  p.yaml = "# Hugging Face config " + file + "\n" + text;
  m.unused = r.unused();
  return m;
}

HfModel load_hf_config(const std::string& path) {
  const YamlDoc doc = load_yaml_file(path);  // the file's text; JSON is read by the YAML parser
  return parse_hf_config(doc.text, path);
}

void note_unused_once(const HfModel& m) {
  static std::set<std::string> noted;
  if (m.unused.empty() || !noted.insert(m.file).second) return;
  std::string list;
  for (const auto& k : m.unused) list += (list.empty() ? "" : ", ") + k;
  std::cerr << "cisa-sim: note: " << m.file << ": fields not used for the attention geometry: " << list << "\n";
}

}  // namespace cisa
