#include "model/decode_attention_fit.hpp"

#include <algorithm>
#include <cmath>

#include "model/least_squares.hpp"

namespace cisa {

DecodeAttentionFit fit_decode_attention(const std::vector<DecodeAttentionSample>& samples) {
  DecodeAttentionFit out;
  std::vector<DecodeAttentionSample> v;
  for (const DecodeAttentionSample& s : samples)
    if (s.t_s > 0 && std::isfinite(s.t_s) && s.bytes > 0 && s.launches > 0) v.push_back(s);
  if (v.size() < 3) {
    out.note = "fewer than 3 timed decode steps";
    return out;
  }
  // rows (launches / t, bytes / t) . (floor, 1 / rate) = 1
  const auto n = static_cast<Eigen::Index>(v.size());
  Eigen::MatrixXd X(n, 2);
  Eigen::VectorXd y = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const DecodeAttentionSample& s = v[static_cast<std::size_t>(i)];
    X.row(i) << s.launches / s.t_s, s.bytes / s.t_s;
  }
  Eigen::VectorXd p;
  if (!solve_positive(X, y, p)) {
    out.note = "no positive floor and rate fit these steps";
    return out;
  }
  out.floor_s = p(0);
  out.read_Bps = 1.0 / p(1);
  double sq = 0;
  for (const DecodeAttentionSample& s : v) {
    const double e = (s.launches * out.floor_s + s.bytes / out.read_Bps) / s.t_s - 1.0;
    sq += e * e;
    out.worst_rel = std::max(out.worst_rel, std::abs(e));
  }
  out.rms_rel = std::sqrt(sq / static_cast<double>(v.size()));
  out.ok = true;
  return out;
}

}  // namespace cisa
