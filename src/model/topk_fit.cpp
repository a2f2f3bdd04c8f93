#include "model/topk_fit.hpp"

#include <cmath>

#include "model/least_squares.hpp"

namespace cisa {

TopkFit fit_topk(const std::vector<TopkSample>& samples) {
  TopkFit fit;
  const auto n = static_cast<Eigen::Index>(samples.size());
  // Rows divided by the measured time: relative residuals, so 12 us and 3 ms shapes weigh alike.
  Eigen::MatrixXd X(n, 5);
  Eigen::VectorXd t(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const TopkSample& s = samples[static_cast<std::size_t>(i)];
    X.row(i) << 1.0, s.waves, s.cluster_waves, s.key_passes, s.ids;
    X.row(i) /= s.seconds;
    t(i) = 1.0;
  }
  // Forms from the fullest down; columns: 0 floor, 1 CTA, 2 cluster, 3 keys, 4 IDs.
  struct Form {
    std::vector<int> cols;
    const char* note;
  };
  const Form forms[] = {
      {{0, 1, 2, 3, 4},
       "floor + waves x CTA time + cluster waves x merge time + key passes / rate + IDs / rate"},
      {{0, 1, 3, 4},
       "floor + waves x CTA time + key passes / rate + IDs / rate (a cluster term did not solve "
       "positive)"},
      {{0, 3, 4},
       "floor + key passes / rate + IDs / rate (CTA and cluster terms did not solve positive)"}};
  for (const Form& f : forms) {
    const auto k = static_cast<Eigen::Index>(f.cols.size());
    if (n < k) continue;
    const Eigen::MatrixXd Xf = columns(X, f.cols);
    Eigen::VectorXd p;
    if (!solve_positive(Xf, t, p)) continue;
    double v[5] = {0, 0, 0, 0, 0};
    for (Eigen::Index j = 0; j < k; ++j) v[f.cols[static_cast<std::size_t>(j)]] = p(j);
    fit.ok = true;
    fit.floor_s = v[0];
    fit.cta_s = v[1];
    fit.cluster_s = v[2];
    fit.key_passes_per_s = 1.0 / v[3];
    fit.ids_per_s = 1.0 / v[4];
    fit.rms_rel = rms_residual(Xf, t, p);
    fit.note = std::string(f.note) + ", least squares of relative residuals";
    return fit;
  }
  return fit;
}

TopkFit fit_topk_decode(const std::vector<TopkSample>& samples, double cta_s, double ids_per_s) {
  TopkFit fit;
  const auto n = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd X(n, 3);
  Eigen::VectorXd t(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const TopkSample& s = samples[static_cast<std::size_t>(i)];
    const double known = (s.waves - 1.0) * cta_s + (ids_per_s > 0 ? s.ids / ids_per_s : 0.0);
    X.row(i) << 1.0, s.cluster_waves, s.key_passes;
    X.row(i) /= s.seconds;
    t(i) = 1.0 - known / s.seconds;
  }
  const std::vector<int> forms[] = {{0, 1, 2}, {0, 2}};
  for (const auto& cols : forms) {
    const auto k = static_cast<Eigen::Index>(cols.size());
    if (n < k + 1) continue;
    const Eigen::MatrixXd Xf = columns(X, cols);
    Eigen::VectorXd p;
    if (!solve_positive(Xf, t, p)) continue;
    fit.ok = true;
    fit.floor_s = p(0);
    fit.cluster_s = k == 3 ? p(1) : 0.0;
    fit.key_passes_per_s = 1.0 / p(k - 1);
    fit.ids_per_s = ids_per_s;
    // Residuals relative to the measured times (t is 1 - known / time).
    fit.rms_rel = rms_residual(Xf, t, p);
    fit.note = k == 3 ? "floor + cluster waves x merge time + key passes / rate (later waves' CTA "
                        "time and IDs at "
                        "the prefill fit), least squares of relative residuals"
                      : "floor + key passes / rate (a merge term did not solve positive; later "
                        "waves' CTA time "
                        "and IDs at the prefill fit), least squares of relative residuals";
    return fit;
  }
  return fit;
}

}  // namespace cisa
