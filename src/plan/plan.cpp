#include "plan/plan.hpp"

#include "cisa/presets.hpp"
#include "model/pricing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "cisa/embedded.hpp"
#include "cisa/scenario_source.hpp"
#include "cisa/errors.hpp"
#include "cisa/evaluate.hpp"
#include "model/point.hpp"
#include "cisa/presets.hpp"
#include "cisa/version.hpp"

namespace cisa::plan {

namespace {

std::int64_t pos_int(const YamlDoc& doc, const YAML::Node& n, const std::string& field, std::int64_t lo,
                     std::int64_t hi) {
  const std::int64_t x = get_int(doc, n, field);
  if (x < lo || x > hi)
    throw InputError(locate(doc, n, field), "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                                "], got " + std::to_string(x));
  return x;
}

double num(const YamlDoc& doc, const YAML::Node& n, const std::string& field, double lo, double hi) {
  const double x = get_double(doc, n, field);
  if (!(x >= lo && x <= hi))
    throw InputError(locate(doc, n, field), fmt::format("must be in [{:g}, {:g}], got {:g}", lo, hi, x));
  return x;
}

DeployModel resolve_deploy_model(const YamlDoc& doc, const YAML::Node& n, const std::string& field) {
  return resolve_preset<DeployModel>(doc, n, field, parse_deploy_model, deploy_preset);
}

// "max" -> 0, else a positive integer
int batch_value(const YamlDoc& doc, const YAML::Node& n, const std::string& field) {
  if (n.IsScalar() && n.Scalar() == "max") return 0;
  if (n.IsScalar()) {
    try {
      return static_cast<int>(pos_int(doc, n, field, 1, 65536));
    } catch (const InputError&) {
      throw InputError(locate(doc, n, field), "expected a batch size in [1, 65536] or 'max', got '" + n.Scalar() + "'");
    }
  }
  throw InputError(locate(doc, n, field), "expected a batch size or 'max'");
}

// ep value: a positive integer or "all" (= tp x dp) -> 0
int ep_value(const YamlDoc& doc, const YAML::Node& n, const std::string& field) {
  if (n.IsScalar() && n.Scalar() == "all") return 0;
  return static_cast<int>(pos_int(doc, n, field, 1, 4096));
}

template <class T, class F>
std::vector<T> list_of(const YamlDoc& doc, const YAML::Node& n, const std::string& field, F parse) {
  std::vector<T> out;
  if (n.IsSequence()) {
    if (n.size() == 0) throw InputError(locate(doc, n, field), "expected a non-empty list");
    for (std::size_t i = 0; i < n.size(); ++i) out.push_back(parse(n[i], field + "[" + std::to_string(i) + "]"));
  } else {
    out.push_back(parse(n, field));
  }
  return out;
}

std::string describe(const PlanConfig& c) {
  std::ostringstream o;
  o << "tp=" << c.par.tp << " dp=" << c.par.dp << " ep=" << c.par.ep << " " << to_string(c.weights)
    << " context=" << c.context << " K=" << c.budget << " G=" << c.G;
  return o.str();
}

}  // namespace

PlanScenario parse_plan_scenario(YamlDoc doc, const std::vector<std::string>& sets) {
  PlanScenario sc;
  sc.file = doc.file;
  sc.text = doc.text;
  sc.overrides = sets;
  sc.effective_yaml = apply_overrides(doc, sets);
  const YAML::Node root = doc.root;
  require_keys_known(doc, root, "",
                     {"name", "description", "model", "hardware", "basis", "weights", "kv_dtype", "parallel", "cisa",
                      "workload", "memory", "comm", "constraints", "search", "implementation"});
  sc.name = root["name"] ? get_string(doc, root["name"], "name") : "plan";
  sc.description = root["description"] ? get_string(doc, root["description"], "description") : "";
  if (!root["model"])
    throw InputError(locate(doc, root, "model"),
                     "missing 'model' (a deployment model in models/deploy/, a YAML file, or an inline mapping)");
  sc.model = resolve_deploy_model(doc, root["model"], "model");
  if (!root["hardware"]) throw InputError(locate(doc, root, "hardware"), "missing 'hardware' (a GPU preset, file or mapping)");
  sc.hw = resolve_hardware(doc, root["hardware"], "hardware");
  if (root["basis"]) {
    try {
      sc.basis = parse_basis(get_string(doc, root["basis"], "basis"));
    } catch (const std::invalid_argument& e) {
      throw InputError(locate(doc, root["basis"], "basis"), e.what());
    }
  }
  if (sc.basis == Basis::calibrated && !sc.hw.has_card)
    throw InputError(locate(doc, root["hardware"], "hardware"),
                     "GPU '" + sc.hw.name + "' has no card bench (`card:` in its preset); set basis: speed_of_light");
  if (const YAML::Node im = root["implementation"]) {
    // The dense baseline S divides by (default: the best known on the card) and CISA's kernels.
    require_keys_known(doc, im, "implementation", {"dense", "cisa"});
    if (im["dense"]) sc.dense_impl = get_string(doc, im["dense"], "implementation.dense");
    if (im["cisa"]) sc.cisa_impl = get_string(doc, im["cisa"], "implementation.cisa");
  }
  try {
    (void)attention_pricing(sc);
  } catch (const std::invalid_argument& e) {
    throw InputError(locate(doc, root["implementation"] ? root["implementation"] : root["hardware"], "implementation"),
                     e.what());
  }

  PlanConfig base;
  base.weights = sc.model.weight_dtype;
  auto parse_weights = [&](const YAML::Node& n, const std::string& f) {
    try {
      return parse_weight_dtype(get_string(doc, n, f));
    } catch (const std::invalid_argument& e) {
      throw InputError(locate(doc, n, f), e.what());
    }
  };
  if (root["weights"]) base.weights = parse_weights(root["weights"], "weights");
  sc.cisa.kv_dtype = sc.model.kv_dtype;
  if (root["kv_dtype"]) {
    try {
      sc.cisa.kv_dtype = parse_dtype(get_string(doc, root["kv_dtype"], "kv_dtype"));
    } catch (const std::invalid_argument& e) {
      throw InputError(locate(doc, root["kv_dtype"], "kv_dtype"), e.what());
    }
  }
  int base_ep = 1;
  if (const YAML::Node p = root["parallel"]) {
    require_keys_known(doc, p, "parallel", {"tp", "dp", "ep"});
    if (p["tp"]) base.par.tp = static_cast<int>(pos_int(doc, p["tp"], "parallel.tp", 1, 1024));
    if (p["dp"]) base.par.dp = static_cast<int>(pos_int(doc, p["dp"], "parallel.dp", 1, 65536));
    if (p["ep"]) base_ep = ep_value(doc, p["ep"], "parallel.ep");
  } else {
    base.par.tp = static_cast<int>(sc.model.attn.default_tp.value);
  }
  base.par.ep = base_ep == 0 ? base.par.gpus() : base_ep;

  if (const YAML::Node c = root["cisa"]) {
    require_keys_known(doc, c, "cisa",
                       {"chunk", "window", "budget", "G", "rep_dtype", "rep_dim", "rep_kind", "score_agg",
                        "selection_overlap"});
    if (c["chunk"]) sc.cisa.chunk_tokens = static_cast<int>(pos_int(doc, c["chunk"], "cisa.chunk", 1, 4096));
    if (c["window"]) sc.cisa.window_pages = static_cast<int>(pos_int(doc, c["window"], "cisa.window", 0, 1 << 20));
    if (c["budget"]) base.budget = pos_int(doc, c["budget"], "cisa.budget", 1, std::int64_t{1} << 26);
    if (c["G"]) base.G = static_cast<int>(pos_int(doc, c["G"], "cisa.G", 1, 65536));
    if (c["rep_dim"]) sc.cisa.rep_dim = static_cast<int>(pos_int(doc, c["rep_dim"], "cisa.rep_dim", 0, 4096));
    if (c["selection_overlap"]) sc.cisa.selection_overlap = num(doc, c["selection_overlap"], "cisa.selection_overlap", 0, 1);
    try {
      if (c["rep_dtype"]) sc.cisa.rep_dtype = parse_dtype(get_string(doc, c["rep_dtype"], "cisa.rep_dtype"));
      if (c["rep_kind"]) sc.cisa.rep_kind = parse_rep_kind(get_string(doc, c["rep_kind"], "cisa.rep_kind"));
      if (c["score_agg"]) sc.cisa.score_agg = parse_score_agg(get_string(doc, c["score_agg"], "cisa.score_agg"));
    } catch (const std::invalid_argument& e) {
      throw InputError(locate(doc, c, "cisa"), e.what());
    }
  }
  if (const YAML::Node w = root["workload"]) {
    require_keys_known(doc, w, "workload",
                       {"context", "output_tokens", "prefill_chunk", "batch", "max_batch", "output_length_ratio",
                        "context_mix", "mtp_tokens", "mtp_accepted"});
    if (w["context"]) base.context = pos_int(doc, w["context"], "workload.context", 1, std::int64_t{1} << 31);
    if (w["output_tokens"]) sc.output_tokens = pos_int(doc, w["output_tokens"], "workload.output_tokens", 1, 1 << 24);
    if (w["prefill_chunk"])
      sc.prefill_chunk = static_cast<int>(pos_int(doc, w["prefill_chunk"], "workload.prefill_chunk", 1, 1 << 20));
    if (w["batch"]) base.batch = batch_value(doc, w["batch"], "workload.batch");
    if (w["mtp_tokens"]) sc.mtp_tokens = static_cast<int>(pos_int(doc, w["mtp_tokens"], "workload.mtp_tokens", 1, 64));
    if (w["mtp_accepted"]) {
      sc.mtp_accepted = num(doc, w["mtp_accepted"], "workload.mtp_accepted", 1, 64);
      if (sc.mtp_accepted > sc.mtp_tokens)
        throw InputError(locate(doc, w["mtp_accepted"], "workload.mtp_accepted"),
                         "tokens accepted per step cannot exceed workload.mtp_tokens (" + std::to_string(sc.mtp_tokens) + ")");
    } else if (sc.mtp_tokens > 1) {
      throw InputError(locate(doc, w["mtp_tokens"], "workload.mtp_tokens"),
                       "give workload.mtp_accepted too: mean tokens emitted per sequence per step (1..mtp_tokens)");
    }
    if (w["max_batch"]) sc.max_batch = static_cast<int>(pos_int(doc, w["max_batch"], "workload.max_batch", 1, 65536));
    if (w["output_length_ratio"])
      sc.output_length_ratio = num(doc, w["output_length_ratio"], "workload.output_length_ratio", 1e-3, 1e3);
    if (const YAML::Node mix = w["context_mix"]) {
      if (!mix.IsSequence() || mix.size() == 0)
        throw InputError(locate(doc, mix, "workload.context_mix"), "expected a list of {context: L, share: s}");
      double total = 0;
      for (std::size_t i = 0; i < mix.size(); ++i) {
        const std::string f = "workload.context_mix[" + std::to_string(i) + "]";
        require_keys_known(doc, mix[i], f, {"context", "share"});
        if (!mix[i]["context"] || !mix[i]["share"]) throw InputError(locate(doc, mix[i], f), "needs 'context' and 'share'");
        ContextShare cs{pos_int(doc, mix[i]["context"], f + ".context", 1, std::int64_t{1} << 31),
                        num(doc, mix[i]["share"], f + ".share", 0, 1e9)};
        total += cs.share;
        sc.context_mix.push_back(cs);
      }
      if (!(total > 0)) throw InputError(locate(doc, mix, "workload.context_mix"), "shares must add up to > 0");
      for (auto& cs : sc.context_mix) cs.share /= total;
    }
  }
  if (const YAML::Node m = root["memory"]) {
    require_keys_known(doc, m, "memory", {"reserve_fraction", "reserve_gb", "workspace_gb"});
    if (m["reserve_fraction"]) sc.mem.reserve_fraction = num(doc, m["reserve_fraction"], "memory.reserve_fraction", 0, 0.9);
    if (m["reserve_gb"]) sc.mem.reserve_bytes = num(doc, m["reserve_gb"], "memory.reserve_gb", 0, 1e6) * 1e9;
    if (m["workspace_gb"] && !(m["workspace_gb"].IsScalar() && m["workspace_gb"].Scalar() == "auto"))
      sc.mem.workspace_bytes = num(doc, m["workspace_gb"], "memory.workspace_gb", 0, 1e6) * 1e9;
  }
  sc.mem.max_batched_tokens = sc.prefill_chunk;
  if (const YAML::Node c = root["comm"]) {
    require_keys_known(doc, c, "comm", {"link_efficiency", "collective_latency_us"});
    if (c["link_efficiency"]) sc.comm.link_efficiency = num(doc, c["link_efficiency"], "comm.link_efficiency", 0.01, 1);
    if (c["collective_latency_us"])
      sc.comm.collective_latency_us = num(doc, c["collective_latency_us"], "comm.collective_latency_us", 0, 1e6);
  }
  if (const YAML::Node c = root["constraints"]) {
    require_keys_known(doc, c, "constraints", {"tpot_ms", "ttft_s", "gpus", "max_gpus"});
    if (c["tpot_ms"]) sc.tpot_target_ms = num(doc, c["tpot_ms"], "constraints.tpot_ms", 0, 1e9);
    if (c["ttft_s"]) sc.ttft_target_s = num(doc, c["ttft_s"], "constraints.ttft_s", 0, 1e9);
    if (c["gpus"]) sc.gpus_exact = static_cast<int>(pos_int(doc, c["gpus"], "constraints.gpus", 1, 1 << 20));
    if (c["max_gpus"]) sc.max_gpus = static_cast<int>(pos_int(doc, c["max_gpus"], "constraints.max_gpus", 1, 1 << 20));
  }

  // The scenario's own configuration must be valid: errors name the field.
  try {
    validate_parallel(sc.model, base.par);
  } catch (const std::invalid_argument& e) {
    throw InputError(locate(doc, root["parallel"] ? root["parallel"] : root, "parallel"), e.what());
  }
  if (base.G > sc.prefill_chunk)
    throw InputError(locate(doc, root["cisa"] ? root["cisa"]["G"] : root, "cisa.G"),
                     "QShare G = " + std::to_string(base.G) + " exceeds the prefill chunk of " +
                         std::to_string(sc.prefill_chunk) + " tokens");
  sc.configs.push_back(base);

  // Search: Cartesian product, each key defaults to the scenario's own value.
  if (const YAML::Node s = root["search"]) {
    require_keys_known(doc, s, "search", {"tp", "dp", "ep", "weights", "context", "budget", "G", "batch", "zip"});
    auto ints = [&](const char* key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
      if (!s[key]) return std::vector<std::int64_t>{fallback};
      return list_of<std::int64_t>(doc, s[key], std::string("search.") + key,
                                   [&](const YAML::Node& n, const std::string& f) { return pos_int(doc, n, f, lo, hi); });
    };
    const auto tps = ints("tp", base.par.tp, 1, 1024);
    const auto dps = ints("dp", base.par.dp, 1, 65536);
    const auto contexts = ints("context", base.context, 1, std::int64_t{1} << 31);
    const auto budgets = ints("budget", base.budget, 1, std::int64_t{1} << 26);
    const auto gs = ints("G", base.G, 1, 65536);
    const std::vector<int> eps =
        s["ep"] ? list_of<int>(doc, s["ep"], "search.ep", [&](const YAML::Node& n, const std::string& f) { return ep_value(doc, n, f); })
                : std::vector<int>{base_ep};
    const std::vector<int> batches =
        s["batch"] ? list_of<int>(doc, s["batch"], "search.batch",
                                  [&](const YAML::Node& n, const std::string& f) { return batch_value(doc, n, f); })
                   : std::vector<int>{base.batch};
    const std::vector<WeightDtype> wds =
        s["weights"] ? list_of<WeightDtype>(doc, s["weights"], "search.weights", parse_weights)
                     : std::vector<WeightDtype>{base.weights};
    // (context, budget, G) triples: the product of the three lists, or lists that vary together
    // under zip: (e.g. the paper's budget schedule 1,024@128K ... 4,096@1M).
    std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> lkg;
    if (const YAML::Node z = s["zip"]) {
      require_keys_known(doc, z, "search.zip", {"context", "budget", "G"});
      std::size_t n = 0;
      std::map<std::string, std::vector<std::int64_t>> lists;
      for (const auto& [key, lo, hi] : {std::tuple<const char*, std::int64_t, std::int64_t>{"context", 1, std::int64_t{1} << 31},
                                        {"budget", 1, std::int64_t{1} << 26}, {"G", 1, 65536}}) {
        if (!z[key]) continue;
        if (s[key])
          throw InputError(locate(doc, s[key], std::string("search.") + key), std::string("'") + key +
                                                                                   "' is both under search and search.zip");
        if (!z[key].IsSequence())
          throw InputError(locate(doc, z[key], std::string("search.zip.") + key), "expected a list");
        auto v = list_of<std::int64_t>(doc, z[key], std::string("search.zip.") + key,
                                       [&](const YAML::Node& nd, const std::string& f) { return pos_int(doc, nd, f, lo, hi); });
        if (n && v.size() != n)
          throw InputError(locate(doc, z[key], std::string("search.zip.") + key), "zip lists must have equal lengths");
        n = v.size();
        lists[key] = std::move(v);
      }
      if (n == 0) throw InputError(locate(doc, z, "search.zip"), "expected lists under context, budget or G");
      for (std::size_t i = 0; i < n; ++i)
        for (auto L : lists.count("context") ? std::vector<std::int64_t>{lists["context"][i]} : contexts)
          for (auto K : lists.count("budget") ? std::vector<std::int64_t>{lists["budget"][i]} : budgets)
            for (auto G : lists.count("G") ? std::vector<std::int64_t>{lists["G"][i]} : gs) lkg.emplace_back(L, K, G);
    } else {
      // Sized in floating point before anything is built: the product of long lists can wrap.
      if (static_cast<double>(contexts.size()) * static_cast<double>(budgets.size()) * static_cast<double>(gs.size()) > 200000)
        throw InputError(locate(doc, s, "search"), "the search has more than 200,000 (context, budget, G) combinations: narrow the lists");
      for (auto L : contexts)
        for (auto K : budgets)
          for (auto G : gs) lkg.emplace_back(L, K, G);
    }
    for (const auto& t : lkg)
      if (std::get<2>(t) > sc.prefill_chunk)
        throw InputError(locate(doc, s, "search.G"), "G = " + std::to_string(std::get<2>(t)) + " exceeds the prefill chunk");
    const double combos = static_cast<double>(tps.size()) * static_cast<double>(dps.size()) * static_cast<double>(eps.size()) *
                          static_cast<double>(wds.size()) * static_cast<double>(lkg.size()) * static_cast<double>(batches.size());
    if (combos > 200000)
      throw InputError(locate(doc, s, "search"), "the search has " + std::to_string(static_cast<long long>(combos)) +
                                                     " combinations (limit 200,000): narrow the lists");
    std::set<std::tuple<int, int, int, int, std::int64_t, std::int64_t, int, int>> seen;
    seen.insert({base.par.tp, base.par.dp, base.par.ep, static_cast<int>(base.weights), base.context, base.budget, base.G, base.batch});
    for (auto tp : tps)
      for (auto dp : dps)
        for (auto ep : eps)
          for (auto wd : wds)
            for (const auto& [L, K, G] : lkg)
                  for (auto B : batches) {
                    PlanConfig c;
                    c.par.tp = static_cast<int>(tp);
                    c.par.dp = static_cast<int>(dp);
                    c.par.ep = ep == 0 ? c.par.gpus() : ep;
                    c.weights = wd;
                    c.context = L;
                    c.budget = K;
                    c.G = static_cast<int>(G);
                    c.batch = B;
                    if (sc.gpus_exact && c.par.gpus() != sc.gpus_exact) continue;
                    if (sc.max_gpus && c.par.gpus() > sc.max_gpus) continue;
                    if (!seen.insert({c.par.tp, c.par.dp, c.par.ep, static_cast<int>(c.weights), c.context, c.budget, c.G, c.batch}).second)
                      continue;
                    try {
                      validate_parallel(sc.model, c.par);
                    } catch (const std::invalid_argument& e) {
                      ++sc.skipped;
                      if (sc.skipped_examples.size() < 3) sc.skipped_examples.push_back(describe(c) + ": " + e.what());
                      continue;
                    }
                    sc.configs.push_back(c);
                  }
  }
  return sc;
}

PlanScenario load_plan_scenario(const std::string& source, const std::vector<std::string>& sets) {
  if (source.rfind("embedded:", 0) == 0) {
    const std::string path = source.substr(9);
    const auto text = embedded_text(path);
    if (!text) throw InputError({source, 0, ""}, "no embedded file " + path);
    return parse_plan_scenario(parse_yaml(*text, "<embedded>/" + path), sets);
  }
  return parse_plan_scenario(resolve_scenario(source, "plan"), sets);  // a path, else a shipped name
}

// ---------------------------------------------------------------- evaluation

double replica_tokens_per_s(double prefill_s, double step_s, int batch, std::int64_t output, double accepted) {
  if (batch < 1) return kNaN;
  const double O = static_cast<double>(output);
  return O / (prefill_s + O * step_s / (batch * accepted));
}

double tpot_s(double step_s, double accepted) { return step_s / accepted; }

double loaded_tpot_s(double prefill_s, double step_s, int batch, std::int64_t output, double accepted) {
  if (batch < 1) return kNaN;
  return step_s / accepted + batch * prefill_s / static_cast<double>(output);
}

PointPricing attention_pricing(const PlanScenario& sc) {
  CardCatalog cards = shipped_cards();
  cards[sc.hw.name] = sc.hw;
  Pricer pricer(std::move(cards), shipped_impls(), sc.basis);
  Point p;
  p.hardware = sc.hw.name;
  p.dense_impl = sc.dense_impl;
  p.cisa_impl = sc.cisa_impl;
  return pricer.for_point(p);
}

std::vector<PlanRow> evaluate_plan(const PlanScenario& sc) {
  const Rates rates = card_rates(sc.hw, sc.basis);
  const PointPricing pricing = attention_pricing(sc);
  std::map<std::string, StepTimes> prefill_cache;
  std::vector<PlanRow> rows;
  rows.reserve(sc.configs.size());
  for (const PlanConfig& c : sc.configs) {
    PlanRow r;
    r.cfg = c;
    r.cache.chunk_tokens = sc.cisa.chunk_tokens;
    r.cache.rep_dim = sc.cisa.rep_dim;
    r.cache.rep_dtype = sc.cisa.rep_dtype;
    r.cache.minmax = sc.cisa.rep_kind == RepKind::minmax;
    const std::int64_t seq_tokens = c.context + sc.output_tokens;
    r.mem = plan_memory(sc.model, c.par, sc.hw, c.weights, sc.cisa.kv_dtype, r.cache, seq_tokens, sc.mem);
    if (!sc.context_mix.empty() && r.mem.weights_fit) {
      double bd = 0, bc = 0;
      for (const auto& cs : sc.context_mix) {
        const MemoryPlan mm =
            plan_memory(sc.model, c.par, sc.hw, c.weights, sc.cisa.kv_dtype, r.cache, cs.context + sc.output_tokens, sc.mem);
        bd += cs.share * mm.seq_dense();
        bc += cs.share * mm.seq_cisa();
      }
      r.mix_concurrency_dense = std::floor(r.mem.free_for_cache / bd) * c.par.dp;
      r.mix_concurrency_cisa = std::floor(r.mem.free_for_cache / bc) * c.par.dp;
    }
    auto pick = [&](std::int64_t max_seqs, std::string& reason) -> int {
      if (!r.mem.weights_fit) {
        reason = r.mem.reason;
        return 0;
      }
      if (max_seqs < 1) {
        reason = r.mem.reason;
        return 0;
      }
      if (c.batch == 0) return static_cast<int>(std::min<std::int64_t>(max_seqs, sc.max_batch));
      if (c.batch > max_seqs) {
        reason = "does not fit: batch " + std::to_string(c.batch) + " exceeds the max concurrency of " +
                 std::to_string(max_seqs) + " sequences per replica";
        return 0;
      }
      return c.batch;
    };
    r.batch_dense = pick(r.mem.max_seqs_dense, r.reason_dense);
    r.batch_cisa = pick(r.mem.max_seqs_cisa, r.reason_cisa);
    r.fits_dense = r.batch_dense > 0;
    r.fits_cisa = r.batch_cisa > 0;

    PerfInputs in;
    in.model = &sc.model;
    in.hw = &sc.hw;
    in.rates = rates;
    in.pricing = &pricing;
    in.par = c.par;
    in.weights = c.weights;
    in.cisa = sc.cisa;
    in.cisa.budget_chunks = c.budget;
    in.cisa.qshare_g = c.G;
    in.comm = sc.comm;
    if (r.fits_dense || r.fits_cisa) {
      std::ostringstream key;
      key << c.par.tp << '|' << c.par.dp << '|' << c.par.ep << '|' << static_cast<int>(c.weights) << '|' << c.context
          << '|' << c.budget << '|' << c.G;
      auto it = prefill_cache.find(key.str());
      if (it == prefill_cache.end()) it = prefill_cache.emplace(key.str(), prefill_sequence(in, c.context, sc.prefill_chunk)).first;
      r.prefill = it->second;
      const std::int64_t history = c.context + sc.output_tokens / 2;  // mean history over the output
      const double gpus_per_replica = c.par.tp;
      if (r.fits_dense) {
        r.decode_dense = decode_step(in, r.batch_dense, history, sc.mtp_tokens);
        r.ttft_s_dense = r.prefill.dense();
        r.decode_step_s_dense = r.decode_dense.dense();
        r.tpot_s_dense = tpot_s(r.decode_step_s_dense, sc.mtp_accepted);
        r.tpot_interleaved_s_dense =
            loaded_tpot_s(r.ttft_s_dense, r.decode_step_s_dense, r.batch_dense, sc.output_tokens, sc.mtp_accepted);
        r.tokens_per_s_per_user_dense = 1.0 / r.tpot_s_dense;
        r.tokens_per_s_per_gpu_dense =
            replica_tokens_per_s(r.ttft_s_dense, r.decode_step_s_dense, r.batch_dense, sc.output_tokens, sc.mtp_accepted) /
            gpus_per_replica;
      }
      if (r.fits_cisa) {
        r.decode_cisa = r.batch_cisa == r.batch_dense && r.fits_dense ? r.decode_dense : decode_step(in, r.batch_cisa, history, sc.mtp_tokens);
        r.ttft_s_cisa = r.prefill.cisa();
        r.decode_step_s_cisa = r.decode_cisa.cisa();
        r.tpot_s_cisa = tpot_s(r.decode_step_s_cisa, sc.mtp_accepted);
        r.tpot_interleaved_s_cisa =
            loaded_tpot_s(r.ttft_s_cisa, r.decode_step_s_cisa, r.batch_cisa, sc.output_tokens, sc.mtp_accepted);
        r.tokens_per_s_per_user_cisa = 1.0 / r.tpot_s_cisa;
        r.tokens_per_s_per_gpu_cisa =
            replica_tokens_per_s(r.ttft_s_cisa, r.decode_step_s_cisa, r.batch_cisa, sc.output_tokens, sc.mtp_accepted) /
            gpus_per_replica;
      }
      if (r.fits_dense && r.fits_cisa) {
        r.speedup = r.tokens_per_s_per_gpu_cisa / r.tokens_per_s_per_gpu_dense;
        if (std::isfinite(sc.output_length_ratio)) r.speedup_adj = r.speedup / sc.output_length_ratio;
      }
    }
    auto check = [&](bool fits, double tpot, double ttft_s, std::string& reason) {
      if (!fits) return false;
      if (tpot * 1e3 > sc.tpot_target_ms) {  // rounded as the tables print them
        reason = fmt::format("TPOT {:.1f} ms > target {:g} ms", tpot * 1e3, sc.tpot_target_ms);
        return false;
      }
      if (ttft_s > sc.ttft_target_s) {
        reason = fmt::format("TTFT {:.2f} s > target {:g} s", ttft_s, sc.ttft_target_s);
        return false;
      }
      return true;
    };
    r.feasible_dense = check(r.fits_dense, r.tpot_s_dense, r.ttft_s_dense, r.reason_dense);
    r.feasible_cisa = check(r.fits_cisa, r.tpot_s_cisa, r.ttft_s_cisa, r.reason_cisa);
    rows.push_back(std::move(r));
  }
  // Pareto fronts among feasible rows of the same context (throughput at different prompt lengths
  // is not comparable): no other row has >= throughput per GPU and <= TPOT, one strictly.
  auto front = [&](auto feasible, auto tps, auto tpot, auto mark) {
    std::map<std::int64_t, std::vector<std::size_t>> by_context;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (feasible(rows[i])) by_context[rows[i].cfg.context].push_back(i);
    for (auto& [L, idx] : by_context) {
      std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        return tpot(rows[a]) != tpot(rows[b]) ? tpot(rows[a]) < tpot(rows[b]) : tps(rows[a]) > tps(rows[b]);
      });
      double best = -1;
      for (std::size_t i : idx)
        if (tps(rows[i]) > best) {
          mark(rows[i]);
          best = tps(rows[i]);
        }
    }
  };
  front([](const PlanRow& r) { return r.feasible_dense; }, [](const PlanRow& r) { return r.tokens_per_s_per_gpu_dense; },
        [](const PlanRow& r) { return r.tpot_s_dense; }, [](PlanRow& r) { r.pareto_dense = true; });
  front([](const PlanRow& r) { return r.feasible_cisa; }, [](const PlanRow& r) { return r.tokens_per_s_per_gpu_cisa; },
        [](const PlanRow& r) { return r.tpot_s_cisa; }, [](PlanRow& r) { r.pareto_cisa = true; });
  return rows;
}

// ---------------------------------------------------------------- table

Table plan_table(const PlanScenario& sc, const std::vector<PlanRow>& rows) {
  Table t;
  const std::string per_gpu = " per GPU";
  auto& model = t.add_text("model", "deployment model (models/deploy/)");
  auto& hardware = t.add_text("hardware", "GPU preset");
  auto& weight_dtype = t.add_text("weight_dtype", "weight dtype: bf16 | fp8 | nvfp4");
  auto& kv_dtype = t.add_text("kv_dtype", "K/V cache dtype");
  auto& tp = t.add_i64("tp", "GPUs", "tensor parallel size (one replica = tp GPUs)");
  auto& dp = t.add_i64("dp", "replicas", "data parallel replicas");
  auto& ep = t.add_i64("ep", "GPUs", "expert parallel size (1 = routed experts TP-sharded within a replica)");
  auto& gpus = t.add_i64("gpus", "GPUs", "tp x dp");
  auto& ctx = t.add_i64("context_tokens", "tokens", "prompt length L of every request");
  auto& out = t.add_i64("output_tokens", "tokens", "output tokens per request (fixed-output throughput)");
  auto& P = t.add_i64("prefill_chunk_tokens", "tokens", "P: tokens per chunked-prefill forward");
  auto& K = t.add_i64("budget_chunks", "chunks", "K: CISA chunk budget");
  auto& G = t.add_i64("qshare_g", "positions", "G: QShare group in prefill (decode has G = 1)");
  auto& c = t.add_i64("chunk_tokens", "tokens", "c: chunk = KV page size");
  auto& W = t.add_i64("window_pages", "pages", "W: recent window always read");
  auto& mtpk = t.add_i64("mtp_tokens", "positions", "k: positions verified per sequence per decode step (1 = plain decode; CISA G = k)");
  auto& mtpa = t.add_f64("mtp_accepted", "tokens", "a: mean tokens emitted per sequence per decode step (scenario input)");
  auto& breq = t.add_i64("batch_requested", "sequences", "batch per replica asked for (0 = max concurrency)");
  auto& bd = t.add_i64("batch_dense", "sequences", "concurrent sequences per replica, dense (0 = does not fit)");
  auto& bc = t.add_i64("batch_cisa", "sequences", "concurrent sequences per replica, CISA (0 = does not fit)");
  auto& hbm = t.add_f64("hbm_bytes", "bytes", "HBM capacity" + per_gpu + " (GPU preset hbm_gb)");
  auto& mw = t.add_f64("mem_weights_bytes", "bytes", "weights" + per_gpu + " after TP/EP sharding");
  auto& mwe = t.add_f64("mem_weights_experts_bytes", "bytes", "of which routed experts" + per_gpu);
  auto& mws = t.add_f64("mem_workspace_bytes", "bytes", "activations/workspace" + per_gpu + " (estimate unless given)");
  auto& mr = t.add_f64("mem_reserve_bytes", "bytes", "framework reserve" + per_gpu);
  auto& mf = t.add_f64("mem_free_for_cache_bytes", "bytes", "HBM - weights - workspace - reserve" + per_gpu);
  auto& kvt = t.add_f64("kv_bytes_per_token", "bytes", "K+V of the global-attention layers per token" + per_gpu + " (replicated KV heads counted)");
  auto& kvs = t.add_f64("kv_bytes_per_seq", "bytes", "K/V of one sequence of context+output tokens" + per_gpu + " (global + sliding)");
  auto& reps = t.add_f64("rep_bytes_per_seq", "bytes", "CISA representatives of one sequence" + per_gpu);
  auto& ssm = t.add_f64("ssm_bytes_per_seq", "bytes", "Mamba SSM + conv state of one sequence" + per_gpu);
  auto& sd = t.add_f64("seq_bytes_dense", "bytes", "memory of one sequence" + per_gpu + ", dense");
  auto& scc = t.add_f64("seq_bytes_cisa", "bytes", "memory of one sequence" + per_gpu + ", CISA (+ representatives)");
  auto& mud = t.add_f64("mem_used_dense_bytes", "bytes", "weights + workspace + reserve + batch_dense sequences" + per_gpu);
  auto& muc = t.add_f64("mem_used_cisa_bytes", "bytes", "weights + workspace + reserve + batch_cisa sequences" + per_gpu);
  auto& mcd = t.add_i64("max_concurrency_dense", "sequences", "max concurrent sequences of context+output tokens, whole deployment (dp replicas), dense");
  auto& mcc = t.add_i64("max_concurrency_cisa", "sequences", "same with CISA representatives");
  auto& mxd = t.add_f64("max_concurrency_mix_dense", "sequences", "max concurrency for workload.context_mix (mean bytes per sequence), dense; NaN without a mix");
  auto& mxc = t.add_f64("max_concurrency_mix_cisa", "sequences", "same, CISA");
  auto& ttd = t.add_f64("ttft_ms_dense", "ms", "time to first token: chunked prefill of one prompt, isolated (no queueing), dense");
  auto& ttc = t.add_f64("ttft_ms_cisa", "ms", "same, CISA");
  auto& dsd = t.add_f64("decode_step_ms_dense", "ms", "one decode step (mtp_tokens positions per sequence) of batch_dense sequences at history context + output/2, dense");
  auto& dsc = t.add_f64("decode_step_ms_cisa", "ms", "one decode step of batch_cisa sequences, CISA");
  auto& tpd = t.add_f64("tpot_ms_dense", "ms", "TPOT: inter-token latency of a decode step, decode step / mtp_accepted (as AIConfigurator and vLLM report it), dense");
  auto& tpc = t.add_f64("tpot_ms_cisa", "ms", "same, CISA");
  auto& tid = t.add_f64("tpot_interleaved_ms_dense", "ms", "time per output token with prefill interleaved under steady load: decode step / mtp_accepted + batch x prefill / output, dense");
  auto& tic = t.add_f64("tpot_interleaved_ms_cisa", "ms", "same, CISA");
  auto& tud = t.add_f64("tokens_per_s_per_user_dense", "tokens/s", "output tokens per second one user sees: 1 / TPOT, dense");
  auto& tuc = t.add_f64("tokens_per_s_per_user_cisa", "tokens/s", "same, CISA");
  auto& tsd = t.add_f64("tokens_per_s_per_gpu_dense", "tokens/s", "output tokens per second per GPU, fixed-output requests, steady state, dense");
  auto& tsc = t.add_f64("tokens_per_s_per_gpu_cisa", "tokens/s", "same, CISA");
  auto& S = t.add_f64("speedup_throughput", "x", "S: fixed-output throughput speedup, CISA / dense tokens/s per GPU (each at its batch)");
  auto& R = t.add_f64("output_length_ratio", "x", "R: mean output length CISA / dense (scenario; NaN when not given)");
  auto& Sa = t.add_f64("speedup_throughput_adj", "x", "S_adj = S / R, verbosity-adjusted");
  auto& sttft = t.add_f64("speedup_ttft", "x", "TTFT dense / CISA");
  auto& sdec = t.add_f64("speedup_decode_step", "x", "decode step dense / CISA (each at its batch)");
  auto& pl = t.add_f64("prefill_ms_layers", "ms", "prefill of one prompt: non-attention layers (weights, GEMMs, Mamba, MoE/MLP)");
  auto& pad = t.add_f64("prefill_ms_attention_dense", "ms", "prefill: global-attention layers, dense (core model, time view)");
  auto& pac = t.add_f64("prefill_ms_attention_cisa", "ms", "prefill: global-attention layers, CISA incl. scoring/top-k/setup/other");
  auto& pas = t.add_f64("prefill_ms_attention_sliding", "ms", "prefill: sliding-window layers (dense)");
  auto& pc = t.add_f64("prefill_ms_comm", "ms", "prefill: TP all-reduce + EP all-to-all");
  auto& dld = t.add_f64("decode_ms_layers_dense", "ms", "decode step at batch_dense: non-attention layers + LM head");
  auto& dlc = t.add_f64("decode_ms_layers_cisa", "ms", "decode step at batch_cisa: non-attention layers + LM head");
  auto& dad = t.add_f64("decode_ms_attention_dense", "ms", "decode step: global attention, dense, at batch_dense");
  auto& dac = t.add_f64("decode_ms_attention_cisa", "ms", "decode step: global attention, CISA, at batch_cisa");
  auto& dasd = t.add_f64("decode_ms_attention_sliding_dense", "ms", "decode step: sliding-window layers at batch_dense");
  auto& dasc = t.add_f64("decode_ms_attention_sliding_cisa", "ms", "decode step: sliding-window layers at batch_cisa");
  auto& dcd = t.add_f64("decode_ms_comm_dense", "ms", "decode step: TP all-reduce + EP all-to-all at batch_dense");
  auto& dcc = t.add_f64("decode_ms_comm_cisa", "ms", "decode step: comm at batch_cisa");
  auto& dwb = t.add_f64("decode_weight_bytes", "bytes", "weight bytes read" + per_gpu + " per decode step at batch_cisa (touched experts only)");
  auto& fd = t.add_i64("fits_dense", "0/1", "memory fits at batch_dense");
  auto& fc = t.add_i64("fits_cisa", "0/1", "memory fits at batch_cisa");
  auto& fed = t.add_i64("feasible_dense", "0/1", "fits and meets the TPOT/TTFT targets, dense");
  auto& fec = t.add_i64("feasible_cisa", "0/1", "same, CISA");
  auto& pd = t.add_i64("pareto_dense", "0/1", "on the Pareto front of throughput per GPU vs TPOT among feasible dense rows of the same context_tokens");
  auto& pc2 = t.add_i64("pareto_cisa", "0/1", "same among feasible CISA rows");
  auto& rd = t.add_text("reason_dense", "why the dense side is infeasible (empty when feasible)");
  auto& rc = t.add_text("reason_cisa", "why the CISA side is infeasible (empty when feasible)");
  const double ms = 1e3;
  for (const PlanRow& r : rows) {
    const PlanConfig& k = r.cfg;
    model.push_back(sc.model.name);
    hardware.push_back(sc.hw.name);
    weight_dtype.push_back(to_string(k.weights));
    kv_dtype.push_back(to_string(sc.cisa.kv_dtype));
    tp.push_back(k.par.tp);
    dp.push_back(k.par.dp);
    ep.push_back(k.par.ep);
    gpus.push_back(k.par.gpus());
    ctx.push_back(k.context);
    out.push_back(sc.output_tokens);
    P.push_back(sc.prefill_chunk);
    K.push_back(k.budget);
    G.push_back(k.G);
    c.push_back(sc.cisa.chunk_tokens);
    W.push_back(sc.cisa.window_pages);
    mtpk.push_back(sc.mtp_tokens);
    mtpa.push_back(sc.mtp_accepted);
    breq.push_back(k.batch);
    bd.push_back(r.batch_dense);
    bc.push_back(r.batch_cisa);
    hbm.push_back(r.mem.hbm);
    mw.push_back(r.mem.weights);
    mwe.push_back(r.mem.weights_experts);
    mws.push_back(r.mem.workspace);
    mr.push_back(r.mem.reserve);
    mf.push_back(r.mem.free_for_cache);
    kvt.push_back(kv_bytes_per_token_global(sc.model, k.par.tp, sc.cisa.kv_dtype));
    kvs.push_back(r.mem.kv_per_seq);
    reps.push_back(r.mem.rep_per_seq);
    ssm.push_back(r.mem.ssm_per_seq);
    sd.push_back(r.mem.seq_dense());
    scc.push_back(r.mem.seq_cisa());
    const double fixed = r.mem.weights + r.mem.workspace + r.mem.reserve;
    mud.push_back(fixed + r.batch_dense * r.mem.seq_dense());
    muc.push_back(fixed + r.batch_cisa * r.mem.seq_cisa());
    mcd.push_back(r.mem.weights_fit ? r.mem.max_seqs_dense * k.par.dp : 0);
    mcc.push_back(r.mem.weights_fit ? r.mem.max_seqs_cisa * k.par.dp : 0);
    mxd.push_back(r.mix_concurrency_dense);
    mxc.push_back(r.mix_concurrency_cisa);
    ttd.push_back(r.ttft_s_dense * ms);
    ttc.push_back(r.ttft_s_cisa * ms);
    dsd.push_back(r.decode_step_s_dense * ms);
    dsc.push_back(r.decode_step_s_cisa * ms);
    tpd.push_back(r.tpot_s_dense * ms);
    tpc.push_back(r.tpot_s_cisa * ms);
    tid.push_back(r.tpot_interleaved_s_dense * ms);
    tic.push_back(r.tpot_interleaved_s_cisa * ms);
    tud.push_back(r.tokens_per_s_per_user_dense);
    tuc.push_back(r.tokens_per_s_per_user_cisa);
    tsd.push_back(r.tokens_per_s_per_gpu_dense);
    tsc.push_back(r.tokens_per_s_per_gpu_cisa);
    S.push_back(r.speedup);
    R.push_back(sc.output_length_ratio);
    Sa.push_back(r.speedup_adj);
    sttft.push_back(r.ttft_s_dense / r.ttft_s_cisa);
    sdec.push_back(r.decode_step_s_dense / r.decode_step_s_cisa);
    const bool any = r.fits_dense || r.fits_cisa;
    pl.push_back(any ? (r.prefill.layers + r.prefill.lm_head) * ms : kNaN);
    pad.push_back(any ? r.prefill.attn_global_dense * ms : kNaN);
    pac.push_back(any ? r.prefill.attn_global_cisa * ms : kNaN);
    pas.push_back(any ? r.prefill.attn_sliding * ms : kNaN);
    pc.push_back(any ? r.prefill.comm * ms : kNaN);
    dld.push_back(r.fits_dense ? (r.decode_dense.layers + r.decode_dense.lm_head) * ms : kNaN);
    dlc.push_back(r.fits_cisa ? (r.decode_cisa.layers + r.decode_cisa.lm_head) * ms : kNaN);
    dad.push_back(r.fits_dense ? r.decode_dense.attn_global_dense * ms : kNaN);
    dac.push_back(r.fits_cisa ? r.decode_cisa.attn_global_cisa * ms : kNaN);
    dasd.push_back(r.fits_dense ? r.decode_dense.attn_sliding * ms : kNaN);
    dasc.push_back(r.fits_cisa ? r.decode_cisa.attn_sliding * ms : kNaN);
    dcd.push_back(r.fits_dense ? r.decode_dense.comm * ms : kNaN);
    dcc.push_back(r.fits_cisa ? r.decode_cisa.comm * ms : kNaN);
    dwb.push_back(r.fits_cisa ? r.decode_cisa.weight_bytes : kNaN);
    fd.push_back(r.fits_dense);
    fc.push_back(r.fits_cisa);
    fed.push_back(r.feasible_dense);
    fec.push_back(r.feasible_cisa);
    pd.push_back(r.pareto_dense);
    pc2.push_back(r.pareto_cisa);
    rd.push_back(r.reason_dense);
    rc.push_back(r.reason_cisa);
  }
  return t;
}

Attributes plan_attributes(const PlanScenario& sc, const std::string& command_line) {
  Attributes a = base_attributes(command_line, sc.name, sc.file, sc.text, sc.effective_yaml, sc.overrides);
  a["basis"] = to_string(sc.basis);
  a["hardware"] = sc.hw.name;
  a["hardware_yaml"] = sc.hw.yaml;
  a["deploy_model"] = sc.model.name;
  a["deploy_model_yaml"] = sc.model.yaml;
  a["attention_preset_yaml"] = sc.model.attn.yaml;
  const Rates r = card_rates(sc.hw, sc.basis);
  a["rates_source." + sc.hw.name] = r.source;
  const PointPricing pr = attention_pricing(sc);
  a["dense_impl"] = sc.dense_impl == "best" ? "best (fastest known on the card; per row in dense_impl)" : sc.dense_impl;
  a["cisa_impl"] = pr.cisa[1].impl;
  a["plan_model"] =
      "fixed-output steady state per replica: tokens/s = O / (T_prefill + O * T_step / B); TPOT = T_step / a (inter-token latency); "
      "TPOT with prefill interleaved = T_step / a + B * T_prefill / O; "
      "TTFT = isolated chunked prefill; decode history = context + O/2; memory holds context + O tokens";
  return a;
}

}  // namespace cisa::plan
