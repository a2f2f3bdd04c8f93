#include "model/scoring_fit.hpp"

#include <algorithm>
#include <cmath>

namespace cisa {

namespace {

struct Trial {
  double floor_s = 0, query_s = 0, rms = INFINITY;
};

// Floor and query time (both >= 0) minimising the relative residuals at the given rates.
Trial solve_at(const std::vector<ScoringSample>& v, double rb, double wb) {
  // Residual_i = (floor + q x G_i + m_i) / t_i - 1 with m_i = fixed + max(R/rb, W/wb).
  double s11 = 0, s12 = 0, s22 = 0, b1 = 0, b2 = 0;
  std::vector<double> m(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const ScoringSample& x = v[i];
    m[i] = x.fixed_s + std::max(x.read_bytes / rb, x.write_bytes / wb);
    const double a1 = 1.0 / x.t_s, a2 = x.summed_queries / x.t_s, y = 1.0 - m[i] / x.t_s;
    s11 += a1 * a1, s12 += a1 * a2, s22 += a2 * a2, b1 += a1 * y, b2 += a2 * y;
  }
  auto rms = [&](double f, double q) {
    double e = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double r = (f + q * v[i].summed_queries + m[i]) / v[i].t_s - 1.0;
      e += r * r;
    }
    return std::sqrt(e / static_cast<double>(v.size()));
  };
  Trial best;
  const double det = s11 * s22 - s12 * s12;
  if (det > 0) {
    const double f = (b1 * s22 - b2 * s12) / det, q = (s11 * b2 - s12 * b1) / det;
    if (f >= 0 && q >= 0) best = {f, q, rms(f, q)};
  }
  // Constrained ends: one of the two at 0.
  if (s11 > 0) {
    const double f = std::max(0.0, b1 / s11);
    const double e = rms(f, 0.0);
    if (e < best.rms) best = {f, 0.0, e};
  }
  if (s22 > 0) {
    const double q = std::max(0.0, b2 / s22);
    const double e = rms(0.0, q);
    if (e < best.rms) best = {0.0, q, e};
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
  if (!std::isfinite(best.rms)) {
    out.note = "no non-negative floor and query time";
    return out;
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
