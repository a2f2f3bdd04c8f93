// Text renderings of a Table: csv, json (records), markdown, and the aligned console table.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cisa/table.hpp"

namespace cisa {

void write_csv(std::ostream& os, const Table& t);
void write_json(std::ostream& os, const Table& t, const Attributes& attributes);

// The same texts written a chunk of rows at a time (write_csv = header + rows; write_json =
// begin + rows + end). Rows are formatted on `threads` threads and written in order.
void write_csv_header(std::ostream& os, const Table& schema);
void write_csv_rows(std::ostream& os, const Table& t, unsigned threads = 1);
// write_csv_rows for a stream of chunks (of one schema): its buffers and threads' scratch are
// kept from chunk to chunk. Rows are formatted on `threads` threads while the calling thread
// writes the finished ones, in order.
class CsvRowWriter {
 public:
  explicit CsvRowWriter(unsigned threads = 1);
  ~CsvRowWriter();
  CsvRowWriter(const CsvRowWriter&) = delete;
  CsvRowWriter& operator=(const CsvRowWriter&) = delete;
  void write(std::ostream& os, const Table& chunk);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
void write_json_begin(std::ostream& os, const Table& schema, const Attributes& attributes);
// `first`: no row was written before this chunk.
void write_json_rows(std::ostream& os, const Table& t, bool first, unsigned threads = 1);
void write_json_end(std::ostream& os);
// A CSV cell of write_csv (Column::format_cell(row, 10), quoted where needed), appended to out.
void append_csv_cell(std::string& out, const Column& c, std::size_t row);
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
