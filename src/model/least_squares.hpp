// Least squares for the calibration fits (topk_fit, scoring_fit): rows already divided by the
// measured time, so residuals are relative and a 12 us shape weighs as much as a 3 ms one.
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace cisa {

// Least squares of t = X p with columns scaled to unit norm (the columns differ by 1e9); false
// unless X has full column rank and every p is positive and finite.
bool solve_positive(const Eigen::MatrixXd& X, const Eigen::VectorXd& t, Eigen::VectorXd& p);

// Root mean square of the residuals X p - t.
double rms_residual(const Eigen::MatrixXd& X, const Eigen::VectorXd& t, const Eigen::VectorXd& p);

// The columns `cols` of X.
Eigen::MatrixXd columns(const Eigen::MatrixXd& X, const std::vector<int>& cols);

}  // namespace cisa
