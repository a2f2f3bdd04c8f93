#include "model/least_squares.hpp"

#include <algorithm>
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

GridBest log_grid_search(double lo_a, double hi_a, double lo_b, double hi_b, int rounds,
                         const std::function<double(double, double)>& cost) {
  double la = std::log(lo_a), ha = std::log(hi_a), lb = std::log(lo_b), hb = std::log(hi_b);
  GridBest best;
  for (int round = 0; round < rounds; ++round) {
    const int n = 60;
    for (int i = 0; i <= n; ++i)
      for (int j = 0; j <= n; ++j) {
        const double a = std::exp(la + (ha - la) * i / n), b = std::exp(lb + (hb - lb) * j / n);
        const double c = cost(a, b);
        if (c < best.cost) best = {a, b, c};
      }
    const double span_a = (ha - la) / n * 2, span_b = (hb - lb) / n * 2;
    la = std::log(best.a) - span_a, ha = std::log(best.a) + span_a;
    lb = std::log(best.b) - span_b, hb = std::log(best.b) + span_b;
  }
  return best;
}

bool rate_needed(double best_cost, double cost_at_twice) {
  return cost_at_twice > best_cost + std::max(0.2 * best_cost, 0.002);
}

}  // namespace cisa
