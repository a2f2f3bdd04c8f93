#include "cisa/write_text.hpp"

#include "cisa/output_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace cisa {

namespace {

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<int>(ch));
        else
          out += ch;
    }
  }
  return out;
}

std::string cell(const Column& c, std::size_t row, const ShownColumn& s) {
  if (const auto* f = std::get_if<std::vector<double>>(&c.data)) {
    const double v = (*f)[row] / s.scale;
    if (std::isnan(v)) return "-";
    if (v != 0 && (std::fabs(v) >= 1e7 || std::fabs(v) < 1e-3)) return fmt::format("{:.{}e}", v, s.precision - 1);
    return fmt::format("{:.{}f}", v, std::max(0, s.precision - 1 - static_cast<int>(std::floor(std::log10(std::max(std::fabs(v), 1.0))))));
  }
  if (s.scale != 1.0)
    if (const auto* i = std::get_if<std::vector<std::int64_t>>(&c.data))
      return fmt::format("{:g}", static_cast<double>((*i)[row]) / s.scale);
  return c.format_cell(row);
}

std::vector<std::vector<std::string>> render(const Table& t, const std::vector<ShownColumn>& cols,
                                             std::vector<std::string>& titles) {
  std::vector<std::vector<std::string>> cells;
  const std::size_t n = t.rows();
  for (const auto& s : cols) {
    const Column* c = t.find(s.name);
    if (!c) throw std::logic_error("no column " + s.name);
    const std::string unit = s.unit.empty() ? c->unit : s.unit;
    titles.push_back(unit.empty() ? s.title : s.title + " [" + unit + "]");
    std::vector<std::string> col;
    for (std::size_t r = 0; r < n; ++r) col.push_back(cell(*c, r, s));
    cells.push_back(std::move(col));
  }
  return cells;
}

}  // namespace

void write_csv(std::ostream& os, const Table& t) {
  const auto& cols = t.columns();
  for (std::size_t i = 0; i < cols.size(); ++i) os << (i ? "," : "") << csv_escape(cols[i].name);
  os << '\n';
  const std::size_t n = t.rows();
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < cols.size(); ++i)
      os << (i ? "," : "") << csv_escape(cols[i].format_cell(r, 10));
    os << '\n';
  }
}

void write_json(std::ostream& os, const Table& t, const Attributes& attributes) {
  os << "{\n  \"attributes\": {";
  bool first = true;
  for (const auto& [k, v] : attributes) {
    os << (first ? "\n" : ",\n") << "    \"" << json_escape(k) << "\": \"" << json_escape(v) << "\"";
    first = false;
  }
  os << "\n  },\n  \"units\": {";
  const auto& cols = t.columns();
  for (std::size_t i = 0; i < cols.size(); ++i)
    os << (i ? ", " : "") << "\"" << cols[i].name << "\": \"" << json_escape(cols[i].unit) << "\"";
  os << "},\n  \"points\": [";
  const std::size_t n = t.rows();
  for (std::size_t r = 0; r < n; ++r) {
    os << (r ? ",\n" : "\n") << "    {";
    for (std::size_t i = 0; i < cols.size(); ++i) {
      os << (i ? ", " : "") << "\"" << cols[i].name << "\": ";
      const Column& c = cols[i];
      if (c.is_text()) {
        os << "\"" << json_escape(c.format_cell(r)) << "\"";
      } else if (const auto* f = std::get_if<std::vector<double>>(&c.data)) {
        os << (std::isfinite((*f)[r]) ? fmt::format("{:.17g}", (*f)[r]) : std::string("null"));
      } else {
        os << c.format_cell(r);
      }
    }
    os << "}";
  }
  os << "\n  ]\n}\n";
}

void write_aligned(std::ostream& os, const Table& t, const std::vector<ShownColumn>& cols) {
  std::vector<std::string> titles;
  const auto cells = render(t, cols, titles);
  std::vector<std::size_t> width(cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    width[i] = titles[i].size();
    for (const auto& s : cells[i]) width[i] = std::max(width[i], s.size());
  }
  for (std::size_t i = 0; i < cols.size(); ++i) os << (i ? "  " : "") << fmt::format("{:>{}}", titles[i], width[i]);
  os << '\n';
  for (std::size_t i = 0; i < cols.size(); ++i) os << (i ? "  " : "") << std::string(width[i], '-');
  os << '\n';
  const std::size_t n = t.rows();
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < cols.size(); ++i) os << (i ? "  " : "") << fmt::format("{:>{}}", cells[i][r], width[i]);
    os << '\n';
  }
}

void write_markdown(std::ostream& os, const Table& t, const std::vector<ShownColumn>& cols) {
  std::vector<std::string> titles;
  const auto cells = render(t, cols, titles);
  os << "|";
  for (const auto& s : titles) os << ' ' << s << " |";
  os << "\n|";
  for (std::size_t i = 0; i < cols.size(); ++i) os << "---:|";
  os << '\n';
  const std::size_t n = t.rows();
  for (std::size_t r = 0; r < n; ++r) {
    os << "|";
    for (std::size_t i = 0; i < cols.size(); ++i) os << ' ' << cells[i][r] << " |";
    os << '\n';
  }
}

void write_file_atomic(const std::string& path, const std::string& text) { write_text_output(path, text); }

}  // namespace cisa
