#include <cmath>
#include <stdexcept>

#include "cisa/measure.hpp"
#include "cisa/results.hpp"

namespace cisa {

namespace {
std::vector<double>& f64(Table& t, const std::string& name) {
  const Column* c = t.find(name);
  if (!c) throw std::logic_error("no column " + name);
  return std::get<std::vector<double>>(const_cast<Column*>(c)->data);
}
}  // namespace

void fill_errors(Table& t) {
  const std::size_t n = t.rows();
  auto& att_d = f64(t, "meas_ms_attention_dense");
  auto& att_c = f64(t, "meas_ms_attention_cisa");
  auto& busy_d = f64(t, "meas_ms_busy_dense");
  auto& busy_c = f64(t, "meas_ms_busy_cisa");
  auto& sp_att = f64(t, "meas_speedup_attention");
  auto& sp_busy = f64(t, "meas_speedup_busy");
  for (std::size_t i = 0; i < n; ++i) {
    sp_att[i] = att_d[i] / att_c[i];
    sp_busy[i] = busy_d[i] / busy_c[i];
  }
  const auto& meas = measured_columns();
  const auto& err = error_columns();
  for (std::size_t k = 0; k < meas.size(); ++k) {
    const std::string pred_name = "pred_" + meas[k].substr(5);
    const auto& m = f64(t, meas[k]);
    const auto& p = f64(t, pred_name);
    auto& e = f64(t, err[k]);
    for (std::size_t i = 0; i < n; ++i) e[i] = (p[i] > 0 && std::isfinite(m[i])) ? m[i] / p[i] - 1.0 : NAN;
  }
}

}  // namespace cisa
