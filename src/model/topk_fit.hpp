// Top-k calibration fit: the model's top-k time, floor + waves x (CTA fixed time + key passes /
// key rate + written IDs / ID rate), solved by least squares over measured reference shapes.
// Pure: numbers in, numbers out.
#pragma once

#include <string>
#include <vector>

namespace cisa {

struct TopkSample {
  double waves = 0;         // waves of CTAs (one CTA per SM)
  double key_passes = 0;    // keys per CTA x radix passes
  double ids = 0;           // page IDs written per CTA
  double seconds = 0;       // measured top-k time of the shape
};

struct TopkFit {
  bool ok = false;
  double floor_s = 0;     // per launch
  double cta_s = 0;       // fixed time per CTA (0 when the data do not support it: see note)
  double key_passes_per_s = 0, ids_per_s = 0;  // per CTA slot (SM)
  double rms_rel = 0;     // root-mean-square relative residual over the samples
  std::string note;       // which form was solved
};

// Solves floor, cta, 1/key rate and 1/ID rate (4 unknowns) when there are at least 4 samples and
// every value comes out positive; otherwise floor, 1/key rate, 1/ID rate with no CTA term.
TopkFit fit_topk(const std::vector<TopkSample>& samples);

}  // namespace cisa
