#include "model/topk_fit.hpp"

#include <Eigen/Dense>
#include <cmath>

namespace cisa {
namespace {

// Least squares of t = X p with columns scaled to unit norm (the columns differ by 1e9).
bool solve(const Eigen::MatrixXd& X, const Eigen::VectorXd& t, Eigen::VectorXd& p) {
  Eigen::VectorXd scale = X.colwise().norm().transpose();
  for (Eigen::Index j = 0; j < scale.size(); ++j)
    if (!(scale(j) > 0)) return false;
  const Eigen::MatrixXd Xs = X * scale.cwiseInverse().asDiagonal();
  const auto qr = Xs.colPivHouseholderQr();
  if (qr.rank() < Xs.cols()) return false;
  p = qr.solve(t).cwiseQuotient(scale);
  return (p.array() > 0).all() && p.allFinite();
}

double rms_relative(const Eigen::MatrixXd& X, const Eigen::VectorXd& t, const Eigen::VectorXd& p) {
  const Eigen::VectorXd rel = (X * p - t).cwiseQuotient(t);
  return std::sqrt(rel.squaredNorm() / static_cast<double>(rel.size()));
}

}  // namespace

TopkFit fit_topk(const std::vector<TopkSample>& samples) {
  TopkFit fit;
  const auto n = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd X(n, 4);
  Eigen::VectorXd t(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const TopkSample& s = samples[static_cast<std::size_t>(i)];
    X.row(i) << 1.0, s.waves, s.waves * s.key_passes, s.waves * s.ids;
    t(i) = s.seconds;
  }
  Eigen::VectorXd p;
  if (n >= 4 && solve(X, t, p)) {
    fit.ok = true;
    fit.floor_s = p(0);
    fit.cta_s = p(1);
    fit.key_passes_per_s = 1.0 / p(2);
    fit.ids_per_s = 1.0 / p(3);
    fit.rms_rel = rms_relative(X, t, p);
    fit.note = "floor + waves x (CTA time + key passes / rate + IDs / rate), least squares";
    return fit;
  }
  Eigen::MatrixXd X3(n, 3);
  X3 << X.col(0), X.col(2), X.col(3);
  if (n >= 3 && solve(X3, t, p)) {
    fit.ok = true;
    fit.floor_s = p(0);
    fit.key_passes_per_s = 1.0 / p(1);
    fit.ids_per_s = 1.0 / p(2);
    fit.rms_rel = rms_relative(X3, t, p);
    fit.note = "floor + waves x (key passes / rate + IDs / rate), least squares (a CTA term did not solve positive)";
  }
  return fit;
}

}  // namespace cisa
