// Scenario -> table of predictions, plus the provenance attributes every output carries.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "cisa/scenario.hpp"
#include "cisa/table.hpp"

namespace cisa {

// Every N-th point starting at `index` (for spreading a sweep over GPUs or job-array tasks).
struct Shard {
  int index = 0;
  int count = 1;
  bool takes(std::size_t point) const { return static_cast<int>(point % static_cast<std::size_t>(count)) == index; }
};
Shard parse_shard(const std::string& text);  // "i/N", 0 <= i < N; InputError otherwise

// progress(done, total) is called every few thousand points (may be empty).
Table evaluate_scenario(const Scenario& sc, const std::function<void(std::size_t, std::size_t)>& progress = {},
                        Shard shard = {});

// Rows of a shard of `points` points.
std::size_t shard_rows(std::size_t points, Shard shard);

struct StreamOptions {
  std::size_t chunk_rows = 16384;  // rows per chunk (memory: ~1.7 KB a row, two chunks held)
  unsigned threads = 1;            // evaluating a chunk's rows; the order of rows does not depend on it
  std::size_t hold_rows = 65536;   // cisa-sim run: tables of at most this many rows are held whole
};
// $CISA_CHUNK_ROWS (tests; also hold_rows) or 16384 rows; $CISA_THREADS or the machine's cores (at most 16).
StreamOptions stream_options();

// The scenario's points (from sc.sweep, never all held) evaluated in chunks of at most
// opt.chunk_rows rows, in point order, with the same rows and values as evaluate_scenario. sink
// gets each chunk in order (a table with the /points columns, reused two chunks later); with
// opt.threads > 1 it runs on another thread while the next chunk is evaluated (one call at a time).
void evaluate_scenario_chunks(const Scenario& sc, const std::function<void(const Table&)>& sink,
                              const std::function<void(std::size_t, std::size_t)>& progress = {},
                              Shard shard = {}, StreamOptions opt = {});

// The widths (bytes) of the /points text columns over the whole sweep, for fixed-length HDF5
// strings written before every row is known: exact but for dense_impl with "best", which gets
// the longest candidate's name.
std::map<std::string, std::size_t> text_column_widths(const Scenario& sc);

// tool_version, git_hash, created_utc, command_line, scenario_*, hardware_yaml, hw_* rates.
Attributes provenance(const Scenario& sc, const std::string& command_line, Shard shard = {});

// The attributes every output file carries: tool version, git hash, time, command line, scenario.
Attributes base_attributes(const std::string& command_line, const std::string& scenario_name, const std::string& file,
                           const std::string& text, const std::string& effective_yaml,
                           const std::vector<std::string>& overrides);

std::string utc_now_iso8601();

}  // namespace cisa
