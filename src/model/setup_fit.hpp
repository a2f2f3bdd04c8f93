// The setup copy's step latency from calibrate's pipeline steps (every step shape it times, prefill
// and decode): t = latency + descriptor bytes / the card's host-to-device bandwidth, one pinned copy
// queued behind the index projection. Copies of at most the inline size take the card's small-copy
// latency instead (model/roofline.cpp setup_time) and are left out of the fit.
#pragma once

#include <string>
#include <vector>

namespace cisa {

struct SetupSample {
  double bytes = 0;  // the model's descriptor blob (descriptor_blob_bytes)
  double t_s = 0;    // measured setup component
};

struct SetupFit {
  bool ok = false;
  double latency_s = 0;
  // measured / predicted - 1 over the fitted steps
  double rms_rel = 0, median_rel = 0, worst_rel = 0;
  int fitted = 0, small = 0, artefacts = 0;  // steps fitted / left out as small copies / as artefacts
  std::string note;                                   // why not ok
};

// Least absolute relative deviation (measured / predicted - 1, the error the measured tables
// report) over the samples with bytes > inline_bytes (inline_bytes 0: all) and at most
// kArtefactFactor x the form at the samples' median latency (a step's setup event time of
// 0.15-0.9 ms, the queue spin's scale, is a timing artefact: NOTES session 13); refused with fewer
// than 3 such steps or a latency <= 0.
inline constexpr double kArtefactFactor = 4.0;
SetupFit fit_setup_latency(const std::vector<SetupSample>& samples, double bw_Bps,
                           double inline_bytes);

}  // namespace cisa
