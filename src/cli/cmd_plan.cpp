// cisa-sim plan --scenario deploy.yaml: memory per GPU, max concurrency, TTFT/TPOT, tokens/s per
// GPU and the CISA speedups for a deployment; search over TP/DP/EP/budget/G/batch with a Pareto
// front. stdout tables + HDF5 group /plan (src/plan/README.md explains how to read them).
#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <iostream>
#include <numeric>
#include <set>
#include <sstream>

#include "cisa/errors.hpp"
#include "cisa/write_hdf5.hpp"
#include "cisa/write_text.hpp"
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/fit_table.hpp"
#include "plan/plan.hpp"

namespace po = boost::program_options;

namespace cisa::cli {

namespace {

using plan::PlanRow;
using plan::PlanScenario;

std::string gb(double b) { return std::isfinite(b) ? fmt::format("{:.2f}", b / 1e9) : "-"; }
std::string num(double x, int prec = 1) {
  if (!std::isfinite(x)) return "-";
  return fmt::format("{:.{}f}", x, prec);
}
std::string tokens(std::int64_t n) {
  if (n >= 1024 * 1024 && n % (1024 * 1024) == 0) return fmt::format("{}M", n / (1024 * 1024));
  if (n >= 1024 && n % 1024 == 0) return fmt::format("{}K", n / 1024);
  return fmt::format("{}", n);
}

void header(std::ostream& os, const PlanScenario& sc) {
  const plan::ParamCounts pc = plan::count_params(sc.model);
  const plan::PlanConfig& b = sc.configs.front();
  const Rates r = card_rates(sc.hw, sc.basis);
  os << "plan " << sc.name << " (" << sc.file << ")\n";
  if (!sc.description.empty()) os << "  " << sc.description << "\n";
  std::string layers;
  for (const auto& g : sc.model.layers)
    layers += (layers.empty() ? "" : ", ") + fmt::format("{} {}", g.n(), plan::to_string(g.type)) +
              (g.type == plan::LayerType::sliding_attention ? fmt::format(" (window {})", g.window.value) : "");
  os << "model " << sc.model.display_name << ": " << layers << "; "
     << fmt::format("{:.1f}B parameters, {:.1f}B active", pc.total() / 1e9, pc.active() / 1e9) << "\n";
  os << fmt::format("GPU {} ({:.0f} GB HBM); basis {} ({})\n", sc.hw.display_name, sc.hw.hbm_gb.value, to_string(sc.basis),
                    r.source);
  {
    // Which kernels each side runs: every dense figure and S divide by this baseline.
    const PointPricing pr = plan::attention_pricing(sc);
    std::string dense;
    for (const auto& d : pr.dense) dense += (dense.empty() ? "" : ", ") + d[1].impl;
    os << "attention: dense baseline " << (sc.dense_impl == "best" ? "the fastest of " + dense + " per shape" : dense)
       << "; CISA with " << pr.cisa[1].impl << " (cisa-sim profiles)\n";
  }
  os << fmt::format(
      "deployment tp {} x dp {} = {} GPU{}, ep {}; weights {}, K/V {}; requests: {} prompt + {} output tokens; "
      "prefill chunk {}; CISA K = {}, G = {}, c = {}, W = {} pages\n",
      b.par.tp, b.par.dp, b.par.gpus(), b.par.gpus() == 1 ? "" : "s", b.par.ep, plan::to_string(b.weights), to_string(sc.cisa.kv_dtype), tokens(b.context),
      tokens(sc.output_tokens), sc.prefill_chunk, b.budget, b.G, sc.cisa.chunk_tokens, sc.cisa.window_pages);
  if (sc.mtp_tokens > 1)
    os << fmt::format("decode: multi-token prediction, {} positions verified per sequence per step (one CISA selection, G = {}), "
                      "{} tokens accepted per step (input); draft-layer cost not modelled\n",
                      sc.mtp_tokens, sc.mtp_tokens, sc.mtp_accepted);
}

void memory_table(std::ostream& os, const PlanScenario& sc, const PlanRow& r) {
  const auto& m = r.mem;
  os << "\nMemory per GPU (GB = 1e9 B)                     dense      CISA\n";
  auto line = [&](const std::string& what, const std::string& d, const std::string& c) {
    os << fmt::format("  {:<44} {:>9} {:>9}\n", what, d, c);
  };
  line("HBM", gb(m.hbm), gb(m.hbm));
  line(fmt::format("weights ({}, tp {}, ep {})", plan::to_string(r.cfg.weights), r.cfg.par.tp, r.cfg.par.ep), gb(m.weights),
       gb(m.weights));
  if (m.weights_experts > 0) line("  of which routed experts", gb(m.weights_experts), gb(m.weights_experts));
  line("activations / workspace", gb(m.workspace), gb(m.workspace));
  line("framework reserve", gb(m.reserve), gb(m.reserve));
  line("left for sequences", gb(m.free_for_cache), gb(m.free_for_cache));
  line(fmt::format("per sequence of {} + {} tokens: K/V", tokens(r.cfg.context), tokens(sc.output_tokens)), gb(m.kv_per_seq), gb(m.kv_per_seq));
  if (m.kv_sliding_per_seq > 0) line("  of which sliding-window layers", gb(m.kv_sliding_per_seq), gb(m.kv_sliding_per_seq));
  line("  representatives (CISA, 1/(2c) of K+V)", "-", gb(m.rep_per_seq));
  if (m.ssm_per_seq > 0) line("  Mamba SSM + conv state", gb(m.ssm_per_seq), gb(m.ssm_per_seq));
  line("  total per sequence", gb(m.seq_dense()), gb(m.seq_cisa()));
  const double kvt = plan::kv_bytes_per_token_global(sc.model, r.cfg.par.tp, sc.cisa.kv_dtype);
  os << fmt::format("  K/V per token per GPU (global layers): {:.0f} B; per replica: {:.0f} B\n", kvt, kvt * r.cfg.par.tp);
  if (!m.weights_fit) {
    os << "  " << m.reason << "\n";
    return;
  }
  line(fmt::format("max concurrent sequences @ {} (deployment)", tokens(r.cfg.context)),
       fmt::format("{}", m.max_seqs_dense * r.cfg.par.dp), fmt::format("{}", m.max_seqs_cisa * r.cfg.par.dp));
  line("  per replica", fmt::format("{}", m.max_seqs_dense), fmt::format("{}", m.max_seqs_cisa));
  if (!sc.context_mix.empty()) {
    std::string mix;
    for (const auto& cs : sc.context_mix) mix += (mix.empty() ? "" : ", ") + fmt::format("{} {:.0f}%", tokens(cs.context), cs.share * 100);
    line("max concurrency for the context mix (deployment)", num(r.mix_concurrency_dense, 0), num(r.mix_concurrency_cisa, 0));
    os << "    mix: " << mix << "\n";
  }
}

void perf_table(std::ostream& os, const PlanScenario& sc, const PlanRow& r) {
  os << "\nPerformance (batch = concurrent sequences per replica)   dense      CISA   dense/CISA\n";
  auto line = [&](const std::string& what, double d, double c, int prec, bool ratio) {
    os << fmt::format("  {:<52} {:>9} {:>9} {:>9}\n", what, num(d, prec), num(c, prec),
                      ratio && std::isfinite(d / c) ? num(d / c, 2) + "x" : "");
  };
  line("batch", r.batch_dense, r.batch_cisa, 0, false);
  line("TTFT, isolated chunked prefill (s)", r.ttft_s_dense, r.ttft_s_cisa, 2, true);
  line("  global attention (s)", r.prefill.attn_global_dense, r.prefill.attn_global_cisa, 2, true);
  line("  other layers + comm (s)", r.prefill.layers + r.prefill.lm_head + r.prefill.comm + r.prefill.attn_sliding,
       r.prefill.layers + r.prefill.lm_head + r.prefill.comm + r.prefill.attn_sliding, 2, false);
  line("decode step (ms)", r.decode_step_s_dense * 1e3, r.decode_step_s_cisa * 1e3, 2, true);
  line("  global attention (ms)", r.decode_dense.attn_global_dense * 1e3, r.decode_cisa.attn_global_cisa * 1e3, 2, true);
  line("  weights/other layers + LM head (ms)", (r.decode_dense.layers + r.decode_dense.lm_head) * 1e3,
       (r.decode_cisa.layers + r.decode_cisa.lm_head) * 1e3, 2, false);
  line("  comm: TP all-reduce + EP all-to-all (ms)", r.decode_dense.comm * 1e3, r.decode_cisa.comm * 1e3, 2, false);
  line("TPOT = inter-token latency, decode step / accepted (ms)", r.tpot_s_dense * 1e3, r.tpot_s_cisa * 1e3, 1, true);
  line("TPOT with prefill interleaved, steady load (ms)", r.tpot_interleaved_s_dense * 1e3, r.tpot_interleaved_s_cisa * 1e3, 1,
       true);
  line("output tokens/s per user (1 / TPOT)", r.tokens_per_s_per_user_dense, r.tokens_per_s_per_user_cisa, 1, false);
  line("output tokens/s per GPU", r.tokens_per_s_per_gpu_dense, r.tokens_per_s_per_gpu_cisa, 2, false);
  os << fmt::format("  S (fixed-output throughput speedup, CISA / dense): {}x", num(r.speedup, 2));
  if (std::isfinite(sc.output_length_ratio))
    os << fmt::format("; S_adj = S / R = {}x (R = {})", num(r.speedup_adj, 2), sc.output_length_ratio);
  else
    os << "; S_adj: give workload.output_length_ratio (R)";
  os << "\n";
  if (!r.reason_dense.empty()) os << "  dense: " << r.reason_dense << "\n";
  if (!r.reason_cisa.empty()) os << "  CISA: " << r.reason_cisa << "\n";
}

void search_tables(std::ostream& os, const PlanScenario& sc, const std::vector<PlanRow>& rows, int top) {
  if (rows.size() <= 1) return;
  std::size_t feas_d = 0, feas_c = 0;
  for (const auto& r : rows) feas_d += r.feasible_dense, feas_c += r.feasible_cisa;
  os << fmt::format("\nSearch: {} configurations ({} skipped as impossible); feasible: dense {}, CISA {}", rows.size(),
                    sc.skipped, feas_d, feas_c);
  std::string targets;
  if (std::isfinite(sc.tpot_target_ms)) targets += fmt::format("TPOT <= {} ms", sc.tpot_target_ms);
  if (std::isfinite(sc.ttft_target_s)) targets += fmt::format("{}TTFT <= {} s", targets.empty() ? "" : ", ", sc.ttft_target_s);
  os << (targets.empty() ? "" : " (" + targets + ")") << "\n";
  for (const auto& ex : sc.skipped_examples) os << "  skipped e.g. " << ex << "\n";
  auto print = [&](const std::string& title, bool dense, const std::vector<std::size_t>& idx) {
    if (idx.empty()) {
      os << "\n" << title << ": none\n";
      return;
    }
    os << "\n" << title << "\n";
    os << fmt::format("  {:>3} {:>4} {:>4} {:>6} {:>6} {:>6} {:>4} {:>6} {:>6} {:>10} {:>11} {:>11} {:>8}\n", "tp", "dp", "ep",
                      "wts", "ctx", "K", "G", "batch", "conc", "TTFT s", "TPOT ms", "tok/s/GPU", "S");
    for (std::size_t i : idx) {
      const PlanRow& r = rows[i];
      os << fmt::format("  {:>3} {:>4} {:>4} {:>6} {:>6} {:>6} {:>4} {:>6} {:>6} {:>10} {:>11} {:>11} {:>8}\n", r.cfg.par.tp,
                        r.cfg.par.dp, r.cfg.par.ep, plan::to_string(r.cfg.weights), tokens(r.cfg.context),
                        dense ? std::string("-") : fmt::format("{}", r.cfg.budget),
                        dense ? std::string("-") : fmt::format("{}", r.cfg.G), dense ? r.batch_dense : r.batch_cisa,
                        (dense ? r.mem.max_seqs_dense : r.mem.max_seqs_cisa) * r.cfg.par.dp,
                        num(dense ? r.ttft_s_dense : r.ttft_s_cisa, 2), num((dense ? r.tpot_s_dense : r.tpot_s_cisa) * 1e3, 1),
                        num(dense ? r.tokens_per_s_per_gpu_dense : r.tokens_per_s_per_gpu_cisa, 2),
                        dense ? std::string("") : num(r.speedup, 2) + "x");
    }
  };
  const auto tps = [&](std::size_t i, bool dense) {
    return dense ? rows[i].tokens_per_s_per_gpu_dense : rows[i].tokens_per_s_per_gpu_cisa;
  };
  const auto tpot = [&](std::size_t i, bool dense) { return dense ? rows[i].tpot_s_dense : rows[i].tpot_s_cisa; };
  // Dense results do not depend on K and G: each dense configuration is listed once.
  const auto dense_key = [&](std::size_t i) {
    const PlanRow& r = rows[i];
    return std::make_tuple(r.cfg.par.tp, r.cfg.par.dp, r.cfg.par.ep, static_cast<int>(r.cfg.weights), r.cfg.context, r.batch_dense);
  };
  const std::int64_t L0 = rows.front().cfg.context;
  auto select = [&](bool dense, bool pareto, std::int64_t L) {
    std::vector<std::size_t> idx;
    std::set<std::tuple<int, int, int, int, std::int64_t, int>> seen;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const PlanRow& r = rows[i];
      if (r.cfg.context != L) continue;
      const bool ok = pareto ? (dense ? r.pareto_dense : r.pareto_cisa) : (dense ? r.feasible_dense : r.feasible_cisa);
      if (ok && (!dense || seen.insert(dense_key(i)).second)) idx.push_back(i);
    }
    if (pareto)
      std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return tpot(a, dense) < tpot(b, dense); });
    else
      std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return tps(a, dense) > tps(b, dense); });
    if (!pareto && idx.size() > static_cast<std::size_t>(top)) idx.resize(static_cast<std::size_t>(top));
    return idx;
  };
  const auto bd = select(true, false, L0), bc = select(false, false, L0);
  print(fmt::format("Best {} dense configurations by tokens/s per GPU at context {}", top, tokens(L0)), true, bd);
  print(fmt::format("Best {} CISA configurations by tokens/s per GPU at context {}", top, tokens(L0)), false, bc);
  print(fmt::format("Pareto front at context {}, dense (throughput per GPU vs TPOT, lower TPOT first)", tokens(L0)), true,
        select(true, true, L0));
  print(fmt::format("Pareto front at context {}, CISA", tokens(L0)), false, select(false, true, L0));
  if (!bd.empty() && !bc.empty()) {
    const PlanRow& d = rows[bd.front()];
    const PlanRow& c = rows[bc.front()];
    os << fmt::format("\nBest CISA vs best dense (each under the constraints): {:.2f} / {:.2f} tokens/s per GPU = {:.2f}x\n",
                      c.tokens_per_s_per_gpu_cisa, d.tokens_per_s_per_gpu_dense,
                      c.tokens_per_s_per_gpu_cisa / d.tokens_per_s_per_gpu_dense);
  }
  std::set<std::int64_t> contexts;
  for (const auto& r : rows) contexts.insert(r.cfg.context);
  if (contexts.size() < 2) return;
  os << "\nPer context: max concurrency of the scenario's parallel layout and the best feasible configuration of each side\n";
  os << fmt::format("  {:>5} {:>5} {:>10} {:>9} {:>11} {:>22} {:>11} {:>26} {:>6}\n", "ctx", "K", "conc dense", "conc CISA",
                    "tok/s/GPU d", "dense tp/dp/ep/wts/B", "tok/s/GPU c", "CISA tp/dp/ep/wts/K/G/B", "ratio");
  const plan::PlanConfig& b0 = rows.front().cfg;
  for (const std::int64_t L : contexts) {
    const PlanRow* layout = nullptr;
    for (const auto& r : rows)
      if (r.cfg.context == L && r.cfg.par.tp == b0.par.tp && r.cfg.par.dp == b0.par.dp && r.cfg.par.ep == b0.par.ep &&
          r.cfg.weights == b0.weights) {
        layout = &r;
        break;
      }
    const auto d = select(true, false, L), c = select(false, false, L);
    auto conf = [&](const std::vector<std::size_t>& idx, bool dense) -> std::string {
      if (idx.empty()) return "none feasible";
      const PlanRow& r = rows[idx.front()];
      return dense ? fmt::format("{}/{}/{}/{}/{}", r.cfg.par.tp, r.cfg.par.dp, r.cfg.par.ep, plan::to_string(r.cfg.weights), r.batch_dense)
                   : fmt::format("{}/{}/{}/{}/{}/{}/{}", r.cfg.par.tp, r.cfg.par.dp, r.cfg.par.ep, plan::to_string(r.cfg.weights),
                                 r.cfg.budget, r.cfg.G, r.batch_cisa);
    };
    const double td = d.empty() ? NAN : rows[d.front()].tokens_per_s_per_gpu_dense;
    const double tc = c.empty() ? NAN : rows[c.front()].tokens_per_s_per_gpu_cisa;
    os << fmt::format("  {:>5} {:>5} {:>10} {:>9} {:>11} {:>22} {:>11} {:>26} {:>6}\n", tokens(L),
                      layout ? fmt::format("{}", layout->cfg.budget) : "-",
                      layout && layout->mem.weights_fit ? fmt::format("{}", layout->mem.max_seqs_dense * layout->cfg.par.dp) : "-",
                      layout && layout->mem.weights_fit ? fmt::format("{}", layout->mem.max_seqs_cisa * layout->cfg.par.dp) : "-",
                      num(td, 2), conf(d, true), num(tc, 2), conf(c, false), std::isfinite(tc / td) ? num(tc / td, 2) + "x" : "-");
  }
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  return guarded("plan", [&]() {
    std::string scenario, out, format = "table";
    std::vector<std::string> sets;
    bool no_hdf5 = false;
    int top = 5;
    po::options_description opts("cisa-sim plan options");
    opts.add_options()("help,h", "show this help")(
        "scenario,s", po::value(&scenario), "plan scenario YAML (default: embedded scenarios/plan_ultra_b300.yaml)")(
        "out,o", po::value(&out), "HDF5 output file (default: results/plan/<scenario name>.h5)")(
        "no-hdf5", po::bool_switch(&no_hdf5), "do not write the HDF5 file")(
        "format,f", po::value(&format), "stdout: table | csv | json | markdown | none")(
        "top", po::value(&top), "configurations shown per 'best' list (default 5)")(
        "set", po::value(&sets)->composing(), "override a scenario field, e.g. --set workload.context=512K --set search.tp=[2,4]");
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    if (vm.count("help")) {
      std::cout << "Deployment capacity planning, dense vs CISA: memory per GPU, max concurrency, TTFT, TPOT,\n"
                   "tokens/s per GPU, the fixed-output throughput speedup S and S_adj = S / R; a search over\n"
                   "TP/DP/EP/weights/context/budget/G/batch with constraints and Pareto fronts. Writes HDF5 group /plan.\n\n"
                << opts << "\nSee src/plan/README.md for the scenario keys and the columns.\n";
      return kExitOk;
    }
    po::notify(vm);
    const std::set<std::string> formats = {"table", "csv", "json", "markdown", "none"};
    if (!formats.count(format))
      throw InputError({"command line", 0, "--format"}, "unknown format '" + format + "' (table, csv, json, markdown, none)");
    if (top < 1) throw InputError({"command line", 0, "--top"}, "must be >= 1");
    const PlanScenario sc =
        plan::load_plan_scenario(scenario.empty() ? "embedded:scenarios/plan_ultra_b300.yaml" : scenario, sets);
    std::vector<PlanRow> rows;
    try {
      rows = plan::evaluate_plan(sc);
    } catch (const std::invalid_argument& e) {
      throw InputError({sc.file, 0, ""}, e.what());
    }
    // The scenario's own configuration must fit at least on one side: say why not, write nothing.
    const PlanRow& base = rows.front();
    if (!base.fits_dense && !base.fits_cisa && rows.size() == 1)
      throw InputError({sc.file, 0, "parallel"}, "the configuration " + base.reason_dense);
    const Table t = plan::plan_table(sc, rows);
    const Attributes attrs = plan::plan_attributes(sc, "cisa-sim " + join_args(argc, argv));
    if (out.empty()) out = default_output(sc.name);
    if (!no_hdf5) write_hdf5(out, {{"plan", &t}}, attrs);

    if (format == "csv") write_csv(std::cout, t);
    if (format == "json") write_json(std::cout, t, attrs);
    if (format == "markdown") {
      const std::vector<ShownColumn> cols = {
          {"tp", "tp", 1, "", 0}, {"dp", "dp", 1, "", 0}, {"ep", "ep", 1, "", 0}, {"weight_dtype", "weights", 1, "", 0},
          {"context_tokens", "context", 1, "", 0}, {"budget_chunks", "K", 1, "", 0}, {"qshare_g", "G", 1, "", 0},
          {"batch_dense", "B dense", 1, "", 0}, {"batch_cisa", "B CISA", 1, "", 0},
          {"max_concurrency_dense", "max conc dense", 1, "", 0}, {"max_concurrency_cisa", "max conc CISA", 1, "", 0},
          {"mem_weights_bytes", "weights", 1e9, "GB", 1}, {"ttft_ms_dense", "TTFT dense", 1e3, "s", 2},
          {"ttft_ms_cisa", "TTFT CISA", 1e3, "s", 2}, {"tpot_ms_dense", "TPOT dense", 1, "ms", 1},
          {"tpot_ms_cisa", "TPOT CISA", 1, "ms", 1}, {"tokens_per_s_per_gpu_dense", "tok/s/GPU dense", 1, "", 2},
          {"tokens_per_s_per_gpu_cisa", "tok/s/GPU CISA", 1, "", 2}, {"speedup_throughput", "S", 1, "x", 2},
          {"speedup_throughput_adj", "S_adj", 1, "x", 2}};
      write_markdown(std::cout, t, cols);
    }
    if (format == "table") {
      {
        std::ostringstream h;  // header lines wrapped at 120 characters
        header(h, sc);
        std::istringstream lines(h.str());
        for (std::string line; std::getline(lines, line);) std::cout << wrap(line, kTableWidth, "    ") << "\n";
      }
      memory_table(std::cout, sc, base);
      if (base.fits_dense || base.fits_cisa) perf_table(std::cout, sc, base);
      search_tables(std::cout, sc, rows, top);
      std::cout << "\n" << rows.size() << " configurations";
      if (!no_hdf5) std::cout << "; wrote " << out << " (" << t.columns().size() << " columns in /plan)";
      std::cout << "\n";
    } else if (!no_hdf5) {
      std::cerr << "wrote " << out << "\n";
    }
    return kExitOk;
  });
}

}  // namespace cisa::cli
