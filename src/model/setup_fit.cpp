#include "model/setup_fit.hpp"

#include <algorithm>
#include <cmath>

namespace cisa {

namespace {
// measured / predicted - 1: the error the measured tables report, so the fit minimises it.
double relative_error(const SetupSample& s, double latency_s, double bw_Bps) {
  return s.t_s / (latency_s + s.bytes / bw_Bps) - 1.0;
}

double sum_abs_error(const std::vector<SetupSample>& v, double latency_s, double bw_Bps) {
  double sum = 0;
  for (const SetupSample& s : v) sum += std::abs(relative_error(s, latency_s, bw_Bps));
  return sum;
}

// The latency minimising sum |t_i / (L + b_i / bw) - 1|. Each term falls until L reaches the
// sample's own latency t_i - b_i / bw and rises after it, so the minimum lies at or next to one of
// those break points: take the best break point, then a golden-section search between its
// neighbours. A copy's time jitters upwards (a few microseconds, NOTES session 15): least squares
// sat below the median copy; this sits on it.
double least_absolute_latency(const std::vector<SetupSample>& v, double bw_Bps) {
  std::vector<double> breaks;
  for (const SetupSample& s : v)
    if (s.t_s - s.bytes / bw_Bps > 0) breaks.push_back(s.t_s - s.bytes / bw_Bps);
  if (breaks.empty()) return 0.0;
  std::sort(breaks.begin(), breaks.end());
  std::size_t best = 0;
  double best_sum = sum_abs_error(v, breaks[0], bw_Bps);
  for (std::size_t i = 1; i < breaks.size(); ++i)
    if (const double sum = sum_abs_error(v, breaks[i], bw_Bps); sum < best_sum) {
      best = i;
      best_sum = sum;
    }
  double a = breaks[best > 0 ? best - 1 : 0], b = breaks[std::min(best + 1, breaks.size() - 1)];
  const double phi = 0.5 * (std::sqrt(5.0) - 1.0);
  for (int it = 0; it < 100 && b - a > 1e-15; ++it) {
    const double x1 = b - phi * (b - a), x2 = a + phi * (b - a);
    if (sum_abs_error(v, x1, bw_Bps) <= sum_abs_error(v, x2, bw_Bps))
      b = x2;
    else
      a = x1;
  }
  const double golden = 0.5 * (a + b);
  return sum_abs_error(v, golden, bw_Bps) < best_sum ? golden : breaks[best];
}
}  // namespace

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
  out.latency_s = least_absolute_latency(v, bw_Bps);
  if (!(out.latency_s > 0)) {
    out.note = "the copies' bytes at the card's bandwidth exceed their times: no latency left";
    return out;
  }
  std::vector<double> err;
  double sq = 0;
  for (const SetupSample& s : v) {
    const double e = relative_error(s, out.latency_s, bw_Bps);
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
