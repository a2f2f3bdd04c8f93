// Measurement of scenario points with the instrumented CUDA kernels (issue 4). Fills the
// meas_ms_* / meas_speedup_* / err_* columns of a /points table in place.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cisa/scenario.hpp"
#include "cisa/table.hpp"

namespace cisa {

// required = true (--measure on): no GPU or no kernels in this build is an InputError.
// required = false (--measure auto): measures when possible, else records why not in attrs.
void measure_points(const Scenario& sc, Table& points, Attributes& attrs, bool required);

// Copies the meas_ms_* columns of an earlier measured result file into `points` (matched by
// point_index; the points' axes must agree) and recomputes speedups and errors: re-scores old
// measurements against the current model without a GPU. InputError on a mismatch.
void import_measurements(const std::string& file, Table& points, Attributes& attrs);

// err_<x> = meas / pred - 1 and meas_speedup_* from the meas_ms_* columns already filled.
void fill_errors(Table& points);

// Median and worst |err| per component and phase over the measured points.
struct ErrorSummary {
  std::string component;  // attention_dense, ..., speedup_busy
  std::string phase;
  std::size_t points = 0;
  double median_abs = 0, worst_abs = 0;
  std::int64_t worst_point = -1;  // point_index of the worst point
  std::string verdict;            // "within target", "biased high/low", "misses target"
};
std::vector<ErrorSummary> summarize_errors(const Table& points);
// Median of an ascending list (NaN when empty); an even count averages the middle pair.
double median_of_sorted(const std::vector<double>& sorted);
// The stdout report: one line per component and phase, the worst points, a verdict per component.
void write_error_report(std::ostream& os, const Table& points);

}  // namespace cisa
