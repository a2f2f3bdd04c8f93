#include "plan/deploy.hpp"
#include "cisa/plausibility.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "cisa/embedded.hpp"
#include "cisa/errors.hpp"

namespace cisa::plan {

double weight_bytes_per_param(WeightDtype d) {
  switch (d) {
    case WeightDtype::bf16: return 2.0;
    case WeightDtype::fp8: return 1.0;
    case WeightDtype::nvfp4: return 0.5625;
  }
  return 2.0;
}

std::string to_string(WeightDtype d) {
  switch (d) {
    case WeightDtype::bf16: return "bf16";
    case WeightDtype::fp8: return "fp8";
    case WeightDtype::nvfp4: return "nvfp4";
  }
  return "?";
}

WeightDtype parse_weight_dtype(const std::string& s) {
  if (s == "bf16") return WeightDtype::bf16;
  if (s == "fp8") return WeightDtype::fp8;
  if (s == "nvfp4") return WeightDtype::nvfp4;
  throw std::invalid_argument("unknown weight dtype '" + s + "' (expected bf16, fp8 or nvfp4)");
}

std::string to_string(LayerType t) {
  switch (t) {
    case LayerType::global_attention: return "global_attention";
    case LayerType::sliding_attention: return "sliding_attention";
    case LayerType::mamba: return "mamba";
    case LayerType::moe: return "moe";
    case LayerType::mlp: return "mlp";
  }
  return "?";
}

int DeployModel::count(LayerType t) const {
  int n = 0;
  for (const auto& g : layers)
    if (g.type == t) n += g.n();
  return n;
}

const LayerGroup* DeployModel::first(LayerType t) const {
  for (const auto& g : layers)
    if (g.type == t) return &g;
  return nullptr;
}

// ---------------------------------------------------------------- parsing
namespace {

const std::string kDeployDir = "models/deploy/";

std::string join(const std::string& prefix, const std::string& key) { return prefix.empty() ? key : prefix + "." + key; }

Figure figure(const YamlDoc& doc, const YAML::Node& map, const std::string& key, const std::string& prefix,
              bool required, double fallback = 0.0) {
  return read_figure(doc, map, key, prefix, required ? std::nullopt : std::optional<Figure>(Figure{fallback, "default"}));
}

// A text setting with an optional source: `key: bf16` or `key: {value: bf16, source: "..."}`.
std::pair<std::string, std::string> text_figure(const YamlDoc& doc, const YAML::Node& map, const std::string& key,
                                                const std::string& prefix, const std::string& fallback) {
  const std::string field = join(prefix, key);
  const YAML::Node n = map[key];
  if (!n) return {fallback, "default"};
  if (n.IsScalar()) return {get_string(doc, n, field), "given (no source)"};
  require_keys_known(doc, n, field, {"value", "source"});
  if (!n["value"]) throw InputError(locate(doc, n, field), "missing 'value'");
  return {get_string(doc, n["value"], field + ".value"),
          n["source"] ? get_string(doc, n["source"], field + ".source") : "given (no source)"};
}

void require_positive_int(const YamlDoc& doc, const YAML::Node& map, const std::string& key,
                          const std::string& prefix, const Figure& f, bool allow_zero = false) {
  const bool ok = (allow_zero ? f.value >= 0 : f.value >= 1) && f.value == std::floor(f.value) && f.value < 1e9;
  if (!ok)
    throw InputError(locate(doc, map[key] ? map[key] : map, join(prefix, key)),
                     allow_zero ? "must be a non-negative integer" : "must be a positive integer");
}

LayerGroup parse_group(const YamlDoc& doc, const YAML::Node& n, const std::string& field) {
  require_map(doc, n, field);
  if (!n["type"]) throw InputError(locate(doc, n, field), "missing 'type' (global_attention, sliding_attention, mamba, moe, mlp)");
  const std::string type = get_string(doc, n["type"], field + ".type");
  LayerGroup g;
  auto need = [&](const char* key, Figure& f, bool allow_zero = false) {
    f = figure(doc, n, key, field, true);
    require_positive_int(doc, n, key, field, f, allow_zero);
  };
  auto opt = [&](const char* key, Figure& f, double fallback) {
    f = figure(doc, n, key, field, false, fallback);
    require_positive_int(doc, n, key, field, f, true);
  };
  auto gated = [&]() {
    const Figure f = figure(doc, n, "gated", field, false, 1.0);
    if (f.value != 0 && f.value != 1)
      throw InputError(locate(doc, n["gated"], field + ".gated"), "must be 0 (two matrices, e.g. relu2) or 1 (three, SwiGLU)");
    return f.value == 1;
  };
  if (type == "global_attention") {
    require_keys_known(doc, n, field, {"type", "count"});
    g.type = LayerType::global_attention;
    need("count", g.count);
  } else if (type == "sliding_attention") {
    require_keys_known(doc, n, field, {"type", "count", "window"});
    g.type = LayerType::sliding_attention;
    need("count", g.count);
    need("window", g.window);
  } else if (type == "mamba") {
    require_keys_known(doc, n, field, {"type", "count", "heads", "head_dim", "state", "groups", "conv"});
    g.type = LayerType::mamba;
    need("count", g.count);
    need("heads", g.heads);
    need("head_dim", g.head_dim);
    need("state", g.state);
    need("groups", g.groups);
    need("conv", g.conv);
  } else if (type == "moe") {
    require_keys_known(doc, n, field, {"type", "count", "experts", "active", "shared", "intermediate",
                                       "shared_intermediate", "latent", "gated"});
    g.type = LayerType::moe;
    need("count", g.count);
    need("experts", g.experts);
    need("active", g.active);
    opt("shared", g.shared, 0);
    need("intermediate", g.intermediate);
    opt("shared_intermediate", g.shared_intermediate, 0);
    opt("latent", g.latent, 0);
    g.gated = gated();
    if (g.active.value > g.experts.value)
      throw InputError(locate(doc, n["active"], field + ".active"), "experts per token exceed the routed experts");
    if (g.shared.value > 0 && g.shared_intermediate.value <= 0)
      throw InputError(locate(doc, n, field), "shared experts need 'shared_intermediate'");
  } else if (type == "mlp") {
    require_keys_known(doc, n, field, {"type", "count", "intermediate", "gated"});
    g.type = LayerType::mlp;
    need("count", g.count);
    need("intermediate", g.intermediate);
    g.gated = gated();
  } else {
    throw InputError(locate(doc, n["type"], field + ".type"),
                     "unknown layer type '" + type + "' (global_attention, sliding_attention, mamba, moe, mlp)");
  }
  return g;
}

}  // namespace

DeployModel parse_deploy_model(const YamlDoc& doc, const YAML::Node& node, const std::string& prefix) {
  require_keys_known(doc, node, prefix,
                     {"name", "display_name", "attention_preset", "vocab", "tied_embeddings", "weight_dtype",
                      "kv_dtype", "layers"});
  DeployModel m;
  m.name = node["name"] ? get_string(doc, node["name"], join(prefix, "name")) : "inline";
  m.display_name = node["display_name"] ? get_string(doc, node["display_name"], join(prefix, "display_name")) : m.name;
  if (!node["attention_preset"])
    throw InputError(locate(doc, node, join(prefix, "attention_preset")),
                     "missing 'attention_preset' (a model preset in models/llm/ giving the attention geometry)");
  const std::string ap = get_string(doc, node["attention_preset"], join(prefix, "attention_preset"));
  try {
    m.attn = model_preset(ap);
  } catch (const InputError& e) {
    throw InputError(locate(doc, node["attention_preset"], join(prefix, "attention_preset")), e.what());
  }
  m.vocab = figure(doc, node, "vocab", prefix, true);
  require_positive_int(doc, node, "vocab", prefix, m.vocab);
  const Figure tied = figure(doc, node, "tied_embeddings", prefix, false, 0.0);
  if (tied.value != 0 && tied.value != 1)
    throw InputError(locate(doc, node["tied_embeddings"], join(prefix, "tied_embeddings")), "must be 0 or 1");
  m.tied_embeddings = tied.value == 1;
  m.tied_source = tied.source;
  const auto [wd, wds] = text_figure(doc, node, "weight_dtype", prefix, "bf16");
  try {
    m.weight_dtype = parse_weight_dtype(wd);
  } catch (const std::invalid_argument& e) {
    throw InputError(locate(doc, node["weight_dtype"], join(prefix, "weight_dtype")), e.what());
  }
  m.weight_dtype_source = wds;
  const auto [kd, kds] = text_figure(doc, node, "kv_dtype", prefix, "bf16");
  try {
    m.kv_dtype = parse_dtype(kd);
  } catch (const std::invalid_argument& e) {
    throw InputError(locate(doc, node["kv_dtype"], join(prefix, "kv_dtype")), e.what());
  }
  m.kv_dtype_source = kds;
  const YAML::Node layers = node["layers"];
  if (!layers || !layers.IsSequence() || layers.size() == 0)
    throw InputError(locate(doc, layers ? layers : node, join(prefix, "layers")),
                     "expected a non-empty list of layer groups ({type: ..., count: ...})");
  for (std::size_t i = 0; i < layers.size(); ++i)
    m.layers.push_back(parse_group(doc, layers[i], join(prefix, "layers") + "[" + std::to_string(i) + "]"));
  if (m.count(LayerType::global_attention) + m.count(LayerType::sliding_attention) == 0)
    throw InputError(locate(doc, layers, join(prefix, "layers")), "the model has no attention layer");
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const LayerGroup& g = m.layers[i];
    if (g.type == LayerType::mamba && static_cast<int>(g.heads.value) % static_cast<int>(g.groups.value) != 0)
      throw InputError(locate(doc, layers[i], join(prefix, "layers") + "[" + std::to_string(i) + "].groups"),
                       "Mamba heads must be a multiple of groups");
  }
  m.yaml = doc.text;
  return m;
}

std::vector<std::string> deploy_preset_names() { return embedded_yaml_names(kDeployDir); }

DeployModel deploy_preset(const std::string& name) {
  const auto known = deploy_preset_names();
  for (const auto& k : known)
    if (k == name) {
      const auto text = embedded_text(kDeployDir + name + ".yaml");
      if (!text) throw std::logic_error("embedded file missing: " + kDeployDir + name);
      const YamlDoc doc = parse_yaml(*text, "<embedded>/" + kDeployDir + name + ".yaml");
      return parse_deploy_model(doc, doc.root, "");
    }
  std::string msg = "unknown deployment model '" + name + "'";
  const std::string hint = did_you_mean(name, known);
  if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  throw InputError(msg + "; known (models/deploy/): " + list);
}

// ---------------------------------------------------------------- parameters
namespace {

double v(const Figure& f) { return f.value; }

// Mamba-2 layer parameters: in_proj (z, x, B, C, dt), depthwise conv, A/D/dt_bias, gated norm,
// out_proj, pre-norm.
double mamba_params(const LayerGroup& g, double hidden) {
  const double d_inner = v(g.heads) * v(g.head_dim);
  const double bc = 2.0 * v(g.groups) * v(g.state);
  return hidden * (2 * d_inner + bc + v(g.heads)) + (d_inner + bc) * v(g.conv) + 3 * v(g.heads) + d_inner +
         d_inner * hidden + hidden;
}

double expert_dim(const LayerGroup& g, double hidden) { return v(g.latent) > 0 ? v(g.latent) : hidden; }
double mats(const LayerGroup& g) { return g.gated ? 3.0 : 2.0; }

}  // namespace

ParamCounts count_params(const DeployModel& m) {
  ParamCounts p;
  const double h = m.hidden(), d = m.attn.head_dim.value, q = m.attn.q_heads.value, kv = m.attn.kv_heads.value;
  for (const auto& g : m.layers) {
    const double n = v(g.count);
    switch (g.type) {
      case LayerType::global_attention:
      case LayerType::sliding_attention:
        p.attention += n * (2 * h * q * d + 2 * h * kv * d + h);
        break;
      case LayerType::mamba: p.mamba += n * mamba_params(g, h); break;
      case LayerType::moe: {
        const double per_expert = mats(g) * expert_dim(g, h) * v(g.intermediate);
        p.moe_routed += n * v(g.experts) * per_expert;
        p.moe_routed_active += n * v(g.active) * per_expert;
        const double latent_proj = v(g.latent) > 0 ? 2 * h * v(g.latent) : 0.0;
        p.moe_dense += n * (h * v(g.experts) + v(g.shared) * mats(g) * h * v(g.shared_intermediate) + latent_proj + h);
        break;
      }
      case LayerType::mlp: p.mlp += n * (mats(g) * h * v(g.intermediate) + h); break;
    }
  }
  p.embedding = v(m.vocab) * h;
  p.lm_head = m.tied_embeddings ? 0.0 : v(m.vocab) * h;
  return p;
}

// ---------------------------------------------------------------- sharding
void validate_parallel(const DeployModel& m, const Parallel& p) {
  if (p.tp < 1 || p.dp < 1 || p.ep < 1) throw std::invalid_argument("tp, dp and ep must be >= 1");
  (void)m.attn.per_rank(p.tp);  // throws when heads do not split
  for (const auto& g : m.layers) {
    if (g.type == LayerType::mamba && static_cast<int>(g.heads.value) % p.tp != 0)
      throw std::invalid_argument("tp=" + std::to_string(p.tp) + " does not divide the " +
                                  std::to_string(static_cast<int>(g.heads.value)) + " Mamba heads of " + m.name);
    if (g.type == LayerType::moe && p.ep > 1) {
      if (p.ep % p.tp != 0 || p.gpus() % p.ep != 0)
        throw std::invalid_argument("ep=" + std::to_string(p.ep) + " must be a multiple of tp=" + std::to_string(p.tp) +
                                    " and divide the " + std::to_string(p.gpus()) + " GPUs (tp x dp)");
      if (static_cast<int>(g.experts.value) % p.ep != 0)
        throw std::invalid_argument("ep=" + std::to_string(p.ep) + " does not divide the " +
                                    std::to_string(static_cast<int>(g.experts.value)) + " routed experts");
    }
  }
  if (p.ep > 1 && !m.first(LayerType::moe)) throw std::invalid_argument("ep > 1 needs MoE layers; " + m.name + " has none");
}

double weight_bytes_per_gpu(const DeployModel& m, const Parallel& p, WeightDtype wd, double* experts_part) {
  const double h = m.hidden(), d = m.attn.head_dim.value, q = m.attn.q_heads.value;
  const double kv_rank = m.attn.per_rank(p.tp).kv_heads;  // replicated beyond kv_heads ranks
  const double tp = p.tp;
  double params = 0, experts = 0;
  for (const auto& g : m.layers) {
    const double n = v(g.count);
    switch (g.type) {
      case LayerType::global_attention:
      case LayerType::sliding_attention:
        params += n * (2 * h * q * d / tp + 2 * h * kv_rank * d + h);
        break;
      case LayerType::mamba: params += n * mamba_params(g, h) / tp; break;
      case LayerType::moe: {
        const double routed = v(g.experts) * mats(g) * expert_dim(g, h) * v(g.intermediate);
        const double shards = p.ep > 1 ? p.ep : tp;
        experts += n * routed / shards;
        const double latent_proj = v(g.latent) > 0 ? 2 * h * v(g.latent) : 0.0;
        params += n * (h * v(g.experts) + h + (v(g.shared) * mats(g) * h * v(g.shared_intermediate) + latent_proj) / tp);
        break;
      }
      case LayerType::mlp: params += n * (mats(g) * h * v(g.intermediate) / tp + h); break;
    }
  }
  params += v(m.vocab) * h / tp * (m.tied_embeddings ? 1.0 : 2.0);
  const double b = weight_bytes_per_param(wd);
  if (experts_part) *experts_part = experts * b;
  return (params + experts) * b;
}

double kv_bytes_per_token_global(const DeployModel& m, int tp, Dtype kv_dtype) {
  const Geometry g = m.attn.per_rank(tp);
  return m.count(LayerType::global_attention) * g.kv_heads * g.head_dim * 2.0 * dtype_bytes(kv_dtype);
}

namespace {
std::int64_t paged(std::int64_t tokens, int c) { return (tokens + c - 1) / c * c; }
}  // namespace

double kv_bytes_per_seq(const DeployModel& m, int tp, Dtype kv_dtype, std::int64_t tokens, int chunk_tokens) {
  const Geometry g = m.attn.per_rank(tp);
  const double per_token_layer = g.kv_heads * g.head_dim * 2.0 * dtype_bytes(kv_dtype);
  double bytes = m.count(LayerType::global_attention) * per_token_layer * static_cast<double>(paged(tokens, chunk_tokens));
  for (const auto& lg : m.layers)
    if (lg.type == LayerType::sliding_attention) {
      // the window plus the partly filled pages at both of its ends
      const std::int64_t w = static_cast<std::int64_t>(lg.window.value);
      const std::int64_t held = std::min(paged(tokens, chunk_tokens), paged(w, chunk_tokens) + chunk_tokens);
      bytes += lg.n() * per_token_layer * static_cast<double>(held);
    }
  return bytes;
}

double rep_bytes_per_seq(const DeployModel& m, int tp, std::int64_t tokens, const CacheShape& cs) {
  const Geometry g = m.attn.per_rank(tp);
  const double dr = cs.rep_dim > 0 ? cs.rep_dim : g.head_dim;
  const double full_chunks = static_cast<double>(tokens / cs.chunk_tokens);
  return m.count(LayerType::global_attention) * g.kv_heads * full_chunks * dr * dtype_bytes(cs.rep_dtype) *
         (cs.minmax ? 2.0 : 1.0);
}

double ssm_bytes_per_seq(const DeployModel& m, int tp) {
  double bytes = 0;
  for (const auto& g : m.layers)
    if (g.type == LayerType::mamba) {
      const double d_inner = v(g.heads) * v(g.head_dim);
      const double ssm = d_inner * v(g.state) * 4.0;                                   // fp32 SSM state
      const double conv = (d_inner + 2 * v(g.groups) * v(g.state)) * (v(g.conv) - 1) * 2.0;  // bf16 conv window
      bytes += g.n() * (ssm + conv) / tp;
    }
  return bytes;
}

double workspace_estimate(const DeployModel& m, const Parallel& p, std::int64_t max_batched_tokens) {
  // EST: per batched token, ~8 hidden-wide bf16 buffers (residual, norm, attention/mixer out,
  // all-reduce staging) + the widest per-GPU intermediate x 3 (gate, up, activation) + fp32 logits
  // for up to 1,024 rows. Not a measurement: set memory.workspace_gb to override.
  const double h = m.hidden(), tp = p.tp;
  double widest = (m.attn.q_heads.value + 2 * m.attn.kv_heads.value) * m.attn.head_dim.value / tp;
  for (const auto& g : m.layers) {
    if (g.type == LayerType::mlp) widest = std::max(widest, (g.gated ? 2 : 1) * v(g.intermediate) / tp);
    if (g.type == LayerType::moe)
      widest = std::max(widest, (v(g.active) * v(g.intermediate) + v(g.shared) * v(g.shared_intermediate)) / tp);
    if (g.type == LayerType::mamba)
      widest = std::max(widest, (2 * v(g.heads) * v(g.head_dim) + 2 * v(g.groups) * v(g.state)) / tp);
  }
  const double tokens = static_cast<double>(max_batched_tokens);
  const double logit_rows = std::min(tokens, 1024.0);
  return tokens * (8 * h + 3 * widest) * 2.0 + logit_rows * v(m.vocab) / tp * 4.0;
}

MemoryPlan plan_memory(const DeployModel& m, const Parallel& p, const Hardware& hw, WeightDtype wd, Dtype kv_dtype,
                       const CacheShape& cs, std::int64_t seq_tokens, const MemoryOptions& opt) {
  validate_parallel(m, p);
  MemoryPlan mp;
  mp.hbm = hw.hbm_gb.value * 1e9;
  mp.weights = weight_bytes_per_gpu(m, p, wd, &mp.weights_experts);
  mp.workspace = opt.workspace_bytes >= 0 ? opt.workspace_bytes : workspace_estimate(m, p, opt.max_batched_tokens);
  mp.reserve = opt.reserve_fraction * mp.hbm + opt.reserve_bytes;
  mp.free_for_cache = mp.hbm - mp.weights - mp.workspace - mp.reserve;
  const Geometry g = m.attn.per_rank(p.tp);
  const double per_token_layer = g.kv_heads * g.head_dim * 2.0 * dtype_bytes(kv_dtype);
  mp.kv_per_seq = kv_bytes_per_seq(m, p.tp, kv_dtype, seq_tokens, cs.chunk_tokens);
  mp.kv_global_per_seq = m.count(LayerType::global_attention) * per_token_layer *
                         static_cast<double>(paged(seq_tokens, cs.chunk_tokens));
  mp.kv_sliding_per_seq = mp.kv_per_seq - mp.kv_global_per_seq;
  mp.rep_per_seq = rep_bytes_per_seq(m, p.tp, seq_tokens, cs);
  mp.ssm_per_seq = ssm_bytes_per_seq(m, p.tp);
  const auto gb = [](double b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GB", b / 1e9);
    return std::string(buf);
  };
  if (mp.free_for_cache <= 0) {
    mp.weights_fit = false;
    mp.reason = "does not fit: weights " + gb(mp.weights) + " (" + to_string(wd) + ", tp=" + std::to_string(p.tp) +
                ", ep=" + std::to_string(p.ep) + ") + workspace " + gb(mp.workspace) + " + reserve " + gb(mp.reserve) +
                " exceed the " + gb(mp.hbm) + " of HBM per GPU on " + hw.display_name +
                "; raise tp/ep, use fp8/nvfp4 weights or a larger GPU";
    return mp;
  }
  mp.weights_fit = true;
  mp.max_seqs_dense = floor_to_i64(mp.free_for_cache / mp.seq_dense(), "max concurrency (dense)");
  mp.max_seqs_cisa = floor_to_i64(mp.free_for_cache / mp.seq_cisa(), "max concurrency (CISA)");
  if (mp.max_seqs_dense < 1)
    mp.reason = "does not fit: one sequence of " + std::to_string(seq_tokens) + " tokens needs " + gb(mp.seq_dense()) +
                " per GPU (K/V " + gb(mp.kv_per_seq) + ", SSM state " + gb(mp.ssm_per_seq) + ") but only " +
                gb(mp.free_for_cache) + " is left after weights, workspace and reserve; raise tp or shorten the context";
  else if (mp.max_seqs_cisa < 1)
    mp.reason = "does not fit with CISA: one sequence needs " + gb(mp.seq_cisa()) + " per GPU incl. representatives " +
                gb(mp.rep_per_seq) + " but only " + gb(mp.free_for_cache) + " is left";
  return mp;
}

}  // namespace cisa::plan
