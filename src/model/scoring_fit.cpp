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
// residuals (floor + q x G_i + m_i) / t_i - 1 at the given rates, m_i = fixed + max(R/rb, W/wb).
Trial solve_at(const std::vector<ScoringSample>& v, double rb, double wb) {
  const auto n = static_cast<Eigen::Index>(v.size());
  Eigen::MatrixXd X(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const ScoringSample& x = v[static_cast<std::size_t>(i)];
    const double m = x.fixed_s + std::max(x.read_bytes / rb, x.write_bytes / wb);
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

ScoringFit fit_scoring_prefill(const std::vector<ScoringSample>& samples) {
  ScoringFit out;
  std::vector<ScoringSample> v;
  for (const ScoringSample& s : samples)
    if (s.t_s > 0 && std::isfinite(s.t_s)) v.push_back(s);
  if (v.size() < 4) {
    out.note = "fewer than 4 timed shapes";
    return out;
  }
  // Log grid over both rates, then two refinements around the best point.
  double lo_r = std::log(1e11), hi_r = std::log(1e13), lo_w = lo_r, hi_w = hi_r;
  double best_r = 0, best_w = 0;
  Trial best;
  for (int round = 0; round < 3; ++round) {
    const int n = 60;
    for (int i = 0; i <= n; ++i)
      for (int j = 0; j <= n; ++j) {
        const double rb = std::exp(lo_r + (hi_r - lo_r) * i / n), wb = std::exp(lo_w + (hi_w - lo_w) * j / n);
        const Trial t = solve_at(v, rb, wb);
        if (t.rms < best.rms) best = t, best_r = rb, best_w = wb;
      }
    const double span_r = (hi_r - lo_r) / n * 2, span_w = (hi_w - lo_w) / n * 2;
    lo_r = std::log(best_r) - span_r, hi_r = std::log(best_r) + span_r;
    lo_w = std::log(best_w) - span_w, hi_w = std::log(best_w) + span_w;
  }
  // A rate is identified only if the data need it: twice as fast must fit clearly worse (else no
  // shape is bound by that stream and the rate is anyone's guess).
  const double worse = best.rms + std::max(0.2 * best.rms, 0.002);
  const bool read_needed = solve_at(v, 2.0 * best_r, best_w).rms > worse,
             write_needed = solve_at(v, best_r, 2.0 * best_w).rms > worse;
  if (!read_needed || !write_needed) {
    out.note = read_needed ? "no shape bound by its writes" : "no shape bound by its reads";
    return out;
  }
  out.ok = true;
  out.floor_s = best.floor_s;
  out.query_s = best.query_s;
  out.read_Bps = best_r;
  out.write_Bps = best_w;
  out.rms_rel = best.rms;
  return out;
}

}  // namespace cisa
