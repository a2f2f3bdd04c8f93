// HDF5 output. Layout (stable; analysis/ reads only this):
//   file attributes (strings): tool_version, git_hash, created_utc, command_line, scenario_yaml,
//                              hardware_yaml, and any others the caller adds
//   /<group>/<column>        1-D dataset per column, all of one length;
//                            float64 | int64 | fixed-length null-padded UTF-8 string;
//                            attributes: unit (string), description (string)
// The file is written to "<path>.tmp.<pid>" and renamed over <path> only when complete, so a
// failure never leaves a half-written file or destroys an older one.
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

void write_hdf5(const std::filesystem::path& path, const std::vector<Hdf5Group>& groups,
                const Attributes& attributes);

// Reads a group written by write_hdf5 back into a Table (used by tests and `merge`).
Table read_hdf5_group(const std::filesystem::path& path, const std::string& group);
Attributes read_hdf5_attributes(const std::filesystem::path& path);

}  // namespace cisa
