#include "cisa/presets.hpp"
#include "cisa/plausibility.hpp"

#include <cmath>
#include <stdexcept>

#include "cisa/embedded.hpp"
#include "cisa/hf_config.hpp"

namespace cisa {

std::optional<std::string> embedded_text(const std::string& path) {
  for (const auto& f : embedded_files())
    if (path == f.path) return std::string(f.text);
  return std::nullopt;
}

std::vector<std::string> embedded_yaml_names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& f : embedded_files()) {
    const std::string p = f.path;
    if (p.rfind(dir, 0) == 0 && p.size() > dir.size() + 5 && p.substr(p.size() - 5) == ".yaml")
      out.push_back(p.substr(dir.size(), p.size() - dir.size() - 5));
  }
  return out;
}

namespace {

const std::string kModelDir = "models/llm/";
const std::string kGpuDir = "models/gpu/";

Figure get_figure(const YamlDoc& doc, const YAML::Node& map, const std::string& key,
                  const std::string& prefix, bool required = true) {
  return read_figure(doc, map, key, prefix,
                     required ? std::nullopt : std::optional<Figure>(Figure{std::nan(""), "NF: not given"}));
}

int positive_int(const YamlDoc& doc, const YAML::Node& map, const std::string& key,
                 const std::string& prefix) {
  const Figure f = get_figure(doc, map, key, prefix);
  if (!(f.value >= 1) || f.value != std::floor(f.value) || f.value > 1e9)
    throw InputError(locate(doc, map[key], prefix + "." + key), "must be a positive integer");
  return static_cast<int>(f.value);
}

YamlDoc embedded_doc(const std::string& path) {
  const auto text = embedded_text(path);
  if (!text) throw std::logic_error("embedded file missing: " + path);
  return parse_yaml(*text, "<embedded>/" + path);
}

[[noreturn]] void unknown_preset(const std::string& kind, const std::string& name,
                                 const std::vector<std::string>& known) {
  std::string msg = "unknown " + kind + " preset '" + name + "'";
  const std::string hint = did_you_mean(name, known);
  if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  throw InputError(msg + "; known: " + list + " (see `cisa-sim presets`)");
}

}  // namespace

Figure read_figure(const YamlDoc& doc, const YAML::Node& map, const std::string& key, const std::string& prefix,
                   const std::optional<Figure>& absent) {
  const std::string field = prefix.empty() ? key : prefix + "." + key;
  const YAML::Node n = map[key];
  if (!n) {
    if (absent) return *absent;
    throw InputError(locate(doc, map, field), "missing required field '" + key + "'");
  }
  if (n.IsScalar()) return checked_figure(doc, n, key, field, {get_double(doc, n, field), "given (no source)"});
  require_keys_known(doc, n, field, {"value", "source", "lo", "hi"});
  if (!n["value"]) throw InputError(locate(doc, n, field), "missing 'value'");
  Figure f{get_double(doc, n["value"], field + ".value"), "given (no source)"};
  if (n["source"]) f.source = get_string(doc, n["source"], field + ".source");
  if (n["lo"] || n["hi"]) {
    if (!n["lo"] || !n["hi"]) throw InputError(locate(doc, n, field), "give both 'lo' and 'hi' (the figure's range)");
    f.lo = get_double(doc, n["lo"], field + ".lo");
    f.hi = get_double(doc, n["hi"], field + ".hi");
    if (!(f.lo <= f.value && f.value <= f.hi))
      throw InputError(locate(doc, n, field), "needs lo <= value <= hi");
  }
  return checked_figure(doc, n, key, field, f);
}

Geometry ModelPreset::per_rank(int tp) const {
  const int q = static_cast<int>(q_heads.value), kv = static_cast<int>(kv_heads.value);
  if (tp < 1) throw std::invalid_argument("tp must be >= 1");
  if (q % tp != 0)
    throw std::invalid_argument("tp=" + std::to_string(tp) + " does not divide the " +
                                std::to_string(q) + " query heads of " + name);
  if (tp <= kv ? kv % tp != 0 : tp % kv != 0)
    throw std::invalid_argument("tp=" + std::to_string(tp) + " and the " + std::to_string(kv) +
                                " KV heads of " + name + " do not split evenly");
  Geometry g;
  g.q_heads = q / tp;
  g.kv_heads = tp <= kv ? kv / tp : 1;  // replicated beyond kv_heads ranks
  g.head_dim = static_cast<int>(head_dim.value);
  g.hidden = static_cast<int>(hidden.value);
  return g;
}

std::vector<std::string> model_preset_names() { return embedded_yaml_names(kModelDir); }
std::vector<std::string> gpu_preset_names() { return embedded_yaml_names(kGpuDir); }

ModelPreset parse_model(const YamlDoc& doc, const YAML::Node& node, const std::string& prefix) {
  require_keys_known(doc, node, prefix,
                     {"name", "display_name", "layers", "global_attn_layers", "hidden", "q_heads",
                      "kv_heads", "head_dim", "total_params_b", "active_params_b", "default_tp"});
  const auto field = [&](const std::string& k) { return prefix.empty() ? k : prefix + "." + k; };
  ModelPreset m;
  m.name = node["name"] ? get_string(doc, node["name"], field("name")) : "inline";
  m.display_name =
      node["display_name"] ? get_string(doc, node["display_name"], field("display_name")) : m.name;
  m.layers = get_figure(doc, node, "layers", prefix, false);
  m.global_attn_layers = get_figure(doc, node, "global_attn_layers", prefix, false);
  m.q_heads = get_figure(doc, node, "q_heads", prefix);
  m.kv_heads = get_figure(doc, node, "kv_heads", prefix);
  m.head_dim = get_figure(doc, node, "head_dim", prefix);
  for (const char* k : {"q_heads", "kv_heads", "head_dim"}) positive_int(doc, node, k, prefix);
  m.hidden = get_figure(doc, node, "hidden", prefix, false);
  if (std::isnan(m.hidden.value)) m.hidden = {m.q_heads.value * m.head_dim.value, "CALC: q_heads x head_dim"};
  m.total_params_b = get_figure(doc, node, "total_params_b", prefix, false);
  m.active_params_b = get_figure(doc, node, "active_params_b", prefix, false);
  m.default_tp = get_figure(doc, node, "default_tp", prefix, false);
  if (std::isnan(m.default_tp.value)) m.default_tp = {1, "default"};
  if (static_cast<int>(m.q_heads.value) % static_cast<int>(m.kv_heads.value) != 0)
    throw InputError(locate(doc, node["q_heads"], field("q_heads")),
                     "q_heads must be a multiple of kv_heads (GQA)");
  m.yaml = doc.text;
  return m;
}

namespace {

// The card bench block of a calibration file (`calibration: {card_name, basis, card: {...}}`).
CardBench parse_card_bench(const YamlDoc& doc, const YAML::Node& cal, const std::string& cp) {
  const YAML::Node c = cal["card"];
  if (!c) throw InputError(locate(doc, cal, cp + ".card"), "missing: the card's microbenchmarks");
  const std::string f = cp + ".card";
  require_keys_known(doc, c, f,
                     {"read_bw_tbs", "write_bw_tbs", "copy_bw_tbs", "gemm_bf16_tflops", "launch_overhead_us",
                      "kernel_floor_us", "h2d_bw_gbs", "h2d_latency_us"});
  CardBench b;
  b.basis = cal["basis"] ? get_string(doc, cal["basis"], cp + ".basis") : "unspecified";
  struct Slot {
    Figure* f;
    const char* key;
  };
  for (const Slot& s : {Slot{&b.read_bw_tbs, "read_bw_tbs"}, Slot{&b.write_bw_tbs, "write_bw_tbs"},
                        Slot{&b.copy_bw_tbs, "copy_bw_tbs"}, Slot{&b.gemm_bf16_tflops, "gemm_bf16_tflops"},
                        Slot{&b.launch_overhead_us, "launch_overhead_us"}, Slot{&b.kernel_floor_us, "kernel_floor_us"},
                        Slot{&b.h2d_bw_gbs, "h2d_bw_gbs"}, Slot{&b.h2d_latency_us, "h2d_latency_us"}}) {
    *s.f = get_figure(doc, c, s.key, f);
    if (!(s.f->value > 0) || !std::isfinite(s.f->value))
      throw InputError(locate(doc, c[s.key], f + "." + s.key), "must be a finite number > 0");
  }
  return b;
}

}  // namespace

Hardware parse_hardware(const YamlDoc& doc, const YAML::Node& node, const std::string& prefix) {
  const auto field = [&](const std::string& k) { return prefix.empty() ? k : prefix + "." + k; };
  for (const char* moved : {"kernel", "calibration"})
    if (node[moved])
      throw InputError(locate(doc, node[moved], field(moved)),
                       std::string("'") + moved +
                           "' moved: a GPU preset describes the card only (`card:` names its calibration file "
                           "or `{transfer_from: <card>}`); kernel structure and kernel-class rates live in "
                           "implementation profiles (models/impl/, `cisa-sim profiles`)");
  require_keys_known(doc, node, prefix,
                     {"name", "display_name", "arch", "hbm_gb", "hbm_bw_tbs", "bf16_tflops", "fp8_tflops", "sms",
                      "l2_mb", "smem_per_sm_kb", "nvlink_gbs", "card"});
  Hardware h;
  h.name = node["name"] ? get_string(doc, node["name"], field("name")) : "inline";
  h.display_name =
      node["display_name"] ? get_string(doc, node["display_name"], field("display_name")) : h.name;
  h.arch = node["arch"] ? get_string(doc, node["arch"], field("arch")) : "";
  h.hbm_gb = get_figure(doc, node, "hbm_gb", prefix);
  h.hbm_bw_tbs = get_figure(doc, node, "hbm_bw_tbs", prefix);
  h.bf16_tflops = get_figure(doc, node, "bf16_tflops", prefix);
  h.fp8_tflops = get_figure(doc, node, "fp8_tflops", prefix, false);
  h.sms = get_figure(doc, node, "sms", prefix);
  positive_int(doc, node, "sms", prefix);
  h.l2_mb = get_figure(doc, node, "l2_mb", prefix, false);
  h.smem_per_sm_kb = get_figure(doc, node, "smem_per_sm_kb", prefix, false);
  h.nvlink_gbs = get_figure(doc, node, "nvlink_gbs", prefix, false);
  for (const Figure* f : {&h.hbm_gb, &h.hbm_bw_tbs, &h.bf16_tflops})
    if (!(f->value > 0)) throw InputError(locate(doc, node, prefix), "capacity, bandwidth and BF16 rate must be > 0");
  std::string cal_text;
  if (const YAML::Node c = node["card"]) {
    const std::string cp = field("card");
    if (c.IsMap()) {
      require_keys_known(doc, c, cp, {"transfer_from"});
      if (!c["transfer_from"]) throw InputError(locate(doc, c, cp), "expected {transfer_from: <measured card>}");
      h.card_transfer_from = get_string(doc, c["transfer_from"], cp + ".transfer_from");
      if (h.card_transfer_from == h.name)
        throw InputError(locate(doc, c["transfer_from"], cp + ".transfer_from"), "a card cannot transfer from itself");
      Hardware from;
      try {
        from = gpu_preset(h.card_transfer_from);
      } catch (const InputError& e) {
        throw InputError(locate(doc, c["transfer_from"], cp + ".transfer_from"), e.what());
      }
      if (!from.has_card || !from.card_transfer_from.empty())
        throw InputError(locate(doc, c["transfer_from"], cp + ".transfer_from"),
                         "'" + h.card_transfer_from + "' has no measured card bench to transfer from");
      h.card = transfer_card(from, h);
      h.has_card = true;
    } else {
      // A file written by `cisa-sim calibrate`: embedded copy first, then the file system.
      const std::string path = get_string(doc, c, cp);
      const auto text = embedded_text(path);
      YamlDoc cal_doc;
      try {
        cal_doc = text ? parse_yaml(*text, "<embedded>/" + path) : load_yaml_file(path);
      } catch (const InputError& e) {
        throw InputError(locate(doc, c, cp), std::string("cannot load the calibration file: ") + e.what());
      }
      require_keys_known(cal_doc, cal_doc.root, "", {"calibration"});
      const YAML::Node cal = cal_doc.root["calibration"];
      if (!cal) throw InputError(locate(cal_doc, cal_doc.root, "calibration"), "missing 'calibration:' mapping");
      require_keys_known(cal_doc, cal, "calibration", {"card_name", "basis", "card", "implementation"});
      h.card = parse_card_bench(cal_doc, cal, "calibration");
      h.has_card = true;
      cal_text = "\n# --- calibration file " + cal_doc.file + "\n" + cal_doc.text;
    }
  }
  h.yaml = doc.text + cal_text;
  return h;
}

Hardware resolve_hardware(const YamlDoc& doc, const YAML::Node& n, const std::string& field) {
  return resolve_preset<Hardware>(doc, n, field, parse_hardware, gpu_preset);
}

ModelPreset resolve_model(const YamlDoc& doc, const YAML::Node& n, const std::string& field) {
  if (n.IsScalar() && is_hf_config_path(n.Scalar())) {  // a Hugging Face config.json (hf_config.hpp)
    const YamlDoc file = load_referenced_yaml(doc, n, field, n.Scalar());  // beside the scenario first
    const HfModel m = parse_hf_config(file.text, file.file);
    note_unused_once(m);
    return m.preset;
  }
  return resolve_preset<ModelPreset>(doc, n, field, parse_model, model_preset);
}

ModelPreset model_preset(const std::string& name) {
  const auto known = model_preset_names();
  for (const auto& k : known)
    if (k == name) {
      const YamlDoc doc = embedded_doc(kModelDir + name + ".yaml");
      return parse_model(doc, doc.root, "");
    }
  unknown_preset("model", name, known);
}

Hardware gpu_preset(const std::string& name) {
  const auto known = gpu_preset_names();
  for (const auto& k : known)
    if (k == name) {
      const YamlDoc doc = embedded_doc(kGpuDir + name + ".yaml");
      return parse_hardware(doc, doc.root, "");
    }
  unknown_preset("GPU", name, known);
}

}  // namespace cisa
