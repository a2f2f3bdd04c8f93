// cisa-sim [run] --scenario FILE: predictions for every sweep point -> stdout + HDF5.
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "cisa/errors.hpp"
#include "cisa/measure.hpp"
#include "cisa/evaluate.hpp"
#include "cisa/output_file.hpp"
#include "cisa/plausibility.hpp"
#include "cisa/write_hdf5.hpp"
#include "cisa/write_text.hpp"
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/run_table.hpp"

namespace po = boost::program_options;

namespace cisa::cli {

int cmd_run(int argc, char** argv) {
  return guarded("", [&]() {
    std::string scenario, out, format = "table", shard_text = "0/1", measure = "off", measurements;
    std::vector<std::string> sets;
    bool no_hdf5 = false;
    RunTableOptions table_opt;
    std::string columns;
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
        "override a scenario field, e.g. --set cisa.budget=2048 --set sweep.G=[1,4]")(
        "columns", po::value(&columns), "table: exactly these /points columns, e.g. phase,qshare_g,pred_ms_topk")(
        "wide", po::bool_switch(&table_opt.wide), "table: every key column, without the 120-character limit")(
        "max-rows", po::value(&table_opt.max_rows)->default_value(40),
        "table: longer sweeps show their first and last rows and a summary (0: every row)");
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
    if (out.empty()) out = default_output(sc.name);
    if (!no_hdf5) check_output(out, "--out", false);  // refuse a bad target before the work
    check_sweep_memory(sc.points.size(), shard.count, sc.file);
    Table t;
    {
      Progress progress("evaluating " + sc.name);
      t = evaluate_scenario(sc, [&](std::size_t d, std::size_t n) { progress(d, n); }, shard);
    }
    Attributes attrs = provenance(sc, join_args(argc, argv), shard);
    if (measure != "off") measure_points(sc, t, attrs, measure == "on");
    if (!measurements.empty()) import_measurements(measurements, t, attrs);
    const bool measured = attrs.count("measurement") && attrs.at("measurement").rfind("measured", 0) == 0;
    if (!no_hdf5) write_hdf5(out, {{"points", &t}}, attrs);

    if (format == "csv") write_csv(std::cout, t);
    if (format == "json") write_json(std::cout, t, attrs);
    if (format == "table" || format == "markdown") {
      print_run_header(std::cout, sc, t, attrs);
      table_opt.markdown = format == "markdown";
      table_opt.columns = split_list(columns);
      print_run_table(std::cout, t, table_opt);
      print_budget_warning(std::cout, t);
      if (table_opt.max_rows && t.rows() > table_opt.max_rows) print_run_summary(std::cout << "speedups over all points:\n", t);
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
