// Console tables that fit a terminal: columns carry a priority, the lowest-priority ones are left
// out (and named) until the table fits the width; long tables show their head and tail rows.
// Numbers print with a few significant figures (fmt_sig) and times in ms or us (time_unit).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace cisa::cli {

constexpr std::size_t kTableWidth = 120;

struct TextColumn {
  std::string title;
  std::vector<std::string> cells;
  int priority = 0;         // 0 = always shown; higher numbers are left out first
  bool left_align = false;  // labels; numbers align right
};

struct FitResult {
  std::vector<std::string> left_out;  // titles of the columns that did not fit
  std::size_t rows_hidden = 0;
};

// Prints the columns that fit `width` (0: no limit) and at most `max_rows` rows (0: all; else the
// first and last max_rows/2 with a "... N rows ..." line between them).
// `hidden` > 0: the cells hold only a head and a tail already (a streamed sweep); the "... hidden
// rows ..." line goes after the first `hidden_at` rows.
FitResult print_fitted(std::ostream& os, std::vector<TextColumn> cols, std::size_t width, std::size_t max_rows,
                       std::size_t hidden = 0, std::size_t hidden_at = 0);

// `v` with `digits` significant figures, no exponent for 1e-3 <= |v| < 1e7 ("1.23", "45.6", "1234").
std::string fmt_sig(double v, int digits = 3);

// Token counts as 128K / 1M when exact, else the number.
std::string fmt_tokens(long long n);

// A time column in ms: "ms" when its largest value is >= 1 ms, else "us" (values scaled by 1e3).
// Returns the unit and sets `scale` (multiply ms values by it).
std::string time_unit(const std::vector<double>& ms, double& scale);

// "a,b,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_list(const std::string& text);

// Wraps `text` at spaces so that no line exceeds `width` (continuation lines get `indent`).
std::string wrap(const std::string& text, std::size_t width = kTableWidth, const std::string& indent = "  ");

}  // namespace cisa::cli
