#include "model/projection_fit.hpp"

#include <algorithm>
#include <cmath>

namespace cisa {

double projection_time(const ProjectionSample& s, double floor_s, double read_Bps,
                       double mma_flops) {
  return floor_s + std::max(s.bytes() / read_Bps, s.flops() / mma_flops);
}

namespace {

struct Trial {
  double floor_s = 0, rms = INFINITY;
};

// The floor minimising sum ((floor + a_i) / t_i - 1)^2: floor = sum((t_i - a_i) / t_i^2) /
// sum(1 / t_i^2), clamped at 0.
Trial solve_at(const std::vector<ProjectionSample>& v, double rb, double mf) {
  double num = 0, den = 0;
  for (const ProjectionSample& s : v) {
    const double a = projection_time(s, 0.0, rb, mf);
    num += (s.t_s - a) / (s.t_s * s.t_s);
    den += 1.0 / (s.t_s * s.t_s);
  }
  Trial t{std::max(0.0, num / den), 0.0};
  double sq = 0;
  for (const ProjectionSample& s : v) {
    const double e = projection_time(s, t.floor_s, rb, mf) / s.t_s - 1.0;
    sq += e * e;
  }
  t.rms = std::sqrt(sq / static_cast<double>(v.size()));
  return t;
}

}  // namespace

ProjectionFit fit_projection(const std::vector<ProjectionSample>& samples) {
  ProjectionFit out;
  std::vector<ProjectionSample> v;
  for (const ProjectionSample& s : samples)
    if (s.t_s > 0 && std::isfinite(s.t_s) && s.m > 0 && s.n > 0 && s.k > 0) v.push_back(s);
  if (v.size() < 4) {
    out.note = "fewer than 4 timed shapes";
    return out;
  }
  double lo_r = std::log(1e11), hi_r = std::log(1e13), lo_f = std::log(1e13),
         hi_f = std::log(5e15);
  double best_r = 0, best_f = 0;
  Trial best;
  for (int round = 0; round < 4; ++round) {
    const int n = 60;
    for (int i = 0; i <= n; ++i)
      for (int j = 0; j <= n; ++j) {
        const double rb = std::exp(lo_r + (hi_r - lo_r) * i / n);
        const double mf = std::exp(lo_f + (hi_f - lo_f) * j / n);
        const Trial t = solve_at(v, rb, mf);
        if (t.rms < best.rms) {
          best = t;
          best_r = rb;
          best_f = mf;
        }
      }
    const double wr = 2.0 * (hi_r - lo_r) / n, wf = 2.0 * (hi_f - lo_f) / n;
    lo_r = std::log(best_r) - wr;
    hi_r = std::log(best_r) + wr;
    lo_f = std::log(best_f) - wf;
    hi_f = std::log(best_f) + wf;
  }
  out.floor_s = best.floor_s;
  out.read_Bps = best_r;
  out.mma_flops = best_f;
  out.rms_rel = best.rms;
  std::vector<double> err;
  for (const ProjectionSample& s : v)
    err.push_back(std::abs(projection_time(s, out.floor_s, best_r, best_f) / s.t_s - 1.0));
  std::sort(err.begin(), err.end());
  out.worst_rel = err.back();
  const std::size_t h = err.size() / 2;
  out.median_rel = err.size() % 2 ? err[h] : 0.5 * (err[h - 1] + err[h]);
  // A rate at the edge of the searched range means the shapes do not pin it down.
  const bool edge = best_r <= 1.01e11 || best_r >= 0.99e13 || best_f <= 1.01e13 || best_f >= 4.95e15;
  out.ok = !edge;
  if (edge) out.note = "a rate at the edge of the searched range: the shapes do not constrain it";
  return out;
}

}  // namespace cisa
