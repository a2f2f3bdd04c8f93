// The default run's stdout: a header that describes the effective model and GPU (after --set)
// and a table of the key columns that fits 120 characters, or the columns the user names.
#pragma once

#include <array>
#include <cstdint>
#include <cstddef>
#include <limits>
#include <map>
#include <ostream>
#include <set>
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

// What the console output needs of a run's table, gathered a chunk at a time (a streamed sweep is
// never held): the head and tail rows it shows, the distinct values of the key columns, the
// budget warning's count and the speedups the summary takes medians of (at most kMaxSummary
// values per phase and column; beyond, every n-th, said in the summary).
class RunDigest {
 public:
  static constexpr std::size_t kMaxSummary = std::size_t{1} << 21;  // 16 MB a series
  static constexpr std::size_t kMaxDistinct = 4096;  // values a key column lists (a streamed run)
  // rows: the rows to come; max_rows: rows shown (0: all, the whole table is kept).
  RunDigest(const Table& schema, std::size_t rows, std::size_t max_rows);
  void add(const Table& chunk);  // the next rows, in order
  void adopt(Table&& whole);     // the whole table at once (max_rows 0): kept as `shown`, not copied

  std::size_t rows = 0, seen = 0;
  std::size_t head = 0;  // rows [0, head) and [rows - (shown.rows() - head), rows) are in `shown`
  Table shown;
  std::map<std::string, std::set<std::string>> distinct;  // of the key columns (formatted cells)
  std::size_t budget_covers = 0;                          // rows with K x c >= L
  std::vector<std::string> summary_columns;               // the speedups summarised
  struct Series {  // finite values of one speedup column in one phase
    std::vector<double> values;  // every stride-th
    std::size_t stride = 1, count = 0;
    double min = std::numeric_limits<double>::infinity(), max = -std::numeric_limits<double>::infinity();
    void push(double v);
  };
  struct PhaseValues {
    std::size_t count = 0;  // rows
    std::vector<Series> series;  // per summary column
  };
  std::map<std::string, PhaseValues> phases;

 private:
  struct Distinct {
    std::set<std::uint64_t> numbers;  // bit patterns
    std::set<std::string> texts;
    // Bit patterns known to be in `numbers`, by slot (recent_set: the slot holds one).
    static std::size_t slot(std::uint64_t bits) {
      return static_cast<std::size_t>((bits * 0x9E3779B97F4A7C15ULL) >> 58);
    }
    std::array<std::uint64_t, 64> recent{};
    std::array<bool, 64> recent_set{};
  };
  std::map<std::string, Distinct> raw_;
  std::size_t max_rows_ = 0;
  bool copy_rows_ = true;
  std::size_t distinct_cap_ = SIZE_MAX;
};

void print_run_header(std::ostream& os, const Scenario& sc, const RunDigest& d, const Attributes& attrs);
void print_run_table(std::ostream& os, const RunDigest& d, const RunTableOptions& opt);
void print_budget_warning(std::ostream& os, const RunDigest& d);
void print_run_summary(std::ostream& os, const RunDigest& d);
void print_run_header(std::ostream& os, const Scenario& sc, const Table& t, const Attributes& attrs);
// Throws InputError naming an unknown --columns entry (with a suggestion).
void print_run_table(std::ostream& os, const Table& t, const RunTableOptions& opt);
// Names the points whose budget covers the whole history (K x c >= L: CISA runs dense there).
void print_budget_warning(std::ostream& os, const Table& t);
// One line per phase: min / median / max of the speedups over the points (long sweeps).
void print_run_summary(std::ostream& os, const Table& t);

}  // namespace cisa::cli
