// The decode step's attention (CISA: the selected, window and tail pages of every (sequence, KV
// head) gathered at random) from calibrate's decode steps: t = launches x floor + DRAM bytes / rate.
// At calibrate's decode shapes (r = 4, one KV head, 8-48 sequences, 64K-1M tokens) the page
// gathers bind, not the page visits nor the MMAs. One floor measured on a tiny step (the attention
// floor_us) over-counts the fixed time of larger decode grids, whose combine and launch overlap
// their streams (NOTES session 14): hence the decode attention's own floor and rate.
#pragma once

#include <string>
#include <vector>

namespace cisa {

struct DecodeAttentionSample {
  double bytes = 0;     // the model's DRAM bytes of the step's CISA attention
  double launches = 1;  // its launches (attention, and the combine when the KV is split)
  double t_s = 0;       // measured attention component
};

struct DecodeAttentionFit {
  bool ok = false;
  double floor_s = 0, read_Bps = 0;
  double rms_rel = 0, worst_rel = 0;  // relative residuals over the samples
  std::string note;                   // why not ok
};

// Relative least squares (both terms > 0), refused with fewer than 3 timed steps.
DecodeAttentionFit fit_decode_attention(const std::vector<DecodeAttentionSample>& samples);

}  // namespace cisa
