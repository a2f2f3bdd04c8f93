// HDF5 output and input. Layout (stable; analysis/ reads only this):
//   file attributes (fixed-length UTF-8 strings): tool_version, git_hash, created_utc, command_line, scenario_yaml,
//                              hardware_yaml, and any others the caller adds
//   /<group>/<column>        1-D dataset per column, all of one length;
//                            float64 | int64 | fixed-length null-padded UTF-8 string;
//                            attributes: unit (string), description (string)
// (Older files have variable-length string attributes; the readers accept both.)
// Files are written in the HDF5 1.10 file format (superblock v3, checksummed metadata: a
// corrupted header is detected, not followed) through OutputFile (output_file.hpp): a temp file
// in the target's folder, every HDF5 object closed and every return checked, fsync, rename.
// The readers validate what they read: rank 1, equal lengths, numeric or string types, string
// attributes; a bad file is an InputError (exit 2) naming the file and the dataset.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cisa/table.hpp"

namespace cisa {

struct Hdf5Group {
  std::string name;  // e.g. "points"
  const Table* table;
};

// Throws OutputError (write failed; the old file is unchanged) or InputError (bad target).
void write_hdf5(const std::filesystem::path& path, const std::vector<Hdf5Group>& groups,
                const Attributes& attributes);

// Reads a group written by write_hdf5 back into a Table (used by tests, `merge`,
// `--measurements`). Throws InputError naming the file and dataset for a corrupt or foreign file.
Table read_hdf5_group(const std::filesystem::path& path, const std::string& group);
Attributes read_hdf5_attributes(const std::filesystem::path& path);

}  // namespace cisa
