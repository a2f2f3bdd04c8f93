// cisa-sim merge: the HDF5 files of `cisa-sim --shard i/N` runs of one scenario joined into one,
// rows in point_index order, laid out as write_hdf5 lays out a held table.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cisa {

struct MergeResult {
  std::size_t rows = 0;   // points written
  bool streamed = false;  // false: a shard was not sorted by point_index; merged in memory
};

// Refuses (InputError, exit 2, naming the file and dataset) files from different scenarios,
// tool versions or bases, a shard given twice, a point in two files, columns that differ, and
// corrupt files; warns on stderr when points_total says points are missing. Shards each sorted
// by point_index are merged a block of rows at a time (memory bounded by the blocks and a byte
// a row); others are held and sorted in memory. The output is written atomically (OutputFile).
MergeResult merge_shards(const std::vector<std::string>& inputs, const std::string& out,
                         const std::string& command_line);

}  // namespace cisa
