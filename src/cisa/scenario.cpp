#include "cisa/scenario.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "cisa/embedded.hpp"
#include "cisa/evaluate.hpp"
#include "cisa/plausibility.hpp"
#include "cisa/presets.hpp"
#include "cisa/scenario_source.hpp"
#include "cisa/yaml_util.hpp"
#include "design/design_yaml.hpp"
#include "model/pricing.hpp"

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
using Setter = Sweep::Setter;

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
  auto resolve = [&](std::string& name) {
    const std::string s = name;
    if (s.find('/') == std::string::npos && (s.size() < 5 || s.substr(s.size() - 5) != ".yaml")) return false;
    if (!file_to_name.count(s)) {
      const YamlDoc f = load_yaml_file(s);
      ImplProfile prof = parse_impl(f, f.root, "");
      file_to_name[s] = prof.name;
      sc.impls[prof.name] = std::move(prof);
    }
    name = file_to_name[s];
    return true;
  };
  // Profile files named in the base point or a sweep value become the profiles' names.
  resolve(sc.sweep.base.dense_impl);
  resolve(sc.sweep.base.cisa_impl);
  for (auto& axis : sc.sweep.axes)
    for (auto& value : axis)
      for (auto& set : value) {
        if (set.key != "dense_impl" && set.key != "cisa_impl") continue;
        Point tmp;
        set.apply(tmp);
        std::string name = set.key == "dense_impl" ? tmp.dense_impl : tmp.cisa_impl;
        if (!resolve(name)) continue;
        if (set.key == "dense_impl")
          set.apply = [name](Point& p) { p.dense_impl = name; };
        else
          set.apply = [name](Point& p) { p.cisa_impl = name; };
      }
  sc.sweep.prepare();
  Pricer pricer(sc.cards, sc.impls, sc.basis);
  for (const Point& p : sc.sweep.impl_triples()) {
    try {
      pricer.for_point(p);
    } catch (const std::invalid_argument& e) {
      throw InputError(locate(doc, where, "implementation"), std::string(e.what()) + " (GPU " + p.hardware + ")");
    }
  }
}

// load_scenario's checks of one sweep tuple: the point's own (validate_point) and, for a design,
// that the design fits the point (e.g. a budget of whole units). What failed, or nothing.
struct TupleError {
  bool design;  // false: validate_point's "field: message"
  std::string what;
};
std::optional<TupleError> tuple_error(const Scenario& sc, const Point& p) {
  try {
    validate_point(p);
  } catch (const std::invalid_argument& e) {
    return TupleError{false, e.what()};
  }
  if (p.design == "cisa") return std::nullopt;
  try {
    design::resolve(sc.designs.at(p.design), p.geo, p.cisa, effective_qshare(p.cisa, p.work),
                    sc.design_equal_budget);
  } catch (const std::invalid_argument& e) {
    return TupleError{true, e.what()};
  }
  return std::nullopt;
}

// Sweeps of this many tuples and more are checked on several threads (all_tuples_valid).
constexpr std::size_t kParallelCheckTuples = 65536;

// Whether every tuple of the sweep passes load_scenario's checks (tuple_error), checked in ranges
// on the run's threads; `kept`: the tuples that are not duplicates. False as well when a thread
// could not start: the serial walk then decides.
bool all_tuples_valid(const Scenario& sc, std::size_t total, std::size_t& kept) {
  const unsigned threads =
      std::max<unsigned>(1, static_cast<unsigned>(std::min<std::size_t>(
                                stream_options().threads, total / (kParallelCheckTuples / 2))));
  std::vector<std::size_t> counts(threads, 0);
  std::atomic<bool> bad{false};
  auto check = [&](unsigned t) {
    const std::size_t lo = total * t / threads, hi = total * (t + 1) / threads;
    try {
      Sweep::Cursor cur(sc.sweep, lo);
      Point p;
      bool k = false;
      std::size_t n =
          0;  // counts[t] at the end: no cache line shared with the other threads' counts
      for (std::size_t i = lo; i < hi && !bad.load(std::memory_order_relaxed); ++i) {
        cur.next_tuple(p, k);
        if (tuple_error(sc, p)) {
          bad = true;
          return;
        }
        n += k;
      }
      counts[t] = n;
    } catch (...) {  // the serial walk names it (or rethrows what is not a bad point)
      bad = true;
    }
  };
  std::vector<std::thread> pool;
  try {
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(check, t);
  } catch (const std::system_error&) {
    bad = true;
  }
  check(0);
  for (auto& th : pool) th.join();
  kept = 0;
  for (std::size_t c : counts) kept += c;
  return !bad;
}

}  // namespace

Scenario load_scenario(const std::string& source, const std::vector<std::string>& sets, bool expand) {
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
  std::vector<std::vector<std::vector<Sweep::Set>>> axes;  // axis -> value index -> settings
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
        std::vector<std::string> col_keys;
        std::size_t len = 0;
        for (const auto& z : kv.second) {
          const std::string zk = z.first.as<std::string>();
          cols.push_back(values_of(z.second, zk, "sweep.zip." + zk));
          col_keys.push_back(zk);
          if (len != 0 && cols.back().size() != len)
            throw InputError(locate(doc, z.second, "sweep.zip." + zk),
                             "zip lists must have equal lengths (" + std::to_string(len) + " vs " +
                                 std::to_string(cols.back().size()) + ")");
          len = cols.back().size();
        }
        if (len == 0)  // no key: an axis of no values would empty the whole sweep
          throw InputError(locate(doc, kv.second, "sweep.zip"),
                           "expected keys with lists of equal length, e.g. {context: [131072, 262144], batch: [32, 16]}");
        std::vector<std::vector<Sweep::Set>> axis(len);
        for (std::size_t i = 0; i < len; ++i)
          for (std::size_t c = 0; c < cols.size(); ++c) axis[i].push_back({col_keys[c], cols[c][i]});
        axes.push_back(axis);
        axis_fields.push_back("sweep.zip");
      } else {
        std::vector<std::vector<Sweep::Set>> axis;
        for (auto& s : values_of(kv.second, key, "sweep." + key)) axis.push_back({Sweep::Set{key, s}});
        axes.push_back(axis);
        axis_fields.push_back("sweep." + key);
      }
    }
  }
  sc.sweep.base = base;
  sc.sweep.axes = std::move(axes);
  sc.sweep.axis_fields = axis_fields;
  sc.sweep.prepare();
  const std::size_t total = sc.sweep.tuples();
  if (total > kMaxSweepTuples)
    throw InputError(locate(doc, root["sweep"], "sweep"),
                     "sweep has more than 1e9 points: cisa-sim streams them in bounded memory, but every point "
                     "is validated before the run and evaluated at ~0.5e6 points/s on 2 cores; run it in parts "
                     "with --set on the sweep, e.g. --set sweep.context=[131072] for one context at a time");
  std::size_t n = 0;
  // Every tuple is validated, duplicates included, in sweep order; the first bad one is named. A
  // large sweep is checked on several threads first (one thread takes ~50 ms a million tuples, and
  // nothing else of the run starts before it ends); the walk below runs only when that check
  // finds a bad tuple (or is not made), and names the first one.
  if (total < kParallelCheckTuples || !all_tuples_valid(sc, total, n)) {
    Sweep::Cursor cur(sc.sweep);
    Point p;
    bool kept = false;
    n = 0;
    // " (in the sweep point sweep.x[i] ...)" for the tuple the cursor stands on.
    auto where_in_sweep = [&] {
      if (sc.sweep.axes.empty()) return std::string();
      std::string at = " (in the sweep point";
      for (std::size_t a = 0; a < sc.sweep.axes.size(); ++a)
        at += " " + axis_fields[a] + "[" + std::to_string(cur.index()[a]) + "]";
      return at + ")";
    };
    while (cur.next_tuple(p, kept)) {
      const std::optional<TupleError> bad = tuple_error(sc, p);
      if (bad && bad->design)
        throw InputError(locate(doc, design_nodes.at(p.design), "design"),
                         "design '" + p.design + "' at this point: " + bad->what + where_in_sweep());
      if (bad) {
        std::string msg = bad->what;
        const std::string field = msg.substr(0, msg.find(':'));
        msg = msg.substr(msg.find(':') + 2);
        YAML::Node where = root;
        msg += where_in_sweep();
        // Point at the block that sets the field when it exists.
        const auto dot = field.find('.');
        if (dot != std::string::npos && root[field.substr(0, dot)] && root[field.substr(0, dot)].IsMap()) {
          const YAML::Node blk = root[field.substr(0, dot)];
          const std::string leaf = field.substr(dot + 1);
          where = blk[leaf] ? blk[leaf] : blk;
        }
        throw InputError(locate(doc, where, field), msg);
      }
      n += kept;
    }
  }
  sc.point_count = n;
  sc.duplicates_collapsed = total - n;
  // measure: how --measure builds its synthetic inputs (the model itself does not read it).
  if (const YAML::Node m = root["measure"]) {
    require_keys_known(doc, m, "measure", {"inputs"});
    if (m["inputs"]) {
      sc.measure_inputs = get_string(doc, m["inputs"], "measure.inputs");
      if (sc.measure_inputs != "random" && sc.measure_inputs != "planted")
        throw InputError(locate(doc, m["inputs"], "measure.inputs"), "expected random or planted, got '" + sc.measure_inputs + "'");
      Sweep::Cursor cur(sc.sweep);
      Point p;
      if (sc.measure_inputs == "planted")
        while (cur.next(p))
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
  if (expand) {
    check_sweep_memory(sc.point_count, 1, doc.file, kBytesPerExpandedPoint);
    sc.points = expand_points(sc.sweep);
  }
  return sc;
}

// ---- the lazy sweep ----

void normalize_phase_g(Point& p) {
  if (p.work.phase == Phase::decode) p.cisa.qshare_g = 1;  // decode has one position
  if (p.work.phase == Phase::mtp) p.cisa.qshare_g = p.work.mtp_tokens;
}

std::string render_key(const Point& p, const std::string& key) {
  if (key == "hardware") return p.hardware;
  if (key == "q_heads") return std::to_string(p.geo.q_heads);
  if (key == "kv_heads") return std::to_string(p.geo.kv_heads);
  if (key == "head_dim") return std::to_string(p.geo.head_dim);
  if (key == "hidden") return std::to_string(p.geo.hidden);
  if (key == "chunk") return std::to_string(p.cisa.chunk_tokens);
  if (key == "window") return std::to_string(p.cisa.window_pages);
  if (key == "budget") return std::to_string(p.cisa.budget_chunks);
  if (key == "G") return std::to_string(p.cisa.qshare_g);
  if (key == "kv_dtype") return to_string(p.cisa.kv_dtype);
  if (key == "rep_dtype") return to_string(p.cisa.rep_dtype);
  if (key == "rep_dim") return std::to_string(p.cisa.rep_dim);
  if (key == "rep_kind") return to_string(p.cisa.rep_kind);
  if (key == "score_agg") return to_string(p.cisa.score_agg);
  if (key == "selection_overlap") {
    std::ostringstream o;  // 6 significant figures: values equal to them are duplicates
    o << p.cisa.selection_overlap;
    return o.str();
  }
  if (key == "phase") return to_string(p.work.phase);
  if (key == "context") return std::to_string(p.work.context_tokens);
  if (key == "batch") return std::to_string(p.work.batch);
  if (key == "prefill_tokens") return std::to_string(p.work.prefill_tokens);
  if (key == "mtp_tokens") return std::to_string(p.work.mtp_tokens);
  if (key == "dense_impl") return p.dense_impl;
  if (key == "cisa_impl") return p.cisa_impl;
  if (key == "design") return p.design;
  throw std::logic_error("no key " + key);
}

std::size_t Sweep::tuples() const {
  std::size_t total = 1;
  for (const auto& a : axes) {
    if (a.empty()) return 0;
    if (total > SIZE_MAX / a.size()) return SIZE_MAX;
    total *= a.size();
  }
  return total;
}

int Sweep::owner(const std::string& key) const {
  for (std::size_t a = axes.size(); a-- > 0;)
    for (const auto& set : axes[a].front())
      if (set.key == key) return static_cast<int>(a);
  return -1;
}

void Sweep::prepare() {
  first_equal_.assign(axes.size(), {});
  for (std::size_t a = 0; a < axes.size(); ++a) {
    std::vector<std::string> owned;
    for (const auto& set : axes[a].front())
      if (owner(set.key) == static_cast<int>(a)) owned.push_back(set.key);
    for (int mode = 0; mode < 2; ++mode) {  // 0: G counts; 1: decode or mtp, G does not
      std::map<std::string, std::size_t> first;
      auto& out = first_equal_[a][static_cast<std::size_t>(mode)];
      out.resize(axes[a].size());
      for (std::size_t j = 0; j < axes[a].size(); ++j) {
        Point p = base;
        for (const auto& set : axes[a][j]) set.apply(p);
        std::string key;
        for (const auto& k : owned)
          if (!(mode == 1 && k == "G")) key += render_key(p, k) + '\x1f';
        out[j] = first.emplace(key, j).first->second;
      }
    }
  }
}

bool Sweep::kept(const std::vector<std::size_t>& idx, const Point& raw) const {
  const std::size_t mode = raw.work.phase == Phase::decode || raw.work.phase == Phase::mtp ? 1 : 0;
  for (std::size_t a = 0; a < idx.size(); ++a)
    if (first_equal_[a][mode][idx[a]] != idx[a]) return false;
  return true;
}

Sweep::Cursor::Cursor(const Sweep& s) : s_(&s), idx_(s.axes.size(), 0), raw_(s.base) {
  if (s.first_equal_.size() != s.axes.size()) throw std::logic_error("Sweep::prepare() not called");
  done_ = s.tuples() == 0;
}

Sweep::Cursor::Cursor(const Sweep& s, std::size_t first) : Cursor(s) {
  if (done_) return;
  if (first >= s.tuples()) throw std::logic_error("Sweep::Cursor: tuple out of range");
  for (std::size_t a = idx_.size(); a-- > 0; first /= s.axes[a].size())  // last axis fastest
    idx_[a] = first % s.axes[a].size();
}

bool Sweep::Cursor::next_tuple(Point& p, bool& kept) {
  if (done_) return false;
  std::size_t from = 0;  // first axis whose value changed: it and every later axis are applied again
  if (started_) {
    std::size_t a = idx_.size();
    for (;;) {  // odometer, last axis fastest
      if (a == 0) {
        done_ = true;
        return false;
      }
      --a;
      if (++idx_[a] < s_->axes[a].size()) break;
      idx_[a] = 0;
    }
    from = a;
  }
  started_ = true;
  for (std::size_t a = from; a < idx_.size(); ++a)
    for (const auto& set : s_->axes[a][idx_[a]]) set.apply(raw_);
  p = raw_;
  normalize_phase_g(p);
  kept = s_->kept(idx_, raw_);
  return true;
}

bool Sweep::Cursor::next(Point& p) {
  bool kept = false;
  while (next_tuple(p, kept))
    if (kept) return true;
  return false;
}

std::vector<Point> Sweep::impl_triples() const {
  // The axes owning hardware, dense_impl and cisa_impl: their value combinations in order are
  // the triples in order of first appearance.
  std::vector<std::size_t> own;
  for (const char* k : {"hardware", "dense_impl", "cisa_impl"}) {
    const int o = owner(k);
    if (o >= 0 && std::find(own.begin(), own.end(), static_cast<std::size_t>(o)) == own.end())
      own.push_back(static_cast<std::size_t>(o));
  }
  std::sort(own.begin(), own.end());
  std::vector<Point> out;
  std::set<std::string> seen;
  std::vector<std::size_t> idx(own.size(), 0);
  for (;;) {
    Point p = base;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const auto it = std::find(own.begin(), own.end(), a);
      const std::size_t j = it == own.end() ? 0 : idx[static_cast<std::size_t>(it - own.begin())];
      for (const auto& set : axes[a][j]) set.apply(p);
    }
    normalize_phase_g(p);
    if (seen.insert(p.hardware + '\x1f' + p.dense_impl + '\x1f' + p.cisa_impl).second) out.push_back(p);
    std::size_t k = idx.size();
    for (;;) {
      if (k == 0) return out;
      --k;
      if (++idx[k] < axes[own[k]].size()) break;
      idx[k] = 0;
    }
  }
}

std::vector<std::string> Sweep::values_of(const std::string& key) const {
  const int o = owner(key);
  if (o < 0) return {render_key(base, key)};
  std::vector<std::string> out;
  for (const auto& value : axes[static_cast<std::size_t>(o)]) {
    Point p = base;
    for (const auto& set : value) set.apply(p);
    const std::string v = render_key(p, key);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

std::vector<Point> expand_points(const Sweep& sweep) {
  std::vector<Point> out;
  Sweep::Cursor cur(sweep);
  Point p;
  while (cur.next(p)) out.push_back(p);
  return out;
}

}  // namespace cisa
