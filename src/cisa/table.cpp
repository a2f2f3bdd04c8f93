#include "cisa/table.hpp"

#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace cisa {

std::size_t Column::size() const {
  return std::visit([](const auto& v) { return v.size(); }, data);
}

std::string Column::format_cell(std::size_t row, int precision) const {
  if (const auto* f = std::get_if<std::vector<double>>(&data)) {
    const double v = (*f)[row];
    if (std::isnan(v)) return "nan";
    return fmt::format("{:.{}g}", v, precision);
  }
  if (const auto* i = std::get_if<std::vector<std::int64_t>>(&data)) return std::to_string((*i)[row]);
  return std::get<std::vector<std::string>>(data)[row];
}

namespace {
template <class T>
std::vector<T>& add_column(std::deque<Column>& cols, const std::string& name, const std::string& unit,
                           const std::string& description) {
  for (const auto& c : cols)
    if (c.name == name) throw std::logic_error("duplicate column " + name);
  cols.push_back(Column{name, unit, description, std::vector<T>{}});
  return std::get<std::vector<T>>(cols.back().data);
}
}  // namespace

std::vector<double>& Table::add_f64(const std::string& name, const std::string& unit,
                                    const std::string& description) {
  return add_column<double>(columns_, name, unit, description);
}
std::vector<std::int64_t>& Table::add_i64(const std::string& name, const std::string& unit,
                                          const std::string& description) {
  return add_column<std::int64_t>(columns_, name, unit, description);
}
std::vector<std::string>& Table::add_text(const std::string& name, const std::string& description) {
  return add_column<std::string>(columns_, name, "", description);
}

const Column* Table::find(const std::string& name) const {
  for (const auto& c : columns_)
    if (c.name == name) return &c;
  return nullptr;
}

std::size_t Table::rows() const {
  if (columns_.empty()) return 0;
  const std::size_t n = columns_.front().size();
  for (const auto& c : columns_)
    if (c.size() != n) throw std::logic_error("column " + c.name + " has a different length");
  return n;
}

void Table::reserve(std::size_t rows) {
  for (auto& c : columns_) std::visit([rows](auto& v) { v.reserve(rows); }, c.data);
}

}  // namespace cisa
