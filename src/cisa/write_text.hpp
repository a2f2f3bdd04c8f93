// Text renderings of a Table: csv, json (records), markdown, and the aligned console table.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cisa/table.hpp"

namespace cisa {

void write_csv(std::ostream& os, const Table& t);
void write_json(std::ostream& os, const Table& t, const Attributes& attributes);
// Only the named columns, with "header [unit]" titles; scale divides numeric cells (e.g. 1e9
// to print GB) and is shown in the unit.
struct ShownColumn {
  std::string name;
  std::string title;
  double scale = 1.0;
  std::string unit;  // shown unit after scaling; "" keeps the column's unit
  int precision = 4;
};
void write_aligned(std::ostream& os, const Table& t, const std::vector<ShownColumn>& cols);
void write_markdown(std::ostream& os, const Table& t, const std::vector<ShownColumn>& cols);

// Writes text to path atomically (temp file + rename); creates parent folders.
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace cisa
