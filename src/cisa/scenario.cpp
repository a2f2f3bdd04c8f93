#include "cisa/scenario.hpp"

#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "cisa/embedded.hpp"
#include "cisa/plausibility.hpp"
#include "cisa/presets.hpp"
#include "model/pricing.hpp"
#include "cisa/scenario_source.hpp"
#include "cisa/yaml_util.hpp"
#include "design/design_yaml.hpp"

namespace cisa {

std::string default_scenario_path() { return "scenarios/ultra_tp2_1m.yaml"; }

namespace {

const std::vector<std::string> kTopKeys = {"name",     "description", "model", "tp",   "hardware",
                                           "basis",    "geometry",    "cisa",  "workload", "sweep",
                                           "measure", "implementation", "design", "design_budget"};
const std::vector<std::string> kCisaKeys = {"chunk",    "window",    "budget",   "G",
                                            "kv_dtype", "rep_dtype", "rep_dim",  "rep_kind",
                                            "score_agg", "selection_overlap"};
const std::vector<std::string> kWorkloadKeys = {"phase", "context", "batch", "prefill_tokens", "mtp_tokens"};
const std::vector<std::string> kGeometryKeys = {"q_heads", "kv_heads", "head_dim", "hidden"};

int to_int(const YamlDoc& doc, const YAML::Node& n, const std::string& field) {
  const std::int64_t v = get_int(doc, n, field);
  if (v < -2147483647 || v > 2147483647) throw InputError(locate(doc, n, field), "value out of range");
  return static_cast<int>(v);
}

template <class F>
auto parse_enum(const YamlDoc& doc, const YAML::Node& n, const std::string& field, F parse) {
  const std::string s = get_string(doc, n, field);
  try {
    return parse(s);
  } catch (const std::invalid_argument& e) {
    throw InputError(locate(doc, n, field), e.what());
  }
}

// A setter applies one value of a key to a point; the sweep and the base block share them.
using Setter = std::function<void(Point&)>;

Setter make_setter(const YamlDoc& doc, const std::string& key, const YAML::Node& v,
                   const std::string& field) {
  check_scenario_value(doc, key, v, field);  // each value, also a base value a sweep overrides
  if (key == "chunk") { int x = to_int(doc, v, field); return [x](Point& p) { p.cisa.chunk_tokens = x; }; }
  if (key == "window") { int x = to_int(doc, v, field); return [x](Point& p) { p.cisa.window_pages = x; }; }
  if (key == "budget") { auto x = get_int(doc, v, field); return [x](Point& p) { p.cisa.budget_chunks = x; }; }
  if (key == "G") { int x = to_int(doc, v, field); return [x](Point& p) { p.cisa.qshare_g = x; }; }
  if (key == "kv_dtype") { auto x = parse_enum(doc, v, field, parse_dtype); return [x](Point& p) { p.cisa.kv_dtype = x; }; }
  if (key == "rep_dtype") { auto x = parse_enum(doc, v, field, parse_dtype); return [x](Point& p) { p.cisa.rep_dtype = x; }; }
  if (key == "rep_dim") { int x = to_int(doc, v, field); return [x](Point& p) { p.cisa.rep_dim = x; }; }
  if (key == "rep_kind") { auto x = parse_enum(doc, v, field, parse_rep_kind); return [x](Point& p) { p.cisa.rep_kind = x; }; }
  if (key == "score_agg") { auto x = parse_enum(doc, v, field, parse_score_agg); return [x](Point& p) { p.cisa.score_agg = x; }; }
  if (key == "selection_overlap") { double x = get_double(doc, v, field); return [x](Point& p) { p.cisa.selection_overlap = x; }; }
  if (key == "phase") { auto x = parse_enum(doc, v, field, parse_phase); return [x](Point& p) { p.work.phase = x; }; }
  if (key == "context") { auto x = get_int(doc, v, field); return [x](Point& p) { p.work.context_tokens = x; }; }
  if (key == "batch") { int x = to_int(doc, v, field); return [x](Point& p) { p.work.batch = x; }; }
  if (key == "prefill_tokens") { int x = to_int(doc, v, field); return [x](Point& p) { p.work.prefill_tokens = x; }; }
  if (key == "mtp_tokens") { int x = to_int(doc, v, field); return [x](Point& p) { p.work.mtp_tokens = x; }; }
  if (key == "q_heads") { int x = to_int(doc, v, field); return [x](Point& p) { p.geo.q_heads = x; }; }
  if (key == "kv_heads") { int x = to_int(doc, v, field); return [x](Point& p) { p.geo.kv_heads = x; }; }
  if (key == "head_dim") { int x = to_int(doc, v, field); return [x](Point& p) { p.geo.head_dim = x; }; }
  if (key == "hidden") { int x = to_int(doc, v, field); return [x](Point& p) { p.geo.hidden = x; }; }
  if (key == "dense_impl") { auto x = get_string(doc, v, field); return [x](Point& p) { p.dense_impl = x; }; }
  if (key == "cisa_impl") { auto x = get_string(doc, v, field); return [x](Point& p) { p.cisa_impl = x; }; }
  throw std::logic_error("no setter for " + key);
}

const std::vector<std::string> kSweepKeys = {
    "context", "budget",   "G",         "batch",    "phase",     "prefill_tokens", "mtp_tokens",
    "q_heads", "kv_heads", "head_dim",  "hidden",   "chunk",     "window",         "kv_dtype",
    "rep_dtype", "rep_dim", "rep_kind", "score_agg", "selection_overlap", "hardware", "dense_impl", "cisa_impl", "design", "zip"};

std::string point_key(const Point& p) {
  std::ostringstream o;
  o << p.hardware << '|' << p.geo.q_heads << '|' << p.geo.kv_heads << '|' << p.geo.head_dim << '|'
    << p.geo.hidden << '|' << p.cisa.chunk_tokens << '|' << p.cisa.window_pages << '|'
    << p.cisa.budget_chunks << '|' << p.cisa.qshare_g << '|' << to_string(p.cisa.kv_dtype) << '|'
    << to_string(p.cisa.rep_dtype) << '|' << p.cisa.rep_dim << '|' << to_string(p.cisa.rep_kind)
    << '|' << to_string(p.cisa.score_agg) << '|' << p.cisa.selection_overlap << '|'
    << to_string(p.work.phase) << '|' << p.work.context_tokens << '|' << p.work.batch << '|'
    << p.work.prefill_tokens << '|' << p.work.mtp_tokens << '|' << p.dense_impl << '|' << p.cisa_impl << '|'
    << p.design;
  return o.str();
}

// Every shipped card and profile (transfer sources, "best" candidates), the scenario's own cards,
// and profile files its implementation names point at; then each point's implementations are
// checked on its card, so a bad name or a missing figure stops the run here (exit 2).
void load_implementations(const YamlDoc& doc, Scenario& sc) {
  sc.cards = shipped_cards();
  for (const auto& [name, hw] : sc.gpus) sc.cards[name] = hw;
  sc.impls = shipped_impls();
  const YAML::Node im = doc.root["implementation"];
  const YAML::Node where = im ? im : doc.root;
  std::map<std::string, std::string> file_to_name;
  for (Point& p : sc.points)
    for (std::string* name : {&p.dense_impl, &p.cisa_impl}) {
      const std::string s = *name;
      if (s.find('/') == std::string::npos && (s.size() < 5 || s.substr(s.size() - 5) != ".yaml")) continue;
      if (!file_to_name.count(s)) {
        const YamlDoc f = load_yaml_file(s);
        ImplProfile prof = parse_impl(f, f.root, "");
        file_to_name[s] = prof.name;
        sc.impls[prof.name] = std::move(prof);
      }
      *name = file_to_name[s];
    }
  Pricer pricer(sc.cards, sc.impls, sc.basis);
  std::set<std::string> checked;
  for (const Point& p : sc.points) {
    if (!checked.insert(p.hardware + "|" + p.dense_impl + "|" + p.cisa_impl).second) continue;
    try {
      pricer.for_point(p);
    } catch (const std::invalid_argument& e) {
      throw InputError(locate(doc, where, "implementation"), std::string(e.what()) + " (GPU " + p.hardware + ")");
    }
  }
}

}  // namespace

Scenario load_scenario(const std::string& source, const std::vector<std::string>& sets) {
  YamlDoc doc;
  if (source.empty()) {
    const auto text = embedded_text(default_scenario_path());
    if (!text) throw std::logic_error("default scenario not embedded");
    doc = parse_yaml(*text, "<embedded>/" + default_scenario_path());
  } else {
    doc = resolve_scenario(source, "run");  // a path, else a shipped name
  }
  Scenario sc;
  sc.file = doc.file;
  sc.text = doc.text;
  sc.overrides = sets;
  sc.effective_yaml = apply_overrides(doc, sets);
  const YAML::Node& root = doc.root;
  require_keys_known(doc, root, "", kTopKeys);
  sc.name = root["name"] ? get_string(doc, root["name"], "name") : "scenario";
  sc.description = root["description"] ? get_string(doc, root["description"], "description") : "";
  if (root["basis"]) sc.basis = parse_enum(doc, root["basis"], "basis", parse_basis);

  // Geometry: from the model preset at tp, then any per-rank overrides under geometry:.
  Point base;
  if (!root["hardware"]) throw InputError(locate(doc, root, "hardware"), "missing 'hardware' (a GPU preset name, a file, or an inline mapping)");
  {
    Hardware hw = resolve_hardware(doc, root["hardware"], "hardware");
    base.hardware = hw.name;
    sc.gpus[hw.name] = hw;
  }
  if (root["model"]) {
    const ModelPreset m = resolve_model(doc, root["model"], "model");
    int tp = static_cast<int>(m.default_tp.value);
    if (root["tp"]) tp = to_int(doc, root["tp"], "tp");
    try {
      base.geo = m.per_rank(tp);
    } catch (const std::invalid_argument& e) {
      throw InputError(locate(doc, root["tp"] ? root["tp"] : root["model"], "tp"), e.what());
    }
    base.model = m.name + (tp > 1 ? "@tp" + std::to_string(tp) : "");
  } else if (!root["geometry"]) {
    throw InputError(locate(doc, root, "model"), "give a 'model' preset or a 'geometry' block (q_heads, kv_heads, head_dim)");
  } else if (root["tp"]) {
    throw InputError(locate(doc, root["tp"], "tp"), "'tp' needs a 'model' preset (geometry: is already per rank)");
  }
  auto apply_block = [&](const char* block, const std::vector<std::string>& keys) {
    const YAML::Node n = root[block];
    if (!n) return;
    require_keys_known(doc, n, block, keys);
    for (const auto& kv : n) {
      const std::string k = kv.first.as<std::string>();
      make_setter(doc, k, kv.second, std::string(block) + "." + k)(base);
    }
  };
  if (const YAML::Node im = root["implementation"]) {
    // implementation: {dense: NAME|best, cisa: NAME|auto}; a NAME may be a profile file (path).
    require_keys_known(doc, im, "implementation", {"dense", "cisa"});
    if (im["dense"]) base.dense_impl = get_string(doc, im["dense"], "implementation.dense");
    if (im["cisa"]) base.cisa_impl = get_string(doc, im["cisa"], "implementation.cisa");
  }
  apply_block("geometry", kGeometryKeys);
  apply_block("cisa", kCisaKeys);
  apply_block("workload", kWorkloadKeys);

  // design: NAME (models/design/NAME.yaml, embedded) or FILE (beside the scenario first); "cisa"
  // keeps the CISA model. Each design is loaded once; its first mention is where errors point.
  std::map<std::string, YAML::Node> design_nodes;
  auto design_setter = [&](const YAML::Node& n, const std::string& field) -> Setter {
    const std::string name = get_string(doc, n, field);
    sc.design_column = true;
    if (name != "cisa" && !sc.designs.count(name)) {
      const bool is_path = name.find('/') != std::string::npos ||
                           (name.size() > 5 && name.substr(name.size() - 5) == ".yaml");
      if (is_path) {
        sc.designs[name] = design::parse_design(load_referenced_yaml(doc, n, field, name));
      } else {
        try {
          sc.designs[name] = design::load_design(name);
        } catch (const InputError& e) {
          if (!e.where().file.empty()) throw;
          throw InputError(locate(doc, n, field), e.what());
        }
      }
      design_nodes[name] = n;
    }
    return [name](Point& p) { p.design = name; };
  };
  if (root["design"]) design_setter(root["design"], "design")(base);
  if (const YAML::Node db = root["design_budget"]) {
    const std::string b = get_string(doc, db, "design_budget");
    if (b != "equal" && b != "own")
      throw InputError(locate(doc, db, "design_budget"),
                       "must be 'equal' (every design selects K x c tokens) or 'own' (each design's budget_tokens)");
    sc.design_equal_budget = b == "equal";
  }

  // Sweep: Cartesian product of the listed keys; keys under zip: vary together.
  std::vector<std::vector<std::vector<Setter>>> axes;  // axis -> value index -> setters
  std::vector<std::string> axis_fields;
  if (const YAML::Node sw = root["sweep"]) {
    require_keys_known(doc, sw, "sweep", kSweepKeys);
    auto values_of = [&](const YAML::Node& list, const std::string& key, const std::string& field) {
      if (!list.IsSequence() || list.size() == 0)
        throw InputError(locate(doc, list, field), "expected a non-empty list, e.g. [1, 4, 16]");
      std::vector<Setter> out;
      if (key == "design") {
        for (std::size_t i = 0; i < list.size(); ++i)
          out.push_back(design_setter(list[i], field + "[" + std::to_string(i) + "]"));
        return out;
      }
      if (key == "hardware") {
        for (std::size_t i = 0; i < list.size(); ++i) {
          Hardware hw = resolve_hardware(doc, list[i], field + "[" + std::to_string(i) + "]");
          const std::string name = hw.name;
          sc.gpus[name] = hw;
          out.push_back([name](Point& p) { p.hardware = name; });
        }
        return out;
      }
      for (std::size_t i = 0; i < list.size(); ++i)
        out.push_back(make_setter(doc, key, list[i], field + "[" + std::to_string(i) + "]"));
      return out;
    };
    for (const auto& kv : sw) {
      const std::string key = kv.first.as<std::string>();
      if (key == "zip") {
        require_keys_known(doc, kv.second, "sweep.zip", std::vector<std::string>(kSweepKeys.begin(), kSweepKeys.end() - 1));
        std::vector<std::vector<Setter>> cols;
        std::size_t len = 0;
        for (const auto& z : kv.second) {
          const std::string zk = z.first.as<std::string>();
          cols.push_back(values_of(z.second, zk, "sweep.zip." + zk));
          if (len != 0 && cols.back().size() != len)
            throw InputError(locate(doc, z.second, "sweep.zip." + zk),
                             "zip lists must have equal lengths (" + std::to_string(len) + " vs " +
                                 std::to_string(cols.back().size()) + ")");
          len = cols.back().size();
        }
        std::vector<std::vector<Setter>> axis(len);
        for (std::size_t i = 0; i < len; ++i)
          for (auto& col : cols) axis[i].push_back(col[i]);
        axes.push_back(axis);
        axis_fields.push_back("sweep.zip");
      } else {
        std::vector<std::vector<Setter>> axis;
        for (auto& s : values_of(kv.second, key, "sweep." + key)) axis.push_back({s});
        axes.push_back(axis);
        axis_fields.push_back("sweep." + key);
      }
    }
  }
  std::size_t total = 1;
  for (const auto& a : axes) {
    total *= a.size();
    if (total > 50'000'000) throw InputError(locate(doc, root["sweep"], "sweep"), "sweep has more than 5e7 points");
  }
  check_sweep_memory(total, 1, doc.file, kBytesPerExpandedPoint);  // before expanding anything
  std::set<std::string> seen;
  std::vector<std::size_t> idx(axes.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    Point p = base;
    for (std::size_t a = 0; a < axes.size(); ++a)
      for (const auto& s : axes[a][idx[a]]) s(p);
    if (p.work.phase == Phase::decode) p.cisa.qshare_g = 1;  // decode has one position
    if (p.work.phase == Phase::mtp) p.cisa.qshare_g = p.work.mtp_tokens;
    try {
      validate_point(p);
    } catch (const std::invalid_argument& e) {
      std::string msg = e.what();
      const std::string field = msg.substr(0, msg.find(':'));
      msg = msg.substr(msg.find(':') + 2);
      YAML::Node where = root;
      if (!axes.empty()) {
        msg += " (in the sweep point";
        for (std::size_t a = 0; a < axes.size(); ++a) msg += " " + axis_fields[a] + "[" + std::to_string(idx[a]) + "]";
        msg += ")";
      }
      // Point at the block that sets the field when it exists.
      const auto dot = field.find('.');
      if (dot != std::string::npos && root[field.substr(0, dot)] && root[field.substr(0, dot)].IsMap()) {
        const YAML::Node blk = root[field.substr(0, dot)];
        const std::string leaf = field.substr(dot + 1);
        where = blk[leaf] ? blk[leaf] : blk;
      }
      throw InputError(locate(doc, where, field), msg);
    }
    if (p.design != "cisa") {  // the design must fit the point (e.g. a budget of whole units)
      try {
        design::resolve(sc.designs.at(p.design), p.geo, p.cisa, effective_qshare(p.cisa, p.work),
                        sc.design_equal_budget);
      } catch (const std::invalid_argument& e) {
        std::string msg = "design '" + p.design + "' at this point: " + e.what();
        if (!axes.empty()) {
          msg += " (in the sweep point";
          for (std::size_t a = 0; a < axes.size(); ++a) msg += " " + axis_fields[a] + "[" + std::to_string(idx[a]) + "]";
          msg += ")";
        }
        throw InputError(locate(doc, design_nodes.at(p.design), "design"), msg);
      }
    }
    if (seen.insert(point_key(p)).second)
      sc.points.push_back(p);
    else
      ++sc.duplicates_collapsed;
    for (std::size_t a = axes.size(); a-- > 0;) {  // odometer, last axis fastest
      if (++idx[a] < axes[a].size()) break;
      idx[a] = 0;
    }
  }
  // measure: how --measure builds its synthetic inputs (the model itself does not read it).
  if (const YAML::Node m = root["measure"]) {
    require_keys_known(doc, m, "measure", {"inputs"});
    if (m["inputs"]) {
      sc.measure_inputs = get_string(doc, m["inputs"], "measure.inputs");
      if (sc.measure_inputs != "random" && sc.measure_inputs != "planted")
        throw InputError(locate(doc, m["inputs"], "measure.inputs"), "expected random or planted, got '" + sc.measure_inputs + "'");
      if (sc.measure_inputs == "planted")
        for (const Point& p : sc.points)
          if (!(p.cisa.selection_overlap > 0))
            throw InputError(locate(doc, m["inputs"], "measure.inputs"),
                             "planted inputs plant round(selection_overlap x K) high-score pages per sequence; "
                             "set cisa.selection_overlap > 0 (e.g. 0.5) for every point");
    }
  }
  for (const auto& [name, hw] : sc.gpus)
    if (sc.basis == Basis::calibrated && !hw.has_card)
      throw InputError(locate(doc, root["basis"] ? root["basis"] : root["hardware"], "basis"),
                       "GPU '" + name + "' has no card bench (`card:` in its preset: a calibration file or "
                       "{transfer_from: <measured card>}); or set basis: speed_of_light");
  load_implementations(doc, sc);
  return sc;
}

}  // namespace cisa
