// Evaluates every design of a design scenario over the points of its runs: one table row per
// (point, design), bytes per category, time per component (lo / point / hi), ceilings.
#pragma once

#include "cisa/table.hpp"
#include "design/design_yaml.hpp"

namespace cisa::design {

Table evaluate_designs(const DesignScenario& sc);

}  // namespace cisa::design
