#include "model/projection_fit.hpp"

#include <algorithm>
#include <cmath>

#include "model/least_squares.hpp"

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

ProjectionFit fit_projection(const std::vector<ProjectionSample>& samples, ProjectionForm form) {
  const bool flops = form == ProjectionForm::bytes_and_flops;
  // bytes_only: the MMA term is off (an infinite rate inside the fit only; no figure is written).
  const auto mma = [flops](double mf) { return flops ? mf : INFINITY; };
  ProjectionFit out;
  std::vector<ProjectionSample> v;
  for (const ProjectionSample& s : samples)
    if (s.t_s > 0 && std::isfinite(s.t_s) && s.m > 0 && s.n > 0 && s.k > 0) v.push_back(s);
  if (v.size() < 4) {
    out.note = "fewer than 4 timed shapes";
    return out;
  }
  const GridBest g = log_grid_search(1e11, 1e13, 1e13, 5e15, 4, [&](double rb, double mf) {
    return solve_at(v, rb, mma(mf)).rms;
  });
  const double best_r = g.a, best_f = mma(g.b);
  const Trial best = solve_at(v, best_r, best_f);
  out.floor_s = best.floor_s;
  out.read_Bps = best_r;
  out.mma_flops = flops ? best_f : 0.0;
  out.rms_rel = best.rms;
  std::vector<double> err;
  for (const ProjectionSample& s : v)
    err.push_back(std::abs(projection_time(s, out.floor_s, best_r, best_f) / s.t_s - 1.0));
  std::sort(err.begin(), err.end());
  out.worst_rel = err.back();
  const std::size_t h = err.size() / 2;
  out.median_rel = err.size() % 2 ? err[h] : 0.5 * (err[h - 1] + err[h]);
  // Each rate of the form must be pinned down by some shape (bytes-bound and FLOP-bound shapes).
  const bool read_needed = rate_needed(best.rms, solve_at(v, 2.0 * best_r, best_f).rms),
             mma_needed = !flops || rate_needed(best.rms, solve_at(v, best_r, 2.0 * best_f).rms);
  out.ok = read_needed && mma_needed;
  if (!out.ok)
    out.note = read_needed ? "no shape bound by its FLOPs" : "no shape bound by its bytes";
  return out;
}

}  // namespace cisa
