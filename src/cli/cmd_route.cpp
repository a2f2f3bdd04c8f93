// cisa-sim route: routing diagnostics and indexer initialisation on attention activations
// (issue 7). Reads an activations HDF5 file (layout: src/route/README.md) or generates
// synthetic activations, writes the tables "routing", "curve" and "init" to HDF5 and prints a
// readable summary.
#include <H5Cpp.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cisa/errors.hpp"
#include "cisa/hdf5_handle.hpp"
#include "cisa/output_file.hpp"
#include "cisa/version.hpp"
#include "cisa/write_hdf5.hpp"
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "route/report.hpp"
#include "route/route.hpp"

namespace po = boost::program_options;

namespace cisa::cli {

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw InputError(SourceLocation{"", 0, field}, what);
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

// W_idx export: /layers/<i>/w_idx [kv_heads, head_dim, hidden] float32 when w_q was given;
// /layers/<i>/chosen_candidate [kv_heads] int64 (0..r-1 head within the group, r = mean) always.
void export_index(const std::string& path, const std::vector<route::LayerActivations>& acts,
                  const std::vector<route::LayerReport>& reps, const Attributes& attrs) {
  OutputFile out(path, "--export-index");
  try {
    H5::Exception::dontPrint();
    H5::H5File f(out.temp().string(), H5F_ACC_EXCL);
    {
      for (const auto& [k, v] : attrs) {
        H5::StrType st(H5::PredType::C_S1, std::max<std::size_t>(1, v.size()));
        H5::Attribute at = f.createAttribute(k, st, H5::DataSpace(H5S_SCALAR));
        at.write(st, v.c_str());
      }
      H5::Group root = f.createGroup("layers");
      for (std::size_t i = 0; i < acts.size(); ++i) {
        const auto& a = acts[i];
        H5::Group g = root.createGroup(std::to_string(a.layer));
        std::vector<long long> chosen(reps[i].init.chosen.begin(), reps[i].init.chosen.end());
        hsize_t n = chosen.size();
        g.createDataSet("chosen_candidate", H5::PredType::STD_I64LE, H5::DataSpace(1, &n))
            .write(chosen.data(), H5::PredType::NATIVE_LLONG);
        const std::vector<float> w = route::index_projection(a, reps[i].init.chosen);
        if (!w.empty()) {
          hsize_t dims[3] = {hsize_t(a.kv_heads), hsize_t(a.head_dim), hsize_t(a.hidden)};
          g.createDataSet("w_idx", H5::PredType::IEEE_F32LE, H5::DataSpace(3, dims))
              .write(w.data(), H5::PredType::NATIVE_FLOAT);
        }
      }
    }
    f.close();  // throws when the final flush fails (every object above is closed by now)
  } catch (const H5::Exception& e) {
    h5::write_failed(path, e.getDetailMsg());
  }
  out.commit();
}

}  // namespace

int cmd_route(int argc, char** argv) {
  return guarded("route", [&]() {
    std::string activations, out = "route.h5", summary_path, export_path, write_acts;
    std::string layers_s, budget_s = "1024", g_s = "4", window_s = "128", curve_s, lags_s = "1,32";
    std::string rep_s = "mean", agg_s = "sum", indexer_s = "init", kinds_s;
    std::int64_t chunk = 0, key_block = 1024;
    int threads = 0;
    bool synthetic = false;
    route::SyntheticConfig sc;
    long long tokens = sc.tokens, positions = sc.positions, seed = static_cast<long long>(sc.seed);
    po::options_description opts(
        "cisa-sim route: how much dense attention mass the CISA selection keeps\n"
        "  cisa-sim route --activations FILE.h5 --budget 1024,2048 --G 1,4 --window 128 --out r.h5\n"
        "  cisa-sim route --synthetic --tokens 65536 --budget 256 --out r.h5\n"
        "options");
    opts.add_options()("help,h", "show this help")(
        "activations", po::value(&activations), "activations HDF5 file (layout: src/route/README.md)")(
        "synthetic", po::bool_switch(&synthetic), "use generated activations instead (see --tokens ...)")(
        "layers", po::value(&layers_s), "comma list of layer indices (default: all in the file)")(
        "budget", po::value(&budget_s)->default_value(budget_s), "K: chunk budgets, comma list")(
        "G", po::value(&g_s)->default_value(g_s), "QShare group sizes, comma list")(
        "window", po::value(&window_s)->default_value(window_s), "W: window pages, comma list")(
        "chunk", po::value(&chunk), "chunk (page) size in tokens (default: file attribute, else 16)")(
        "curve-budgets", po::value(&curve_s),
        "budgets for the recall-vs-budget curve (default: powers of two 1 .. 4 x max budget)")(
        "lags", po::value(&lags_s)->default_value(lags_s), "lags (positions) for selection overlap")(
        "rep", po::value(&rep_s)->default_value(rep_s), "representatives: mean | minmax (comma list)")(
        "aggregation", po::value(&agg_s)->default_value(agg_s), "group score over positions: sum | max | last (comma list)")(
        "indexer", po::value(&indexer_s)->default_value(indexer_s),
        "index projection used for selection: init (the initialisation's choice) | mean | head<i>")(
        "out", po::value(&out)->default_value(out), "output HDF5 (groups routing, curve, init)")(
        "summary", po::value(&summary_path), "also write the readable summary to this file")(
        "export-index", po::value(&export_path), "write the chosen index projections to this HDF5")(
        "write-activations", po::value(&write_acts), "write the (synthetic) activations to this HDF5")(
        "threads", po::value(&threads)->default_value(0), "threads (0: all cores)")(
        "key-block", po::value(&key_block)->default_value(key_block), "keys per GEMM block")(
        "tokens", po::value(&tokens)->default_value(tokens), "synthetic: history tokens")(
        "positions", po::value(&positions)->default_value(positions), "synthetic: analysed (last) positions")(
        "q-heads", po::value(&sc.q_heads)->default_value(sc.q_heads), "synthetic: query heads")(
        "kv-heads", po::value(&sc.kv_heads)->default_value(sc.kv_heads), "synthetic: KV heads")(
        "head-dim", po::value(&sc.head_dim)->default_value(sc.head_dim), "synthetic: head dim")(
        "needles", po::value(&sc.needles)->default_value(sc.needles), "synthetic: needle pages per KV group")(
        "head-kinds", po::value(&kinds_s), "synthetic: kinds per head of a group, cycled "
                                             "(local,retrieval,sink,diffuse)")(
        "seed", po::value(&seed)->default_value(seed), "synthetic: random seed");
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << opts << "\n";
      return kExitOk;
    }
    if (synthetic == !activations.empty())
      bad("--activations", "give exactly one of --activations FILE.h5 or --synthetic");
    check_output(out, "--out", false);  // bad targets are refused before the work
    if (!export_path.empty()) check_output(export_path, "--export-index", false);
    if (!summary_path.empty()) check_output(summary_path, "--summary", true);

    route::RouteConfig cfg;
    cfg.budgets = parse_int_list("budget", budget_s);
    cfg.qshare_gs = parse_int_list("G", g_s);
    cfg.windows = parse_int_list("window", window_s);
    cfg.lags = parse_int_list("lags", lags_s);
    std::vector<route::RepRule> rules;
    for (const auto& v : split(rep_s)) rules.push_back(route::parse_rep_rule(v));
    std::vector<route::Aggregation> aggs;
    for (const auto& v : split(agg_s)) aggs.push_back(route::parse_aggregation(v));
    if (rules.empty()) bad("--rep", "give at least one representative rule");
    if (aggs.empty()) bad("--aggregation", "give at least one aggregation rule");
    cfg.threads = threads;
    cfg.key_block = key_block;
    if (key_block <= 0) bad("--key-block", "must be positive");
    if (vm.count("chunk") && chunk <= 0) bad("--chunk", "must be positive");
    if (!curve_s.empty()) {
      cfg.curve_budgets = parse_int_list("curve-budgets", curve_s);
    } else {
      const std::int64_t top = 4 * *std::max_element(cfg.budgets.begin(), cfg.budgets.end());
      for (std::int64_t k = 1; k <= top; k *= 2) cfg.curve_budgets.push_back(k);
    }

    std::vector<route::LayerActivations> acts;
    if (synthetic) {
      sc.tokens = tokens;
      sc.positions = positions;
      sc.seed = static_cast<std::uint64_t>(seed);
      sc.threads = threads;
      if (chunk > 0) sc.chunk_tokens = chunk;
      if (!kinds_s.empty()) {
        sc.head_kinds.clear();
        for (const auto& k : split(kinds_s)) sc.head_kinds.push_back(route::parse_head_kind(k));
      }
      sc.needle_min_age = std::max<std::int64_t>(1, std::min<std::int64_t>(
          *std::max_element(cfg.windows.begin(), cfg.windows.end()) + 1,
          (sc.tokens - sc.positions) / sc.chunk_tokens / 2));
      cfg.chunk_tokens = sc.chunk_tokens;
      acts.push_back(route::make_synthetic(sc));
    } else {
      const route::ActivationsInfo info = route::read_activations_info(activations);
      cfg.chunk_tokens = chunk > 0 ? chunk : info.chunk_tokens;
      std::vector<int> layers = info.layers;
      if (!layers_s.empty()) {
        layers.clear();
        for (auto l : parse_int_list("layers", layers_s)) {
          if (std::find(info.layers.begin(), info.layers.end(), l) == info.layers.end())
            throw InputError(SourceLocation{activations, 0, "layers/" + std::to_string(l)},
                             "no such layer in the file (--layers)");
          layers.push_back(static_cast<int>(l));
        }
      }
      for (int l : layers) acts.push_back(route::read_layer(activations, l));
    }
    if (!write_acts.empty()) {
      std::vector<const route::LayerActivations*> ptrs;
      for (const auto& a : acts) ptrs.push_back(&a);
      route::write_activations(write_acts, ptrs, cfg.chunk_tokens);
    }

    std::vector<route::LayerReport> reports;
    for (const auto& a : acts) {
      const int r = a.heads_per_group();
      if (indexer_s == "init") cfg.indexer = -1;
      else if (indexer_s == "mean") cfg.indexer = r;
      else if (indexer_s.rfind("head", 0) == 0) {
        const auto v = parse_int_list("indexer", indexer_s.substr(4));
        if (v.size() != 1 || v[0] < 0 || v[0] >= r)
          bad("--indexer", "head<i> needs 0 <= i < " + std::to_string(r) + " (heads per KV group)");
        cfg.indexer = static_cast<int>(v[0]);
      } else {
        bad("--indexer", "expected init, mean or head<i>, got '" + indexer_s + "'");
      }
      // The dense page mass is the heavy part: once per layer, shared by every rule.
      const auto t0 = std::chrono::steady_clock::now();
      const route::PageMass m = route::dense_page_mass(a, cfg.chunk_tokens, {threads, key_block});
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (const auto rule : rules)
        for (const auto agg : aggs) {
          cfg.rep = rule;
          cfg.aggregation = agg;
          reports.push_back(route::analyse_layer(a, m, cfg));
          reports.back().seconds_page_mass = secs;
        }
    }

    Attributes attrs;
    attrs["tool_version"] = tool_version();
    attrs["git_hash"] = git_hash();
    attrs["created_utc"] = utc_now();
    attrs["command_line"] = join_args(argc, argv);
    attrs["activations"] = synthetic ? std::string("synthetic") : activations;
    attrs["chunk_tokens"] = std::to_string(cfg.chunk_tokens);
    attrs["rep_rule"] = rep_s;
    attrs["aggregation"] = agg_s;
    attrs["indexer"] = indexer_s;
    const route::ReportTables tables = route::make_tables(reports, cfg);
    write_hdf5(out, {{"routing", &tables.routing}, {"curve", &tables.curve}, {"init", &tables.init}}, attrs);
    if (!export_path.empty()) export_index(export_path, acts, reports, attrs);

    const std::string text = route::summary_text(reports, cfg);
    if (!summary_path.empty()) write_text_output(summary_path, text, "--summary");
    std::cout << text << "wrote " << out << "\n";
    return kExitOk;
  });
}

}  // namespace cisa::cli
