// Measurement of scenario points with the instrumented CUDA kernels (issue 4). Fills the
// meas_ms_* / meas_speedup_* / err_* columns of a /points table in place.
#pragma once

#include "cisa/scenario.hpp"
#include "cisa/table.hpp"

namespace cisa {

// required = true (--measure on): no GPU or no kernels in this build is an InputError.
// required = false (--measure auto): measures when possible, else records why not in attrs.
void measure_points(const Scenario& sc, Table& points, Attributes& attrs, bool required);

// err_<x> = meas / pred - 1 and meas_speedup_* from the meas_ms_* columns already filled.
void fill_errors(Table& points);

}  // namespace cisa
