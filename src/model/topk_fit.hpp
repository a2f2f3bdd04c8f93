// Top-k calibration fit: the model's top-k time (roofline.hpp, TopkTerms), floor + waves x CTA
// time + cluster waves x merge time + key passes / key rate + written IDs / ID rate along the
// busiest SM, solved by least squares of relative residuals over measured reference shapes.
// Pure: numbers in, numbers out.
#pragma once

#include <string>
#include <vector>

namespace cisa {

struct TopkSample {
  double waves = 0;          // waves of co-resident CTAs
  double cluster_waves = 0;  // waves x (CTAs per row - 1)
  double key_passes = 0;     // keys x radix passes on the busiest SM, summed over waves
  double ids = 0;            // page IDs written on the busiest SM, summed over waves
  double seconds = 0;        // measured top-k time of the shape
};

struct TopkFit {
  bool ok = false;
  double floor_s = 0;    // per launch
  double cta_s = 0;      // fixed time per wave (0 when the data do not support it: see note)
  double cluster_s = 0;  // per wave and other CTA of a row (0 when the data do not support it)
  double key_passes_per_s = 0, ids_per_s = 0;  // per SM
  double rms_rel = 0;  // root-mean-square relative residual over the samples
  std::string note;    // which form was solved
};

// Solves all five (at least 5 samples, every value positive); else without the cluster term;
// else without the CTA term either (3 unknowns).
TopkFit fit_topk(const std::vector<TopkSample>& samples);

// The decode step's top-k: floor (launch and first wave) + cluster waves x merge time + key passes
// / key rate, after the later waves' CTA time (cta_s) and the IDs (ids_per_s) of the prefill fit
// are taken off each measured time; relative least squares, without the merge term when it does not
// solve positive (then cluster_s = 0). ids_per_s of the result is the one given.
TopkFit fit_topk_decode(const std::vector<TopkSample>& samples, double cta_s, double ids_per_s);

}  // namespace cisa
