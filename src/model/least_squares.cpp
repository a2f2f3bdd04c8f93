#include "model/least_squares.hpp"

#include <cmath>

namespace cisa {

bool solve_positive(const Eigen::MatrixXd& X, const Eigen::VectorXd& t, Eigen::VectorXd& p) {
  Eigen::VectorXd scale = X.colwise().norm().transpose();
  for (Eigen::Index j = 0; j < scale.size(); ++j)
    if (!(scale(j) > 0)) return false;
  const Eigen::MatrixXd Xs = X * scale.cwiseInverse().asDiagonal();
  const auto qr = Xs.colPivHouseholderQr();
  if (qr.rank() < Xs.cols()) return false;
  p = qr.solve(t).cwiseQuotient(scale);
  return (p.array() > 0).all() && p.allFinite();
}

double rms_residual(const Eigen::MatrixXd& X, const Eigen::VectorXd& t, const Eigen::VectorXd& p) {
  return std::sqrt((X * p - t).squaredNorm() / static_cast<double>(t.size()));
}

Eigen::MatrixXd columns(const Eigen::MatrixXd& X, const std::vector<int>& cols) {
  Eigen::MatrixXd out(X.rows(), static_cast<Eigen::Index>(cols.size()));
  for (std::size_t j = 0; j < cols.size(); ++j)
    out.col(static_cast<Eigen::Index>(j)) = X.col(cols[j]);
  return out;
}

}  // namespace cisa
