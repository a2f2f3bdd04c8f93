// The prefill scoring kernels' terms from measured steps (calibrate's top-k grid and its scoring
// shapes: the same timed steps): t = floor + summed queries x query time + max(reads / read rate +
// writes / write rate, issued FLOPs / MMA rate) + load steps x step time (the step time measured
// apart). Representative reads and 16-bit key writes share the HBM (their times add); both overlap
// the MMAs, so the slower of bytes and MMAs sets the time. Each rate needs shapes where it weighs
// (G = 1: writes; several KV heads or G >= 16 on long contexts: reads; groups that fill part of
// their warpgroups: the MMAs). ScoringStreams::overlapped is the earlier form, max(R/rb, W/wb,
// F/mf), kept for comparison in calibrate's method text.
#pragma once

#include <string>
#include <vector>

#include "model/implementation.hpp"

namespace cisa {

struct ScoringSample {
  double read_bytes = 0, write_bytes = 0;  // the model's DRAM bytes of the shape
  double summed_queries = 0;               // index queries one thread sums (G)
  double fixed_s = 0;                      // known part: load steps x step time
  double t_s = 0;                          // measured
  double issued_flops = 0;                 // the MMAs the kernel issues (whole warpgroups)
};

struct ScoringFit {
  bool ok = false;
  double floor_s = 0, query_s = 0, read_Bps = 0, write_Bps = 0;
  double mma_flops = 0;     // 0: no shape is bound by its MMAs (no such term)
  bool writes_bind = true;  // false: the MMAs bind first wherever the writes would
  bool reads_bind = true;   // false: likewise the reads
  double rms_rel = 0;  // root mean square of relative residuals
  std::string note;    // why not ok
};

// Least squares of relative residuals; the byte rates searched on a log grid (each between 0.1 and
// 10 TB/s) at each MMA rate of an outer log grid (20-2,000 TF/s, and none), floor and query time
// solved linearly at each (both >= 0). The MMA term is kept only if the fit needs it.
ScoringFit fit_scoring_prefill(const std::vector<ScoringSample>& samples,
                               ScoringStreams streams = ScoringStreams::shared);

}  // namespace cisa
