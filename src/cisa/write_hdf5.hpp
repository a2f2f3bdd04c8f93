// HDF5 output and input. Layout (stable; analysis/ reads only this):
//   file attributes (fixed-length UTF-8 strings): tool_version, git_hash, created_utc, command_line, scenario_yaml,
//                              hardware_yaml, and any others the caller adds
//   /<group>/<column>        1-D dataset per column, all of one length;
//                            float64 | int64 | fixed-length null-padded UTF-8 string;
//                            attributes: unit (string), description (string);
//                            contiguous, or (columns that compress well, in streamed files and
//                            held tables of >= 4,096 rows) chunked with HDF5's deflate filter; a
//                            column of one value there: its fill value (CISA_H5_DEFLATE=0: neither
//                            deflate nor, in held tables, fill values)
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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads a group written by write_hdf5 back into a Table (used by tests, `merge`,
// `--measurements`). Throws InputError naming the file and dataset for a corrupt or foreign file.
Table read_hdf5_group(const std::filesystem::path& path, const std::string& group);
Attributes read_hdf5_attributes(const std::filesystem::path& path);

}  // namespace cisa
