#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <map>

#include "cisa/errors.hpp"
#include "cisa/measure.hpp"
#include "cisa/write_hdf5.hpp"
#include "cisa/results.hpp"

namespace cisa {

namespace {
std::vector<double>& f64(Table& t, const std::string& name) {
  const Column* c = t.find(name);
  if (!c) throw std::logic_error("no column " + name);
  return std::get<std::vector<double>>(const_cast<Column*>(c)->data);
}
}  // namespace

void import_measurements(const std::string& file, Table& t, Attributes& attrs) {
  const Table m = read_hdf5_group(file, "points");  // InputError naming file and dataset when corrupt
  Attributes ma = read_hdf5_attributes(file);
  const Column* mi = m.find("point_index");
  if (!mi) throw InputError({file, 0, "/points/point_index"}, "missing; not a cisa-sim result file");
  if (!std::holds_alternative<std::vector<std::int64_t>>(mi->data))
    throw InputError({file, 0, "/points/point_index"}, "must be an integer column");
  const auto& midx = std::get<std::vector<std::int64_t>>(mi->data);
  const auto& idx = std::get<std::vector<std::int64_t>>(t.find("point_index")->data);
  std::map<std::int64_t, std::size_t> row_of;
  for (std::size_t r = 0; r < midx.size(); ++r)
    if (!row_of.emplace(midx[r], r).second)
      throw InputError({file, 0, "/points/point_index"}, "point " + std::to_string(midx[r]) + " appears twice");
  const std::vector<std::string> axes = {"phase", "context_tokens", "budget_chunks", "qshare_g", "batch", "q_heads",
                                         "kv_heads", "head_dim", "chunk_tokens", "window_pages", "prefill_tokens"};
  std::size_t matched = 0;
  for (std::size_t r = 0; r < idx.size(); ++r) {
    const auto it = row_of.find(idx[r]);
    if (it == row_of.end()) continue;
    for (const auto& a : axes) {
      const Column* x = t.find(a);
      const Column* y = m.find(a);
      if (!y || x->format_cell(r) != y->format_cell(it->second))
        throw InputError({file, 0, "/points/" + a},
                         "point " + std::to_string(idx[r]) + " differs from this scenario's (" + (y ? y->format_cell(it->second) : "missing") +
                             " vs " + x->format_cell(r) + "): not measurements of this scenario");
    }
    std::vector<std::string> copied = measured_columns();
    copied.push_back("meas_selection_overlap");
    for (const auto& name : copied) {
      if (name.find("speedup") != std::string::npos) continue;
      const Column* src = m.find(name);
      if (!src) continue;
      if (!std::holds_alternative<std::vector<double>>(src->data))
        throw InputError({file, 0, "/points/" + name}, "must be a float column");
      f64(t, name)[r] = std::get<std::vector<double>>(src->data)[it->second];
    }
    ++matched;
  }
  if (matched == 0) throw InputError({file, 0, "/points"}, "no point of this scenario is in the file");
  attrs["measurements_from"] = file;
  for (const char* k : {"measurement", "measurement_device", "measurement_skipped", "created_utc"})
    if (ma.count(k)) attrs[std::string("measurements_") + k] = ma[k];
  attrs["measurement"] = "measured (imported from " + file + "): " + (ma.count("measurement") ? ma["measurement"] : "");
  fill_errors(t);
}

void fill_errors(Table& t) {
  const std::size_t n = t.rows();
  const Column* impl_col = t.find("cisa_impl");
  if (!impl_col) throw std::logic_error("no column cisa_impl");
  const auto* impl = &std::get<std::vector<std::string>>(impl_col->data);
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
    // Like with like: the measurements are of this project's kernels, so only rows priced with
    // cisa_kernels get an error.
    const auto& m = f64(t, meas[k]);
    const auto& p = f64(t, predicted_twin(meas[k]));
    auto& e = f64(t, err[k]);
    for (std::size_t i = 0; i < n; ++i)
      e[i] = (p[i] > 0 && std::isfinite(m[i]) && (*impl)[i].rfind("cisa_kernels", 0) == 0) ? m[i] / p[i] - 1.0 : NAN;
  }
}

double median_of_sorted(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  const std::size_t m = v.size();
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);  // an even count averages the middle pair
}

std::vector<ErrorSummary> summarize_errors(const Table& t) {
  std::vector<ErrorSummary> out;
  const std::size_t n = t.rows();
  const auto& phase = std::get<std::vector<std::string>>(t.find("phase")->data);
  const auto& idx = std::get<std::vector<std::int64_t>>(t.find("point_index")->data);
  std::vector<std::string> phases;
  for (const auto& p : phase)
    if (std::find(phases.begin(), phases.end(), p) == phases.end()) phases.push_back(p);
  for (const auto& name : error_columns()) {
    const auto& e = std::get<std::vector<double>>(t.find(name)->data);
    for (const auto& ph : phases) {
      std::vector<double> abs_err;
      ErrorSummary s{name.substr(4), ph, 0, 0, 0, -1, ""};
      double sum = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (phase[i] != ph || !std::isfinite(e[i])) continue;
        abs_err.push_back(std::fabs(e[i]));
        sum += e[i];
        if (std::fabs(e[i]) >= s.worst_abs) {
          s.worst_abs = std::fabs(e[i]);
          s.worst_point = idx[i];
        }
      }
      if (abs_err.empty()) continue;
      std::sort(abs_err.begin(), abs_err.end());
      s.points = abs_err.size();
      s.median_abs = median_of_sorted(abs_err);
      const double mean = sum / static_cast<double>(abs_err.size());
      // Targets of issue 4: median <= 10 %, worst <= 25 % (speedups: within 15 %).
      const bool speed = s.component.rfind("speedup", 0) == 0;
      const bool ok = speed ? s.worst_abs <= 0.15 : (s.median_abs <= 0.10 && s.worst_abs <= 0.25);
      if (ok)
        s.verdict = "within target";
      else if (std::fabs(mean) > 0.8 * s.median_abs)
        s.verdict = mean > 0 ? "misses: measured slower than predicted (model optimistic)"
                             : "misses: measured faster than predicted (model pessimistic)";
      else
        s.verdict = "misses: scattered errors (structure, not bias)";
      out.push_back(s);
    }
  }
  return out;
}

void write_error_report(std::ostream& os, const Table& t) {
  const auto rows = summarize_errors(t);
  if (rows.empty()) {
    os << "no measured points: nothing to compare\n";
    return;
  }
  os << "measured vs predicted (err = measured / predicted - 1)\n";
  os << "  component             phase              points  median|err|  worst|err|  worst point  verdict\n";
  char buf[256];
  for (const auto& r : rows) {
    std::snprintf(buf, sizeof buf, "  %-21s %-18s %6zu  %10.1f%%  %9.1f%%  %11lld  %s\n", r.component.c_str(),
                  r.phase.c_str(), r.points, 100 * r.median_abs, 100 * r.worst_abs,
                  static_cast<long long>(r.worst_point), r.verdict.c_str());
    os << buf;
  }
}

}  // namespace cisa
