// A columnar table with units: the one in-memory form every output (HDF5, csv, json, text,
// markdown) is written from. Columns have equal length; numeric columns are float64 or int64,
// text columns are strings. NaN marks "not measured / not applicable".
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace cisa {

struct Column {
  std::string name;
  std::string unit;         // "bytes", "ms", "tokens", "x" (ratio), "" for labels
  std::string description;  // one line: what it is and which view (ceiling / time) it comes from
  std::variant<std::vector<double>, std::vector<std::int64_t>, std::vector<std::string>> data;

  std::size_t size() const;
  bool is_text() const { return std::holds_alternative<std::vector<std::string>>(data); }
  std::string format_cell(std::size_t row, int precision = 6) const;
};

class Table {
 public:
  // Adding a column with an existing name throws std::logic_error.
  std::vector<double>& add_f64(const std::string& name, const std::string& unit,
                               const std::string& description);
  std::vector<std::int64_t>& add_i64(const std::string& name, const std::string& unit,
                                     const std::string& description);
  std::vector<std::string>& add_text(const std::string& name, const std::string& description);

  const std::deque<Column>& columns() const { return columns_; }
  const Column* find(const std::string& name) const;
  std::size_t rows() const;  // throws std::logic_error if columns differ in length
  void reserve(std::size_t rows);

 private:
  std::deque<Column> columns_;  // deque: references returned by add_* stay valid
};

// File-level attributes (provenance): tool_version, git_hash, scenario_yaml, hardware_yaml, ...
using Attributes = std::map<std::string, std::string>;

}  // namespace cisa
