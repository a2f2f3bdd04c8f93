#include "cisa/presets.hpp"

#include <cmath>
#include <stdexcept>

#include "cisa/embedded.hpp"

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
  if (n.IsScalar()) return {get_double(doc, n, field), "given (no source)"};
  require_keys_known(doc, n, field, {"value", "source"});
  if (!n["value"]) throw InputError(locate(doc, n, field), "missing 'value'");
  Figure f{get_double(doc, n["value"], field + ".value"), "given (no source)"};
  if (n["source"]) f.source = get_string(doc, n["source"], field + ".source");
  return f;
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

Hardware parse_hardware(const YamlDoc& doc, const YAML::Node& node, const std::string& prefix) {
  require_keys_known(doc, node, prefix,
                     {"name", "display_name", "hbm_gb", "hbm_bw_tbs", "bf16_tflops", "fp8_tflops",
                      "sms", "l2_mb", "smem_per_sm_kb", "nvlink_gbs", "kernel", "calibration"});
  const auto field = [&](const std::string& k) { return prefix.empty() ? k : prefix + "." + k; };
  Hardware h;
  h.name = node["name"] ? get_string(doc, node["name"], field("name")) : "inline";
  h.display_name =
      node["display_name"] ? get_string(doc, node["display_name"], field("display_name")) : h.name;
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
  if (const YAML::Node k = node["kernel"]) {
    const std::string kp = field("kernel");
    require_keys_known(doc, k, kp,
                       {"attention_tile_rows", "score_tile_rows", "topk_radix_passes",
                        "score_pages_per_tile", "score_tiles_per_cta"});
    if (k["score_pages_per_tile"])
      h.score_pages_per_tile = positive_int(doc, k, "score_pages_per_tile", kp);
    if (k["score_tiles_per_cta"])
      h.score_tiles_per_cta = positive_int(doc, k, "score_tiles_per_cta", kp);
    if (k["attention_tile_rows"]) h.attention_tile_rows = positive_int(doc, k, "attention_tile_rows", kp);
    if (k["score_tile_rows"]) h.score_tile_rows = positive_int(doc, k, "score_tile_rows", kp);
    if (k["topk_radix_passes"]) h.topk_radix_passes = positive_int(doc, k, "topk_radix_passes", kp);
  }
  std::string cal_text;
  if (YAML::Node c = node["calibration"]) {
    std::string cp = field("calibration");
    YamlDoc cal_doc;
    const YamlDoc* cdoc = &doc;
    if (c.IsScalar()) {
      // A file written by `cisa-sim calibrate`: embedded copy first, then the file system.
      const std::string path = get_string(doc, c, cp);
      const auto text = embedded_text(path);
      try {
        cal_doc = text ? parse_yaml(*text, "<embedded>/" + path) : load_yaml_file(path);
      } catch (const InputError& e) {
        throw InputError(locate(doc, c, cp), std::string("cannot load the calibration file: ") + e.what());
      }
      require_keys_known(cal_doc, cal_doc.root, "", {"calibration"});
      c = cal_doc.root["calibration"];
      if (!c) throw InputError(locate(cal_doc, cal_doc.root, "calibration"), "missing 'calibration:' mapping");
      cdoc = &cal_doc;
      cp = "calibration";
      cal_text = "\n# --- calibration file " + cal_doc.file + "\n" + cal_doc.text;
    }
    const YamlDoc& doc_c = *cdoc;
    require_keys_known(doc_c, c, cp,
                       {"basis", "read_bw_tbs", "copy_bw_tbs", "gemm_bf16_tflops",
                        "attention_bf16_tflops", "peer_attention_bf16_tflops", "launch_overhead_us",
                        "topk_elem_passes_per_ns_per_sm", "l2_reuse", "scoring_bw_tbs", "write_bw_tbs",
                        "scoring_read_bw_tbs", "scoring_write_bw_tbs", "topk_l2_elem_passes_per_ns_per_sm",
                        "kernel_floor_us", "attention_floor_us", "scoring_floor_us", "topk_floor_us",
                        "h2d_latency_us", "h2d_bw_gbs", "attention_page_ns_m16", "attention_page_ns_m32",
                        "attention_page_ns_m64", "attention_page_ns_m128", "topk_out_ids_per_ns_per_sm", "scoring_tile_us"});
    h.has_calibration = true;
    h.cal.basis = c["basis"] ? get_string(doc_c, c["basis"], cp + ".basis") : "unspecified";
    h.cal.read_bw_tbs = get_figure(doc_c, c, "read_bw_tbs", cp);
    h.cal.copy_bw_tbs = get_figure(doc_c, c, "copy_bw_tbs", cp, false);
    h.cal.gemm_bf16_tflops = get_figure(doc_c, c, "gemm_bf16_tflops", cp);
    h.cal.attention_bf16_tflops = get_figure(doc_c, c, "attention_bf16_tflops", cp);
    h.cal.peer_attention_bf16_tflops = get_figure(doc_c, c, "peer_attention_bf16_tflops", cp, false);
    h.cal.launch_overhead_us = get_figure(doc_c, c, "launch_overhead_us", cp);
    h.cal.topk_elem_passes_per_ns_per_sm = get_figure(doc_c, c, "topk_elem_passes_per_ns_per_sm", cp);
    h.cal.l2_reuse = get_figure(doc_c, c, "l2_reuse", cp);
    h.cal.scoring_bw_tbs = get_figure(doc_c, c, "scoring_bw_tbs", cp, false);
    struct Opt { Figure* f; const char* key; };
    for (const Opt& o : {Opt{&h.cal.write_bw_tbs, "write_bw_tbs"}, Opt{&h.cal.scoring_read_bw_tbs, "scoring_read_bw_tbs"},
                         Opt{&h.cal.scoring_write_bw_tbs, "scoring_write_bw_tbs"},
                         Opt{&h.cal.topk_l2_elem_passes_per_ns_per_sm, "topk_l2_elem_passes_per_ns_per_sm"},
                         Opt{&h.cal.kernel_floor_us, "kernel_floor_us"}, Opt{&h.cal.attention_floor_us, "attention_floor_us"},
                         Opt{&h.cal.scoring_floor_us, "scoring_floor_us"}, Opt{&h.cal.topk_floor_us, "topk_floor_us"},
                         Opt{&h.cal.h2d_latency_us, "h2d_latency_us"}, Opt{&h.cal.h2d_bw_gbs, "h2d_bw_gbs"},
                         Opt{&h.cal.attention_page_ns[0], "attention_page_ns_m16"},
                         Opt{&h.cal.attention_page_ns[1], "attention_page_ns_m32"},
                         Opt{&h.cal.attention_page_ns[2], "attention_page_ns_m64"},
                         Opt{&h.cal.attention_page_ns[3], "attention_page_ns_m128"},
                         Opt{&h.cal.topk_out_ids_per_ns_per_sm, "topk_out_ids_per_ns_per_sm"},
                         Opt{&h.cal.scoring_tile_us, "scoring_tile_us"}}) {
      *o.f = get_figure(doc_c, c, o.key, cp, false);
      if (!std::isnan(o.f->value) && !(o.f->value > 0))
        throw InputError(locate(doc_c, c[o.key], cp + "." + o.key), "must be > 0 (leave it out when not measured)");
    }
    if (!(h.cal.l2_reuse.value >= 0 && h.cal.l2_reuse.value <= 1))
      throw InputError(locate(doc_c, c["l2_reuse"], cp + ".l2_reuse"), "must be in [0, 1]");
    for (const Figure* f : {&h.cal.read_bw_tbs, &h.cal.gemm_bf16_tflops, &h.cal.attention_bf16_tflops,
                            &h.cal.topk_elem_passes_per_ns_per_sm})
      if (!(f->value > 0)) throw InputError(locate(doc_c, c, cp), "calibrated rates must be > 0");
    if (!(h.cal.launch_overhead_us.value >= 0))
      throw InputError(locate(doc_c, c["launch_overhead_us"], cp + ".launch_overhead_us"), "must be >= 0");
  }
  h.yaml = doc.text + cal_text;
  return h;
}

Hardware resolve_hardware(const YamlDoc& doc, const YAML::Node& n, const std::string& field) {
  return resolve_preset<Hardware>(doc, n, field, parse_hardware, gpu_preset);
}

ModelPreset resolve_model(const YamlDoc& doc, const YAML::Node& n, const std::string& field) {
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
