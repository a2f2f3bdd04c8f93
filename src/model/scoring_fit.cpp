#include "model/scoring_fit.hpp"

#include <algorithm>
#include <cmath>

#include "model/least_squares.hpp"

namespace cisa {

namespace {

struct Trial {
  double floor_s = 0, query_s = 0, rms = INFINITY;
};

// Floor and query time (both >= 0: a term that solves negative is dropped) minimising the relative
// residuals (floor + q x G_i + m_i) / t_i - 1 at the given rates, m_i = fixed + max(R/rb + W/wb,
// F/mf), or max(R/rb, W/wb, F/mf) with overlapping streams (mf infinite: no MMA term).
Trial solve_at(const std::vector<ScoringSample>& v, double rb, double wb, double mf, ScoringStreams streams) {
  const auto n = static_cast<Eigen::Index>(v.size());
  Eigen::MatrixXd X(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const ScoringSample& x = v[static_cast<std::size_t>(i)];
    const double r = x.read_bytes / rb, w = x.write_bytes / wb;
    const double bytes = streams == ScoringStreams::shared ? r + w : std::max(r, w);
    const double m = x.fixed_s + std::max(bytes, x.issued_flops / mf);
    X.row(i) << 1.0 / x.t_s, x.summed_queries / x.t_s;
    y(i) = 1.0 - m / x.t_s;
  }
  Trial best{0.0, 0.0, std::sqrt(y.squaredNorm() / static_cast<double>(n))};  // both terms 0
  const std::vector<int> forms[] = {{0, 1}, {0}, {1}};  // columns: 0 floor, 1 query time
  for (const auto& cols : forms) {
    const Eigen::MatrixXd Xf = columns(X, cols);
    Eigen::VectorXd p;
    if (!solve_positive(Xf, y, p)) continue;
    Trial t{0.0, 0.0, rms_residual(Xf, y, p)};
    for (std::size_t j = 0; j < cols.size(); ++j)
      (cols[j] == 0 ? t.floor_s : t.query_s) = p(static_cast<Eigen::Index>(j));
    if (t.rms < best.rms) best = t;
  }
  return best;
}

}  // namespace

ScoringFit fit_scoring_prefill(const std::vector<ScoringSample>& samples, ScoringStreams streams) {
  ScoringFit out;
  std::vector<ScoringSample> v;
  for (const ScoringSample& s : samples)
    if (s.t_s > 0 && std::isfinite(s.t_s)) v.push_back(s);
  if (v.size() < 4) {
    out.note = "fewer than 4 timed shapes";
    return out;
  }
  // Both byte rates on a log grid (two refinements around the best point) at each MMA rate of an
  // outer log grid (21 points, then 11 around the best), and without the MMA term.
  auto best_at = [&](double mf) {
    return log_grid_search(1e11, 1e13, 1e11, 1e13, 3,
                           [&](double rb, double wb) { return solve_at(v, rb, wb, mf, streams).rms; });
  };
  double best_m = INFINITY;
  const GridBest g0 = best_at(INFINITY);
  GridBest g = g0;
  auto try_m = [&](double mf) {
    const GridBest h = best_at(mf);
    if (h.cost < g.cost) {
      g = h;
      best_m = mf;
    }
  };
  for (int i = 0; i <= 20; ++i) try_m(2e13 * std::pow(100.0, i / 20.0));
  if (std::isfinite(best_m)) {
    const double centre = best_m;
    for (int i = -5; i <= 5; ++i)
      if (i != 0) try_m(centre * std::pow(100.0, i / 200.0));
  }
  // The MMA term only where some shape needs it (twice as fast fits clearly worse); else the
  // byte rates of the fit without it.
  if (std::isfinite(best_m) &&
      !rate_needed(solve_at(v, g.a, g.b, best_m, streams).rms, solve_at(v, g.a, g.b, 2.0 * best_m, streams).rms)) {
    best_m = INFINITY;
    g = g0;
  }
  const double best_r = g.a, best_w = g.b;
  const Trial best = solve_at(v, best_r, best_w, best_m, streams);
  const bool read_needed = rate_needed(best.rms, solve_at(v, 2.0 * best_r, best_w, best_m, streams).rms),
             write_needed = rate_needed(best.rms, solve_at(v, best_r, 2.0 * best_w, best_m, streams).rms);
  // With the MMA term, the writes may bind nowhere: full tiles issue FLOPs in proportion to the
  // keys they write, and the slower of the two sets the time (the write rate then found is the
  // slowest that binds at no shape).
  // Likewise the reads: representatives of groups with few rows stream about as fast as their
  // padded warpgroups compute. Without the MMA term both byte rates must be pinned down.
  out.writes_bind = write_needed;
  out.reads_bind = read_needed;
  if (!std::isfinite(best_m) && (!read_needed || !write_needed)) {
    out.note = read_needed ? "no shape bound by its writes" : "no shape bound by its reads";
    return out;
  }
  out.ok = true;
  out.floor_s = best.floor_s;
  out.query_s = best.query_s;
  out.read_Bps = best_r;
  out.write_Bps = best_w;
  out.mma_flops = std::isfinite(best_m) ? best_m : 0.0;
  out.rms_rel = solve_at(v, best_r, best_w, best_m, streams).rms;
  if (!std::isfinite(best_m)) {  // the floor and query time at the rates without the MMA term
    const Trial t = solve_at(v, best_r, best_w, INFINITY, streams);
    out.floor_s = t.floor_s;
    out.query_s = t.query_s;
  }
  return out;
}

}  // namespace cisa
