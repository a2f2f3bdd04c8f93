// cisa-sim [run] --scenario FILE: predictions for every sweep point -> stdout + HDF5.
#include <boost/program_options.hpp>
#include <signal.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "cisa/errors.hpp"
#include "cisa/measure.hpp"
#include "cisa/evaluate.hpp"
#include "cisa/output_file.hpp"
#include "cisa/plausibility.hpp"
#include "cisa/results.hpp"
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
    // --measure and --measurements fill columns of the whole table: it is held. Else the sweep is
    // streamed: evaluated a chunk of rows at a time and written as it goes (bounded memory).
    const bool hold = measure != "off" || !measurements.empty();
    Scenario sc = load_scenario(scenario, sets, hold);
    if (out.empty()) out = default_output(sc.name);
    if (!no_hdf5) check_output(out, "--out", false);  // refuse a bad target before the work
    const bool tabular = format == "table" || format == "markdown";
    table_opt.markdown = format == "markdown";
    table_opt.columns = split_list(columns);
    auto print_tail = [&](const RunDigest& d, const Table* held, const Attributes& attrs, bool measured) {
      if (tabular) {
        print_run_header(std::cout, sc, d, attrs);
        print_run_table(std::cout, d, table_opt);
        print_budget_warning(std::cout, d);
        if (table_opt.max_rows && d.rows > table_opt.max_rows) print_run_summary(std::cout << "speedups over all points:\n", d);
        std::cout << "\n" << d.rows << " points";
        if (shard.count > 1) std::cout << " (shard " << shard_text << " of " << sc.point_count << ")";
        if (sc.duplicates_collapsed) std::cout << " (" << sc.duplicates_collapsed << " duplicates collapsed: decode has G = 1)";
        if (!no_hdf5) std::cout << "; wrote " << out << " (" << d.shown.columns().size() << " columns in /points)";
        std::cout << "\n";
        if (measured && held) write_error_report(std::cout << "\n", *held);
      } else {
        if (measured && held) write_error_report(std::cerr, *held);
        if (!no_hdf5) std::cerr << "wrote " << out << "\n";
      }
    };
    const std::size_t rows = shard_rows(sc.point_count, shard);
    const StreamOptions opt = stream_options();
    // A table of at most hold_rows rows, or one that shows every row, is held (the table's widths and
    // units then come from every row, as they always have).
    const bool hold_all = hold || (tabular && (rows <= opt.hold_rows || table_opt.max_rows == 0 || rows <= table_opt.max_rows));
    if (hold_all) {
      check_sweep_memory(sc.point_count, static_cast<std::size_t>(shard.count), sc.file);
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
      RunDigest d(t, t.rows(), 0);
      if (tabular) d.adopt(std::move(t));  // not copied
      print_tail(d, tabular ? &d.shown : &t, attrs, measured);
      return kExitOk;
    }
    // Streamed: the HDF5 file (a temp, renamed when complete), csv / json on stdout, the table's digest.
    const Attributes attrs = provenance(sc, join_args(argc, argv), shard);
    PointsTableBuilder schema_builder(sc.design_column);
    const Table& schema = schema_builder.table();
    std::unique_ptr<Hdf5TableStream> h5;
    if (!no_hdf5) h5 = std::make_unique<Hdf5TableStream>(out, "points", schema, rows, text_column_widths(sc), attrs);
    if (h5) h5->set_threads(opt.threads);
    RunDigest digest(schema, rows, tabular ? table_opt.max_rows : 1);
    bool first = true;
    // The HDF5 file is completed even when stdout's reader goes away (`| head`): SIGPIPE is
    // ignored while it is written, stdout is dropped at its first failure, and the run ends with
    // SIGPIPE once the file is in place (as when stdout was written after the file).
    struct sigaction old_pipe {};
    bool pipe_ignored = false;
    if (h5 && (format == "csv" || format == "json")) {
      struct sigaction ign {};
      ign.sa_handler = SIG_IGN;
      sigemptyset(&ign.sa_mask);
      pipe_ignored = ::sigaction(SIGPIPE, &ign, &old_pipe) == 0;
    }
    bool stdout_ok = true;
    auto to_stdout = [&](auto&& write) {
      if (!stdout_ok) return;
      write();
      if (!std::cout) stdout_ok = false;
    };
    std::unique_ptr<CsvRowWriter> csv;
    if (format == "csv") csv = std::make_unique<CsvRowWriter>(opt.threads);
    if (format == "csv") to_stdout([&] { write_csv_header(std::cout, schema); });
    if (format == "json") to_stdout([&] { write_json_begin(std::cout, schema, attrs); });
    {
      Progress progress("evaluating " + sc.name);
      evaluate_scenario_chunks(
          sc,
          [&](const Table& chunk) {
            if (h5) h5->append(chunk);
            if (format == "csv") to_stdout([&] { csv->write(std::cout, chunk); });
            if (format == "json") to_stdout([&] { write_json_rows(std::cout, chunk, first, opt.threads); });
            if (tabular) digest.add(chunk);
            first = false;
          },
          [&](std::size_t d, std::size_t n) { progress(d, n); }, shard, opt);
    }
    if (format == "json") to_stdout([&] { write_json_end(std::cout); });
    to_stdout([&] { std::cout.flush(); });
    if (h5) h5->commit();
    if (pipe_ignored) {
      ::sigaction(SIGPIPE, &old_pipe, nullptr);
      if (!stdout_ok) ::raise(SIGPIPE);
    }
    print_tail(digest, nullptr, attrs, false);
    return kExitOk;
  });
}

}  // namespace cisa::cli
