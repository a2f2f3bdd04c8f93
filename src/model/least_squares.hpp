// Least squares for the calibration fits (topk_fit, scoring_fit): rows already divided by the
// measured time, so residuals are relative and a 12 us shape weighs as much as a 3 ms one.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <functional>
#include <vector>

namespace cisa {

// Least squares of t = X p with columns scaled to unit norm (the columns differ by 1e9); false
// unless X has full column rank and every p is positive and finite.
bool solve_positive(const Eigen::MatrixXd& X, const Eigen::VectorXd& t, Eigen::VectorXd& p);

// Root mean square of the residuals X p - t.
double rms_residual(const Eigen::MatrixXd& X, const Eigen::VectorXd& t, const Eigen::VectorXd& p);

// The columns `cols` of X.
Eigen::MatrixXd columns(const Eigen::MatrixXd& X, const std::vector<int>& cols);

// Two rates (a, b) searched on a log grid of 61 x 61 points over [lo, hi] each, then rounds - 1
// refinements of +-2 grid steps around the best point; cost(a, b) is the fit's error at those
// rates (the first minimum found wins).
struct GridBest {
  double a = 0, b = 0, cost = INFINITY;
};
GridBest log_grid_search(double lo_a, double hi_a, double lo_b, double hi_b, int rounds,
                         const std::function<double(double, double)>& cost);

// A rate is identified only if the data need it: the fit at twice that rate must be clearly worse
// (by 20 % of its error, at least 0.002), else no sample is bound by it.
bool rate_needed(double best_cost, double cost_at_twice);

}  // namespace cisa
