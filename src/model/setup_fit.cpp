#include "model/setup_fit.hpp"

#include <algorithm>
#include <cmath>

namespace cisa {

SetupFit fit_setup_latency(const std::vector<SetupSample>& samples, double bw_Bps,
                           double inline_bytes) {
  SetupFit out;
  std::vector<SetupSample> v;
  for (const SetupSample& s : samples) {
    if (!(s.t_s > 0) || !std::isfinite(s.t_s) || !(s.bytes > 0)) continue;
    if (inline_bytes > 0 && s.bytes <= inline_bytes) {
      ++out.small;
      continue;
    }
    v.push_back(s);
  }
  if (!v.empty()) {  // drop artefacts: far above the form at the median latency
    std::vector<double> lat;
    for (const SetupSample& s : v) lat.push_back(s.t_s - s.bytes / bw_Bps);
    std::sort(lat.begin(), lat.end());
    const double l0 = std::max(0.0, lat[lat.size() / 2]);
    std::vector<SetupSample> kept;
    for (const SetupSample& s : v)
      if (s.t_s <= kArtefactFactor * (l0 + s.bytes / bw_Bps)) kept.push_back(s);
    out.artefacts = static_cast<int>(v.size() - kept.size());
    v.swap(kept);
  }
  out.fitted = static_cast<int>(v.size());
  if (v.size() < 3) {
    out.note = "fewer than 3 step copies above the inline size";
    return out;
  }
  // The latency minimising sum ((L + b_i / bw) / t_i - 1)^2.
  double num = 0, den = 0;
  for (const SetupSample& s : v) {
    num += (s.t_s - s.bytes / bw_Bps) / (s.t_s * s.t_s);
    den += 1.0 / (s.t_s * s.t_s);
  }
  out.latency_s = num / den;
  if (!(out.latency_s > 0)) {
    out.note = "the copies' bytes at the card's bandwidth exceed their times: no latency left";
    return out;
  }
  std::vector<double> err;
  double sq = 0;
  for (const SetupSample& s : v) {
    const double e = (out.latency_s + s.bytes / bw_Bps) / s.t_s - 1.0;
    sq += e * e;
    err.push_back(std::abs(e));
  }
  std::sort(err.begin(), err.end());
  out.rms_rel = std::sqrt(sq / static_cast<double>(v.size()));
  out.worst_rel = err.back();
  const std::size_t h = err.size() / 2;
  out.median_rel = err.size() % 2 ? err[h] : 0.5 * (err[h - 1] + err[h]);
  out.ok = true;
  return out;
}

}  // namespace cisa
