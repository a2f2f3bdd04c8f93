// Evaluates every design of a design scenario over the points of its runs: one table row per
// (point, design), bytes per category, time per component (lo / point / hi), ceilings.
#pragma once

#include "model/point.hpp"
#include "cisa/table.hpp"
#include "design/design_yaml.hpp"

namespace cisa::design {

// A design at one point, priced through the point's implementation profiles (the CISA profile
// prices the design's kernels) at the bounds lo / point / hi. The traffic differs between bounds
// only through the token gather's page visits (one per selected unit at the slow end).
struct PricedDesign {
  Resolved r;
  DesignCost cost[3];
  ComponentTimes times[3];
};
// Throws std::invalid_argument when the design does not fit the point (resolve()).
PricedDesign price_design(const Point& p, const PointPricing& pr, const Design& d, bool equal_budget);

// The run path's prediction for a point with a design other than "cisa": the dense side (every
// dense candidate, the own-kernel twin) as predict(); the CISA-side costs, bytes, times, bands and
// ceilings from the design's traffic model. Fields the design model does not track (L2 request
// bytes, split factor, sparse / dense-path positions, the whole-prompt and K/V-only ceilings) are NaN.
Prediction predict_design(const Point& p, const PointPricing& pr, const Design& d, bool equal_budget);

Table evaluate_designs(const DesignScenario& sc);

}  // namespace cisa::design
