// cisa-sim designs: CISA beside Quest, DSA, MSA, NSA and block top-k in one traffic model
// (issue 15). Each design is a declarative record (models/design/*.yaml); a design scenario
// (scenarios/designs_*.yaml) names the designs and the run scenarios that supply the points.
#include <boost/program_options.hpp>
#include <iostream>

#include "cisa/errors.hpp"
#include "cisa/evaluate.hpp"
#include "cisa/write_hdf5.hpp"
#include "cisa/write_text.hpp"
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/fit_table.hpp"
#include "design/design_eval.hpp"

namespace po = boost::program_options;

namespace cisa::cli {

namespace {

const std::vector<double>& f64(const Table& t, const std::string& name) {
  return std::get<std::vector<double>>(t.find(name)->data);
}
const std::vector<std::int64_t>& i64(const Table& t, const std::string& name) {
  return std::get<std::vector<std::int64_t>>(t.find(name)->data);
}
const std::vector<std::string>& text(const Table& t, const std::string& name) {
  return std::get<std::vector<std::string>>(t.find(name)->data);
}

// Console table: rows at context `only` (0: every row), 120 columns.
void print_designs(std::ostream& os, const Table& t, std::int64_t only) {
  std::vector<TextColumn> cols = {
      {"r", {}, 0, false},        {"phase", {}, 0, true},     {"L", {}, 0, false},
      {"budget", {}, 0, false},   {"design", {}, 0, true},    {"KV GB", {}, 0, false},
      {"index GB", {}, 0, false}, {"meta GB", {}, 1, false},  {"attn ms", {}, 0, false},
      {"index ms", {}, 0, false}, {"top-k ms", {}, 0, false}, {"other ms", {}, 1, false},
      {"busy ms", {}, 0, false},  {"dense ms", {}, 0, false}, {"speedup [lo-hi]", {}, 0, false},
      {"ceiling", {}, 0, false}};
  const auto& L = i64(t, "context_tokens");
  for (std::size_t i = 0; i < t.rows(); ++i) {
    if (only > 0 && L[i] != only) continue;
    const double kv =
        f64(t, "bytes_kv_selected")[i] + f64(t, "bytes_kv_fixed")[i] + f64(t, "bytes_branch")[i];
    const double idx = f64(t, "bytes_index_read")[i] + f64(t, "bytes_index_write")[i];
    const double meta = f64(t, "bytes_scores")[i] + f64(t, "bytes_ids")[i];
    const std::string ph = text(t, "phase")[i];
    const std::vector<std::string> cells = {
        std::to_string(i64(t, "heads_per_group")[i]),
        ph == "terminal_prefill" ? "prefill" : ph,
        fmt_tokens(L[i]),
        fmt_tokens(i64(t, "budget_tokens")[i]),
        text(t, "design")[i],
        fmt_sig(kv / 1e9, 3),
        fmt_sig(idx / 1e9, 3),
        fmt_sig(meta / 1e9, 3),
        fmt_sig(f64(t, "pred_ms_attention")[i], 3),
        fmt_sig(f64(t, "pred_ms_scoring")[i], 3),
        fmt_sig(f64(t, "pred_ms_topk")[i], 3),
        fmt_sig(f64(t, "pred_ms_other")[i] + f64(t, "pred_ms_setup")[i], 3),
        fmt_sig(f64(t, "pred_ms_busy")[i], 3),
        fmt_sig(f64(t, "pred_ms_dense")[i], 3),
        fmt_sig(f64(t, "pred_speedup_busy")[i], 3) + " [" +
            fmt_sig(f64(t, "pred_speedup_busy_lo")[i], 2) + "-" +
            fmt_sig(f64(t, "pred_speedup_busy_hi")[i], 2) + "]",
        fmt_sig(f64(t, "ceiling_fixed")[i], 3) + "x"};
    for (std::size_t c = 0; c < cols.size(); ++c) cols[c].cells.push_back(cells[c]);
  }
  os << "Designs at equal selected-token budgets (budget = tokens per plan beyond "
        "window/sink/tail). Time view: one\n"
        "layer, whole batch; KV = selected + fixed + branch K/V; index = representatives / index "
        "keys read + written;\n"
        "meta = scores + IDs; speedup = dense attention / design busy; ceiling = per-position "
        "dense / design bytes.\n\n";
  print_fitted(os, cols, kTableWidth, 0);
}

}  // namespace

int cmd_designs(int argc, char** argv) {
  return guarded("designs", [&]() {
    std::string scenario = "designs_1m", out, format = "table";
    bool no_hdf5 = false, all = false;
    po::options_description opts("cisa-sim designs options");
    opts.add_options()("help,h", "show this help")(
        "scenario", po::value(&scenario),
        "design scenario: a file or a shipped designs_* name (default designs_1m)")(
        "out", po::value(&out), "HDF5 output (default out/<scenario>.h5); group /designs")(
        "no-hdf5", po::bool_switch(&no_hdf5), "write no HDF5 file")(
        "all", po::bool_switch(&all), "print every context (default: the largest only)")(
        "format,f", po::value(&format), "table | csv | json | none");
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    if (vm.count("help")) {
      std::cout << "Sparse-attention designs in one traffic model: bytes per category, time per "
                   "component\n"
                   "(implementation profiles of each point) and closed-form ceilings, one row per "
                   "point and design.\n\n"
                << opts;
      return kExitOk;
    }
    po::notify(vm);
    if (format != "table" && format != "csv" && format != "json" && format != "none")
      throw InputError({"command line", 0, "--format"},
                       "unknown format '" + format + "' (table, csv, json, none)");
    const design::DesignScenario sc = design::load_design_scenario(scenario);
    const Table t = design::evaluate_designs(sc);
    Attributes attrs =
        base_attributes(join_args(argc, argv), sc.name, sc.file, sc.text, sc.text, {});
    for (const auto& d : sc.designs) attrs["design_source." + d.name] = d.source;
    if (!no_hdf5) write_hdf5(out.empty() ? default_output(sc.name) : out, {{"designs", &t}}, attrs);
    std::int64_t largest = 0;
    for (auto L : i64(t, "context_tokens")) largest = std::max(largest, L);
    if (format == "table") {
      print_designs(std::cout, t, all ? 0 : largest);
    } else if (format == "csv") {
      write_csv(std::cout, t);
    } else if (format == "json") {
      write_json(std::cout, t, attrs);
    }
    return kExitOk;
  });
}

}  // namespace cisa::cli
