// cisa-sim [run] --scenario FILE: predictions for every sweep point -> stdout + HDF5.
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "cisa/errors.hpp"
#include "cisa/measure.hpp"
#include "cisa/evaluate.hpp"
#include "cisa/write_hdf5.hpp"
#include "cisa/write_text.hpp"
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"

namespace po = boost::program_options;

namespace cisa::cli {

namespace {

std::vector<ShownColumn> summary_columns(const Table& t) {
  std::vector<ShownColumn> cols;
  // Axes that vary across the points, then the headline numbers.
  const std::vector<std::pair<std::string, std::string>> axes = {
      {"model", "model"}, {"hardware", "gpu"}, {"phase", "phase"}, {"context_tokens", "L"},
      {"budget_chunks", "K"}, {"qshare_g", "G"}, {"batch", "B"}, {"q_heads", "Hq"}, {"kv_heads", "Hkv"},
      {"head_dim", "d"}, {"prefill_tokens", "P"}, {"chunk_tokens", "c"}, {"window_pages", "W"},
      {"kv_dtype", "kv"}, {"rep_kind", "rep"}, {"score_agg", "agg"}, {"selection_overlap", "overlap"}};
  for (const auto& [name, title] : axes) {
    const Column* c = t.find(name);
    std::set<std::string> distinct;
    for (std::size_t r = 0; r < t.rows(); ++r) distinct.insert(c->format_cell(r));
    if (distinct.size() > 1 || name == "phase" || name == "context_tokens" || name == "budget_chunks" || name == "qshare_g")
      cols.push_back({name, title, 1.0, "", 6});
  }
  const std::vector<ShownColumn> metrics = {
      {"bytes_kv_dense", "KV dense", 1e9, "GB", 4},   {"bytes_kv_cisa", "KV cisa", 1e9, "GB", 4},
      {"bytes_rep", "rep", 1e9, "GB", 3},             {"bytes_meta", "meta", 1e6, "MB", 3},
      {"pred_ms_attention_dense", "attn dense", 1, "ms", 4},
      {"pred_ms_attention_cisa", "attn cisa", 1, "ms", 4}, {"pred_ms_scoring", "score", 1, "ms", 3},
      {"pred_ms_topk", "topk", 1, "ms", 3},           {"pred_ms_setup", "setup", 1, "ms", 3},
      {"pred_ms_other", "other", 1, "ms", 3},         {"pred_ms_busy_dense", "busy dense", 1, "ms", 4},
      {"pred_ms_busy_cisa", "busy cisa", 1, "ms", 4}, {"pred_speedup_attention", "x attn", 1, "x", 3},
      {"pred_speedup_busy", "x busy", 1, "x", 3}};
  cols.insert(cols.end(), metrics.begin(), metrics.end());
  return cols;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  return guarded("", [&]() {
    std::string scenario, out, format = "table", shard_text = "0/1", measure = "off", measurements;
    std::vector<std::string> sets;
    bool no_hdf5 = false;
    po::options_description opts("cisa-sim [run] options");
    opts.add_options()("help,h", "show this help")(
        "scenario,s", po::value(&scenario), "scenario YAML file (default: embedded scenarios/ultra_tp2_1m.yaml)")(
        "out,o", po::value(&out), "HDF5 output file (default: results/<scenario name>.h5)")(
        "no-hdf5", po::bool_switch(&no_hdf5), "do not write the HDF5 file")(
        "format,f", po::value(&format), "stdout format: table | csv | json | markdown | none")(
        "shard", po::value(&shard_text), "evaluate every N-th point starting at i: i/N (join shards with `cisa-sim merge`)")(
        "measure", po::value(&measure)->implicit_value("on"),
        "measure the points with the CUDA kernels: on (error without a GPU) | auto (when a GPU is present) | off")(
        "measurements", po::value(&measurements),
        "re-score the meas_ms_* columns of an earlier measured file against the current model (no GPU needed)")(
        "set", po::value(&sets)->composing(),
        "override a scenario field, e.g. --set cisa.budget=2048 --set sweep.G=[1,4]");
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    if (vm.count("help")) {
      std::cout << "Predict HBM bytes per category and time per component, dense vs CISA, for every\n"
                   "point of a scenario; print a table and write an HDF5 file (group /points).\n\n"
                << opts << "\nBytes and times are per global-attention layer, per forward, for the whole batch.\n";
      return kExitOk;
    }
    po::notify(vm);
    const std::set<std::string> formats = {"table", "csv", "json", "markdown", "none"};
    if (!formats.count(format))
      throw InputError({"command line", 0, "--format"}, "unknown format '" + format + "' (table, csv, json, markdown, none)");

    const Shard shard = parse_shard(shard_text);
    if (measure != "off" && measure != "on" && measure != "auto")
      throw InputError({"command line", 0, "--measure"}, "expected on, auto or off, got '" + measure + "'");
    const Scenario sc = load_scenario(scenario, sets);
    Table t;
    {
      Progress progress("evaluating " + sc.name);
      t = evaluate_scenario(sc, [&](std::size_t d, std::size_t n) { progress(d, n); }, shard);
    }
    Attributes attrs = provenance(sc, join_args(argc, argv), shard);
    if (measure != "off") measure_points(sc, t, attrs, measure == "on");
    if (!measurements.empty()) import_measurements(measurements, t, attrs);
    const bool measured = attrs.count("measurement") && attrs.at("measurement").rfind("measured", 0) == 0;
    if (out.empty()) out = default_output(sc.name);
    if (!no_hdf5) write_hdf5(out, {{"points", &t}}, attrs);

    if (format == "csv") write_csv(std::cout, t);
    if (format == "json") write_json(std::cout, t, attrs);
    if (format == "table" || format == "markdown") {
      const Hardware& hw = sc.gpus.begin()->second;
      std::cout << "scenario " << sc.name << " (" << sc.file << ")";
      if (!sc.description.empty()) std::cout << "\n  " << sc.description;
      std::cout << "\nmodel " << t.find("model")->format_cell(0) << ", per rank " << t.find("q_heads")->format_cell(0)
                << " q / " << t.find("kv_heads")->format_cell(0) << " kv heads, d = " << t.find("head_dim")->format_cell(0)
                << "; GPU " << hw.display_name << "; basis " << to_string(sc.basis) << " ("
                << resolve_rates(hw, sc.basis).source << ")\n"
                << "bytes: predicted DRAM, one layer, one forward, whole batch. times: roofline per component.\n\n";
      if (format == "table")
        write_aligned(std::cout, t, summary_columns(t));
      else
        write_markdown(std::cout, t, summary_columns(t));
      std::cout << "\n" << t.rows() << " points";
      if (shard.count > 1) std::cout << " (shard " << shard_text << " of " << sc.points.size() << ")";
      if (sc.duplicates_collapsed) std::cout << " (" << sc.duplicates_collapsed << " duplicates collapsed: decode has G = 1)";
      if (!no_hdf5) std::cout << "; wrote " << out << " (" << t.columns().size() << " columns in /points)";
      std::cout << "\n";
      if (measured) write_error_report(std::cout << "\n", t);
    } else {
      if (measured) write_error_report(std::cerr, t);
      if (!no_hdf5) std::cerr << "wrote " << out << "\n";
    }
    return kExitOk;
  });
}

}  // namespace cisa::cli
