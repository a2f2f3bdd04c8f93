#include "cli/fit_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cisa::cli {

namespace {

std::size_t col_width(const TextColumn& c) {
  std::size_t w = c.title.size();
  for (const auto& s : c.cells) w = std::max(w, s.size());
  return w;
}

std::size_t total_width(const std::vector<TextColumn>& cols) {
  std::size_t w = 0;
  for (const auto& c : cols) w += col_width(c) + (w ? 2 : 0);
  return w;
}

void print_row(std::ostream& os, const std::vector<TextColumn>& cols, const std::vector<std::size_t>& w,
               const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    if (i) line += "  ";
    line += cols[i].left_align ? fmt::format("{:<{}}", cells[i], w[i]) : fmt::format("{:>{}}", cells[i], w[i]);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  os << line << '\n';
}

}  // namespace

FitResult print_fitted(std::ostream& os, std::vector<TextColumn> cols, std::size_t width, std::size_t max_rows,
                       std::size_t hidden, std::size_t hidden_at) {
  FitResult res;
  while (width && total_width(cols) > width) {
    auto worst = cols.end();  // the last column of the highest priority number goes first
    for (auto it = cols.begin(); it != cols.end(); ++it)
      if (worst == cols.end() || it->priority >= worst->priority) worst = it;
    if (worst == cols.end() || worst->priority == 0) break;
    res.left_out.insert(res.left_out.begin(), worst->title);
    cols.erase(worst);
  }
  std::vector<std::size_t> w;
  std::vector<std::string> titles, rule;
  for (const auto& c : cols) {
    w.push_back(col_width(c));
    titles.push_back(c.title);
    rule.push_back(std::string(w.back(), '-'));
  }
  print_row(os, cols, w, titles);
  print_row(os, cols, w, rule);
  const std::size_t n = cols.empty() ? 0 : cols.front().cells.size();
  const bool given = hidden > 0;  // head and tail already cut
  const bool cut = given || (max_rows && n > max_rows);
  const std::size_t head = given ? std::min(hidden_at, n) : cut ? (max_rows + 1) / 2 : n;
  const std::size_t tail = given ? n - head : cut ? max_rows / 2 : 0;
  auto row = [&](std::size_t r) {
    std::vector<std::string> cells;
    for (const auto& c : cols) cells.push_back(c.cells[r]);
    print_row(os, cols, w, cells);
  };
  for (std::size_t r = 0; r < head; ++r) row(r);
  if (cut) {
    res.rows_hidden = given ? hidden : n - head - tail;
    os << fmt::format("  ... {} rows not shown (--max-rows 0 shows all; --format csv for every column) ...\n",
                      res.rows_hidden);
    for (std::size_t r = n - tail; r < n; ++r) row(r);
  }
  return res;
}

std::string fmt_sig(double v, int digits) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a < 1e-3 || a >= 1e7) return fmt::format("{:.{}e}", v, std::max(0, digits - 1));
  const int mag = static_cast<int>(std::floor(std::log10(a)));
  const int decimals = std::max(0, digits - 1 - mag);
  return fmt::format("{:.{}f}", v, decimals);
}

std::string fmt_tokens(long long n) {
  if (n >= 1024 * 1024 && n % (1024 * 1024) == 0) return fmt::format("{}M", n / (1024 * 1024));
  if (n >= 1024 && n % 1024 == 0) return fmt::format("{}K", n / 1024);
  return fmt::format("{}", n);
}

std::string time_unit(const std::vector<double>& ms, double& scale) {
  double top = 0;
  for (double v : ms)
    if (std::isfinite(v)) top = std::max(top, std::fabs(v));
  if (top > 0 && top < 1) {
    scale = 1e3;
    return "us";
  }
  scale = 1;
  return "ms";
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::string wrap(const std::string& text, std::size_t width, const std::string& indent) {
  std::string out, line;
  std::size_t start = 0;
  auto flush = [&]() {
    out += (out.empty() ? "" : "\n" + indent) + line;
    line.clear();
  };
  while (start <= text.size()) {
    std::size_t sp = text.find(' ', start);
    const std::string word = text.substr(start, sp == std::string::npos ? std::string::npos : sp - start);
    const std::size_t limit = out.empty() ? width : width - indent.size();
    if (!line.empty() && line.size() + 1 + word.size() > limit) flush();
    line += (line.empty() ? "" : " ") + word;
    if (sp == std::string::npos) break;
    start = sp + 1;
  }
  flush();
  return out;
}

}  // namespace cisa::cli
