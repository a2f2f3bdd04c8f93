// cisa-sim ceilings: the ceiling view (method doc section 3) as a table.
#include <boost/program_options.hpp>
#include <iostream>
#include <set>
#include <tuple>

#include "model/ceilings.hpp"
#include "cisa/errors.hpp"
#include "cisa/evaluate.hpp"
#include "cisa/scenario.hpp"
#include "cisa/write_text.hpp"
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/fit_table.hpp"

namespace po = boost::program_options;

namespace cisa::cli {

namespace {

Table ceilings_table(const std::vector<CeilingInput>& rows) {
  Table t;
  auto& L = t.add_i64("context_tokens", "tokens", "L: history length");
  auto& K = t.add_i64("budget_chunks", "chunks", "K: chunk budget");
  auto& G = t.add_i64("qshare_g", "positions", "G: QShare group");
  auto& c = t.add_i64("chunk_tokens", "tokens", "c");
  auto& W = t.add_i64("window_pages", "pages", "W");
  auto& nom = t.add_f64("nominal_compression", "x", "L / (K c)");
  auto& near = t.add_f64("ceiling_near_end_prefill", "x", "2L / (2Kc + L/(cG))");
  auto& full = t.add_f64("ceiling_full_prefill", "x", "L^2 / (T^2 + 2Kc(L-T) + (L^2-T^2)/(2cG)), T = Kc");
  auto& dec = t.add_f64("ceiling_decode", "x", "near-end ceiling at G = 1");
  auto& wkv = t.add_f64("window_kv_only", "x", "2L / 2(Kc + Wc + c/2)");
  auto& wnear = t.add_f64("window_near_end_prefill", "x", "+ scan of N_e = N - W chunks shared by G");
  auto& wdec = t.add_f64("window_decode", "x", "+ scan at G = 1");
  for (const auto& in : rows) {
    const Ceilings r = compute_ceilings(in);
    L.push_back(in.context_tokens);
    K.push_back(in.budget_chunks);
    G.push_back(in.qshare_g);
    c.push_back(in.chunk_tokens);
    W.push_back(in.window_pages);
    nom.push_back(r.nominal_compression);
    near.push_back(r.ceiling_near_end_prefill);
    full.push_back(r.ceiling_full_prefill);
    dec.push_back(r.ceiling_decode);
    wkv.push_back(r.window_kv_only);
    wnear.push_back(r.window_near_end_prefill);
    wdec.push_back(r.window_decode);
  }
  return t;
}

// The console table: short titles, 4 significant figures, 120 columns.
void print_ceilings(std::ostream& os, const Table& t) {
  const std::vector<std::pair<std::string, std::string>> cols = {
      {"context_tokens", "L"}, {"budget_chunks", "K"}, {"qshare_g", "G"}, {"nominal_compression", "nominal"},
      {"ceiling_near_end_prefill", "near-end prefill"}, {"ceiling_full_prefill", "full prefill"},
      {"ceiling_decode", "decode"}, {"window_kv_only", "+W: K/V only"}, {"window_near_end_prefill", "+W: near-end"},
      {"window_decode", "+W: decode"}};
  std::vector<TextColumn> text;
  for (const auto& [name, title] : cols) {
    const Column& c = *t.find(name);
    TextColumn tc{title, {}, 0, false};
    for (std::size_t r = 0; r < t.rows(); ++r) {
      if (const auto* f = std::get_if<std::vector<double>>(&c.data))
        tc.cells.push_back(fmt_sig((*f)[r], 4) + "x");
      else
        tc.cells.push_back(name == "context_tokens" ? fmt_tokens(std::get<std::vector<std::int64_t>>(c.data)[r])
                                                    : c.format_cell(r));
    }
    text.push_back(tc);
  }
  os << "Ceilings: dense / CISA bytes per position (c = chunk tokens, d_r = d, equal dtypes); +W adds the recent\n"
        "window of W pages and a half-full tail. L in tokens, K in chunks, G positions per selection.\n\n";
  print_fitted(os, text, kTableWidth, 0);
}

// A budget that covers the whole history reads everything: CISA saves nothing (the run takes the
// dense path there), and a tiny context makes the representative scan dominate.
void warn_degenerate(const std::vector<CeilingInput>& rows) {
  for (const auto& in : rows)
    if (in.budget_chunks * in.chunk_tokens >= in.context_tokens)
      std::cerr << "cisa-sim ceilings: warning: K x c = " << in.budget_chunks * in.chunk_tokens << " tokens >= L = "
                << in.context_tokens << ": the budget covers the whole history, so CISA reads all of it (a run takes "
                << "the dense path there); the ratios below 1 only count the representative scan\n";
}

}  // namespace

int cmd_ceilings(int argc, char** argv) {
  return guarded("ceilings", [&]() {
    std::string context = "1048576", budget = "8192,4096", g = "4", format = "table", scenario;
    int chunk = 16, window = 128;
    po::options_description opts("cisa-sim ceilings options");
    opts.add_options()("help,h", "show this help")(
        "context", po::value(&context), "history lengths L in tokens, comma-separated (1M = 1048576)")(
        "budget", po::value(&budget), "chunk budgets K, comma-separated")(
        "G", po::value(&g), "QShare group sizes, comma-separated")(
        "chunk", po::value(&chunk), "chunk size c in tokens (default 16)")(
        "window", po::value(&window), "recent window W in pages (default 128)")(
        "scenario", po::value(&scenario), "take L, K, G, c, W from a scenario's points instead")(
        "format,f", po::value(&format), "table | csv | markdown | json");
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    if (vm.count("help")) {
      std::cout << "The paper's analytical ceilings: per-position dense / CISA bytes, with d_r = d and\n"
                   "equal dtypes. 'window_*' columns add the recent window and a half-full tail.\n\n"
                << opts;
      return kExitOk;
    }
    po::notify(vm);
    if (chunk < 1) throw InputError({"command line", 0, "--chunk"}, "must be >= 1");
    if (window < 0) throw InputError({"command line", 0, "--window"}, "must be >= 0");
    std::vector<CeilingInput> rows;
    if (!scenario.empty()) {
      const Scenario sc = load_scenario(scenario, {});
      std::set<std::tuple<std::int64_t, std::int64_t, int, int, int>> seen;
      for (const auto& p : sc.points) {
        const auto key = std::make_tuple(p.work.context_tokens, p.cisa.budget_chunks, p.cisa.qshare_g,
                                         p.cisa.chunk_tokens, p.cisa.window_pages);
        if (p.work.phase != Phase::decode && seen.insert(key).second)
          rows.push_back({p.work.context_tokens, p.cisa.budget_chunks, p.cisa.qshare_g, p.cisa.chunk_tokens, p.cisa.window_pages});
      }
    } else {
      for (auto L : parse_int_list("context", context))
        for (auto K : parse_int_list("budget", budget))
          for (auto G : parse_int_list("G", g)) {
            if (G > 1 << 20) throw InputError({"command line", 0, "--G"}, "G out of range");
            rows.push_back({L, K, static_cast<int>(G), chunk, window});
          }
    }
    const Table t = ceilings_table(rows);
    warn_degenerate(rows);
    const std::vector<ShownColumn> shown = {
        {"context_tokens", "context", 1, "tokens", 8}, {"budget_chunks", "budget K", 1, "chunks", 6},
        {"qshare_g", "G", 1, "", 4}, {"nominal_compression", "nominal", 1, "x", 4},
        {"ceiling_near_end_prefill", "near-end prefill", 1, "x", 4},
        {"ceiling_full_prefill", "full prefill", 1, "x", 4}, {"ceiling_decode", "decode", 1, "x", 4},
        {"window_kv_only", "+window K/V only", 1, "x", 4},
        {"window_near_end_prefill", "+window near-end", 1, "x", 4},
        {"window_decode", "+window decode", 1, "x", 4}};
    if (format == "csv") {
      write_csv(std::cout, t);
    } else if (format == "json") {
      write_json(std::cout, t, {});
    } else if (format == "markdown") {
      std::cout << "Ideal per-query traffic ceilings of CISA (dense / CISA bytes; c = chunk tokens, "
                   "d_r = d, equal dtypes; the window columns add W pages and a half-full tail).\n\n";
      write_markdown(std::cout, t, shown);
    } else if (format == "table") {
      print_ceilings(std::cout, t);
    } else {
      throw InputError({"command line", 0, "--format"}, "unknown format '" + format + "' (table, csv, markdown, json)");
    }
    return kExitOk;
  });
}

}  // namespace cisa::cli
