// The default run's stdout: a header that describes the effective model and GPU (after --set)
// and a table of the key columns that fits 120 characters, or the columns the user names.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cisa/scenario.hpp"
#include "cisa/table.hpp"
#include "cli/fit_table.hpp"

namespace cisa::cli {

struct RunTableOptions {
  std::vector<std::string> columns;  // --columns a,b,c: exactly these /points columns
  bool wide = false;                 // --wide: every key column, no width limit
  std::size_t max_rows = 40;         // --max-rows: head and tail of longer tables (0: all)
  bool markdown = false;             // --format markdown
};

void print_run_header(std::ostream& os, const Scenario& sc, const Table& t, const Attributes& attrs);
// Throws InputError naming an unknown --columns entry (with a suggestion).
void print_run_table(std::ostream& os, const Table& t, const RunTableOptions& opt);
// Names the points whose budget covers the whole history (K x c >= L: CISA runs dense there).
void print_budget_warning(std::ostream& os, const Table& t);
// One line per phase: min / median / max of the speedups over the points (long sweeps).
void print_run_summary(std::ostream& os, const Table& t);

}  // namespace cisa::cli
