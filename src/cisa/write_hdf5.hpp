// HDF5 output and input. Layout (stable; analysis/ reads only this):
//   file attributes (fixed-length UTF-8 strings): tool_version, git_hash, created_utc,
//   command_line, scenario_yaml,
//                              hardware_yaml, and any others the caller adds
//   /<group>/<column>        1-D dataset per column, all of one length;
//                            float64 | int64 | fixed-length null-padded UTF-8 string;
//                            attributes: unit (string), description (string);
//                            contiguous, or (columns that compress well, in streamed files and
//                            held tables of >= 4,096 rows) chunked with HDF5's deflate filter
//                            (numbers that pack only as bytes: the shuffle filter, then deflate); a
//                            column of one value there: its fill value (streamed, one value in the
//                            first chunk only: chunked and deflated with that fill value)
//                            (CISA_H5_DEFLATE=0: neither deflate nor, in held tables, fill values)
// (Older files have variable-length string attributes; the readers accept both.)
// Files are written in the HDF5 1.10 file format (superblock v3, checksummed metadata: a
// corrupted header is detected, not followed) through OutputFile (output_file.hpp): a temp file
// in the target's folder, every HDF5 object closed and every return checked, fsync, rename.
// The readers validate what they read: rank 1, equal lengths, numeric or string types, string
// attributes; a bad file is an InputError (exit 2) naming the file and the dataset.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cisa/table.hpp"

namespace cisa {

struct Hdf5Group {
  std::string name;  // e.g. "points"
  const Table* table;
};

// Columns are laid out as Hdf5TableStream lays out one chunk of all the rows (chunks of 16,384
// rows), for tables of at least 4,096 rows; shorter tables are contiguous.
// Throws OutputError (write failed; the old file is unchanged) or InputError (bad target).
void write_hdf5(const std::filesystem::path& path, const std::vector<Hdf5Group>& groups,
                const Attributes& attributes);

// The same file written a chunk of rows at a time (sweeps too large to hold): the file and its
// attributes are created first, the group's datasets (`rows` long) with the first chunk
// (contiguous; a column of one value so far: its fill value; one that compresses well: chunks of
// the first chunk's rows, deflated, unless CISA_H5_DEFLATE=0); append() writes the next rows of
// every column, commit() checks that all `rows` came and renames the temp file over the target.
// Text columns are fixed-length strings of text_widths[name] bytes (a longer value is a
// std::logic_error). Without commit() (an error, a signal) nothing is left at the target. Errors
// as write_hdf5.
class Hdf5TableStream {
 public:
  Hdf5TableStream(const std::filesystem::path& path, const std::string& group, const Table& schema,
                  std::size_t rows, const std::map<std::string, std::size_t>& text_widths,
                  const Attributes& attributes);
  ~Hdf5TableStream();
  Hdf5TableStream(const Hdf5TableStream&) = delete;
  Hdf5TableStream& operator=(const Hdf5TableStream&) = delete;
  void append(const Table& chunk);  // same columns as the schema
  void commit();
  // Threads append() may use to encode a chunk's deflated columns (default 1); the file is the
  // same.
  void set_threads(unsigned threads);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A held table written a column at a time, laid out exactly as write_hdf5 lays out the whole
// table (merge: shards larger than memory). The caller gives, per column, what write_hdf5 would
// find in the whole column: whether every row holds one value, and a text column's longest value.
// Errors and atomicity as write_hdf5 (nothing at the target without commit()).
class Hdf5ColumnStream {
 public:
  Hdf5ColumnStream(const std::filesystem::path& path, const std::string& group, std::size_t rows,
                   const Attributes& attributes);
  ~Hdf5ColumnStream();
  Hdf5ColumnStream(const Hdf5ColumnStream&) = delete;
  Hdf5ColumnStream& operator=(const Hdf5ColumnStream&) = delete;
  // Whether columns are packed (write_hdf5's layout for >= 4,096 rows with deflate on): only
  // then does a column's `uniform` matter.
  bool packs() const;
  // append() takes blocks of this many rows (the last one may be shorter).
  std::size_t block_rows() const;
  // Starts the next column (name, unit, description, type from `head`). head: the column's first
  // block (>= min(rows, 4,096) rows: the deflate test's sample) or, when `uniform`, at least its
  // first row: every row holds that value, nothing is appended. width: for text, the longest
  // value's bytes (>= 1).
  void begin(const Column& head, bool uniform, std::size_t width);
  void append(const Column& block);  // the column's next rows
  void end();                        // all `rows` rows given (or uniform)
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A group read a range of rows of a column at a time (merge of shards larger than memory).
// Opening checks what read_hdf5_group checks except the data; a failed read (a corrupt chunk)
// is an InputError naming the file and dataset. One column's dataset is open at a time per
// release() (its chunk cache).
class Hdf5GroupReader {
 public:
  Hdf5GroupReader(const std::filesystem::path& path, const std::string& group);
  ~Hdf5GroupReader();
  Hdf5GroupReader(const Hdf5GroupReader&) = delete;
  Hdf5GroupReader& operator=(const Hdf5GroupReader&) = delete;
  std::size_t rows() const;
  const Table& schema() const;  // the columns (names, units, types), no rows
  // Whether column k was never written: every row reads as its fill value (one value).
  bool fill_only(std::size_t k) const;
  // Rows [begin, begin + n) of column k into out.data (replaced; float64, int64 or strings).
  void read(std::size_t k, std::size_t begin, std::size_t n, Column& out);
  void release(std::size_t k);  // closes column k's dataset (frees its chunk cache)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads a group written by write_hdf5 back into a Table (used by tests, `merge`,
// `--measurements`). Throws InputError naming the file and dataset for a corrupt or foreign file.
Table read_hdf5_group(const std::filesystem::path& path, const std::string& group);
Attributes read_hdf5_attributes(const std::filesystem::path& path);

}  // namespace cisa
