#include "design/design_yaml.hpp"

#include <filesystem>

#include "cisa/embedded.hpp"
#include "cisa/scenario_source.hpp"

namespace cisa::design {

namespace {

const std::string kDesignDir = "models/design/";

// An integer field that may say "scenario" (take the scenario's setting: returns `fallback`).
std::int64_t int_or_scenario(const YamlDoc& doc, const YAML::Node& n, const std::string& field,
                             std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
  if (n.IsScalar() && n.Scalar() == "scenario") return fallback;
  const std::int64_t v = get_int(doc, n, field);
  if (v < lo || v > hi)
    throw InputError(locate(doc, n, field), "must be 'scenario' or an integer in [" +
                                                std::to_string(lo) + ", " + std::to_string(hi) +
                                                "]");
  return v;
}

std::int64_t bounded_int(const YamlDoc& doc, const YAML::Node& n, const std::string& field,
                         std::int64_t lo, std::int64_t hi) {
  const std::int64_t v = get_int(doc, n, field);
  if (v < lo || v > hi)
    throw InputError(locate(doc, n, field), "must be an integer in [" + std::to_string(lo) + ", " +
                                                std::to_string(hi) + "]");
  return v;
}

double bounded_double(const YamlDoc& doc, const YAML::Node& n, const std::string& field, double lo,
                      double hi) {
  const double v = get_double(doc, n, field);
  if (!(v >= lo && v <= hi))
    throw InputError(locate(doc, n, field), "must be a number in [" + std::to_string(lo) + ", " +
                                                std::to_string(hi) + "]");
  return v;
}

template <typename F>
auto parse_enum_field(const YamlDoc& doc, const YAML::Node& n, const std::string& field, F parse) {
  try {
    return parse(get_string(doc, n, field));
  } catch (const std::invalid_argument& e) {
    throw InputError(locate(doc, n, field), e.what());
  }
}

constexpr std::int64_t kBig = std::int64_t{1} << 40;

void parse_selection(const YamlDoc& doc, const YAML::Node& s, Design& d) {
  require_keys_known(doc, s, "selection",
                     {"unit_tokens", "plan_scope", "plan_positions", "budget_tokens"});
  if (!s["plan_scope"])
    throw InputError(locate(doc, s, "selection.plan_scope"),
                     "missing (required: head or kv_group)");
  d.plan_scope = parse_enum_field(doc, s["plan_scope"], "selection.plan_scope", parse_plan_scope);
  if (s["unit_tokens"])
    d.unit_tokens = static_cast<int>(
        int_or_scenario(doc, s["unit_tokens"], "selection.unit_tokens", 0, 1, 1 << 20));
  if (s["plan_positions"])
    d.plan_positions = static_cast<int>(
        int_or_scenario(doc, s["plan_positions"], "selection.plan_positions", 0, 1, 1 << 20));
  if (s["budget_tokens"])
    d.budget_tokens =
        int_or_scenario(doc, s["budget_tokens"], "selection.budget_tokens", 0, 1, kBig);
}

void parse_fixed(const YamlDoc& doc, const YAML::Node& f, Design& d) {
  require_keys_known(doc, f, "fixed", {"window_tokens", "sink_tokens", "tail"});
  if (f["window_tokens"])
    d.window_tokens = int_or_scenario(doc, f["window_tokens"], "fixed.window_tokens", -1, 0, kBig);
  if (f["sink_tokens"])
    d.sink_tokens = bounded_int(doc, f["sink_tokens"], "fixed.sink_tokens", 0, kBig);
  if (f["tail"]) d.tail = get_bool(doc, f["tail"], "fixed.tail");
}

void parse_indexer(const YamlDoc& doc, const YAML::Node& x, Design& d) {
  require_keys_known(doc, x, "indexer",
                     {"kind", "vectors_per_unit", "dim", "elem_bytes", "scale_bytes", "query_heads",
                      "projection_dims", "scored_against"});
  if (!x["kind"])
    throw InputError(locate(doc, x, "indexer.kind"),
                     "missing (required: representatives, index_keys, branch_scores)");
  d.indexer = parse_enum_field(doc, x["kind"], "indexer.kind", parse_indexer_kind);
  if (x["vectors_per_unit"])
    d.index_vectors =
        static_cast<int>(bounded_int(doc, x["vectors_per_unit"], "indexer.vectors_per_unit", 1, 2));
  if (x["dim"]) {
    const YAML::Node& n = x["dim"];
    d.index_dim = (n.IsScalar() && n.Scalar() == "head_dim")
                      ? 0
                      : static_cast<int>(bounded_int(doc, n, "indexer.dim", 1, 65536));
  }
  if (x["elem_bytes"])
    d.index_elem_bytes = bounded_double(doc, x["elem_bytes"], "indexer.elem_bytes", 0.125, 8);
  if (x["scale_bytes"])
    d.index_scale_bytes = bounded_double(doc, x["scale_bytes"], "indexer.scale_bytes", 0, 64);
  if (x["query_heads"])
    d.index_query_heads =
        static_cast<int>(bounded_int(doc, x["query_heads"], "indexer.query_heads", 1, 4096));
  if (x["projection_dims"])
    d.projection_dims = static_cast<int>(
        bounded_int(doc, x["projection_dims"], "indexer.projection_dims", 0, 1 << 20));
  if (x["scored_against"]) (void)get_string(doc, x["scored_against"], "indexer.scored_against");
}

}  // namespace

Design parse_design(const YamlDoc& doc) {
  const YAML::Node& root = doc.root;
  require_keys_known(doc, root, "",
                     {"name", "summary", "source", "selection", "fixed", "indexer", "branches"});
  Design d;
  for (const char* key : {"name", "source", "selection", "indexer"})
    if (!root[key]) throw InputError(locate(doc, root, key), "missing (required)");
  d.name = get_string(doc, root["name"], "name");
  d.source = get_string(doc, root["source"], "source");
  if (root["summary"]) d.summary = get_string(doc, root["summary"], "summary");
  parse_selection(doc, root["selection"], d);
  if (root["fixed"]) parse_fixed(doc, root["fixed"], d);
  parse_indexer(doc, root["indexer"], d);
  if (root["branches"]) {
    const YAML::Node& b = root["branches"];
    require_keys_known(doc, b, "branches", {"compressed_stride"});
    if (b["compressed_stride"])
      d.compressed_stride = static_cast<int>(
          bounded_int(doc, b["compressed_stride"], "branches.compressed_stride", 0, 1 << 20));
  }
  if (d.indexer == IndexerKind::branch_scores && d.compressed_stride == 0)
    throw InputError(locate(doc, root["indexer"]["kind"], "indexer.kind"),
                     "branch_scores needs a compressed branch (branches.compressed_stride > 0)");
  return d;
}

std::vector<std::string> shipped_design_names() {
  return embedded_yaml_names(kDesignDir);
}

Design load_design(const std::string& name_or_path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(name_or_path, ec))
    return parse_design(load_yaml_file(name_or_path));
  const auto text = embedded_text(kDesignDir + name_or_path + ".yaml");
  if (!text) {
    const auto names = shipped_design_names();
    const std::string hint = did_you_mean(name_or_path, names);
    std::string all;
    for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
    throw InputError("design '" + name_or_path + "': no such file or shipped design" +
                     (hint.empty() ? "" : " (did you mean '" + hint + "'?)") + "; shipped: " + all);
  }
  return parse_design(parse_yaml(*text, "<embedded>/" + kDesignDir + name_or_path + ".yaml"));
}

DesignScenario parse_design_scenario(const YamlDoc& doc) {
  const YAML::Node& root = doc.root;
  require_keys_known(doc, root, "", {"name", "description", "designs", "budget", "runs"});
  DesignScenario sc;
  sc.file = doc.file;
  sc.text = doc.text;
  sc.name = root["name"] ? get_string(doc, root["name"], "name") : "designs";
  if (root["description"]) sc.description = get_string(doc, root["description"], "description");
  if (!root["designs"] || !root["designs"].IsSequence() || root["designs"].size() == 0)
    throw InputError(locate(doc, root["designs"] ? root["designs"] : root, "designs"),
                     "expected a non-empty list of design names or files");
  for (std::size_t i = 0; i < root["designs"].size(); ++i) {
    const YAML::Node& n = root["designs"][i];
    const std::string field = "designs[" + std::to_string(i) + "]";
    const std::string name = get_string(doc, n, field);
    const bool is_path = name.find('/') != std::string::npos ||
                         (name.size() > 5 && name.substr(name.size() - 5) == ".yaml");
    if (is_path) {  // beside the scenario first; errors read "scenario:LINE -> design:LINE"
      sc.designs.push_back(parse_design(load_referenced_yaml(doc, n, field, name)));
      continue;
    }
    try {
      sc.designs.push_back(load_design(name));
    } catch (const InputError& e) {
      if (!e.where().file.empty()) throw;
      throw InputError(locate(doc, n, field), e.what());
    }
  }
  if (root["budget"]) {
    const std::string b = get_string(doc, root["budget"], "budget");
    if (b != "equal" && b != "own")
      throw InputError(locate(doc, root["budget"], "budget"),
                       "must be 'equal' (K x c tokens each) or 'own'");
    sc.equal_budget = b == "equal";
  }
  if (!root["runs"] || !root["runs"].IsSequence() || root["runs"].size() == 0)
    throw InputError(locate(doc, root["runs"] ? root["runs"] : root, "runs"),
                     "expected a non-empty list of {scenario: NAME, sweep: {...}}");
  for (std::size_t i = 0; i < root["runs"].size(); ++i) {
    const YAML::Node& r = root["runs"][i];
    const std::string field = "runs[" + std::to_string(i) + "]";
    require_keys_known(doc, r, field, {"scenario", "sweep"});
    if (!r["scenario"]) throw InputError(locate(doc, r, field + ".scenario"), "missing (required)");
    DesignRun run{get_string(doc, r["scenario"], field + ".scenario"), {}};
    if (r["sweep"]) {
      require_map(doc, r["sweep"], field + ".sweep");
      for (const auto& kv : r["sweep"]) {
        YAML::Emitter e;
        e << YAML::Flow << kv.second;
        run.sets.push_back("sweep." + kv.first.Scalar() + "=" + e.c_str());
      }
    }
    sc.runs.push_back(run);
  }
  return sc;
}

DesignScenario load_design_scenario(const std::string& arg) {
  return parse_design_scenario(resolve_scenario(arg, "designs"));
}

}  // namespace cisa::design
