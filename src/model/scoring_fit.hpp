// The prefill scoring kernels' terms from measured steps (calibrate's top-k grid: the same timed
// steps): t = floor + summed queries x query time + max(reads / read rate, writes / write rate)
// + load steps x step time (the step time measured apart). Reads (representatives) and writes
// (16-bit keys) overlap, so the slower stream sets the time: both rates need shapes where each
// dominates (G = 1: writes; G >= 16 on long contexts: reads).
#pragma once

#include <string>
#include <vector>

namespace cisa {

struct ScoringSample {
  double read_bytes = 0, write_bytes = 0;  // the model's DRAM bytes of the shape
  double summed_queries = 0;               // index queries one thread sums (G)
  double fixed_s = 0;                      // known part: load steps x step time
  double t_s = 0;                          // measured
};

struct ScoringFit {
  bool ok = false;
  double floor_s = 0, query_s = 0, read_Bps = 0, write_Bps = 0;
  double rms_rel = 0;  // root mean square of relative residuals
  std::string note;    // why not ok
};

// Least squares of relative residuals; the rates searched on a log grid (each between 0.1 and 10
// TB/s), floor and query time solved linearly at each (both >= 0).
ScoringFit fit_scoring_prefill(const std::vector<ScoringSample>& samples);

}  // namespace cisa
