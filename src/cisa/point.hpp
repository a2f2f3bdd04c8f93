// One evaluation point (geometry x CISA settings x workload on a GPU) and its prediction.
#pragma once

#include <string>

#include "cisa/ceilings.hpp"
#include "cisa/hardware.hpp"
#include "cisa/roofline.hpp"
#include "cisa/traffic.hpp"
#include "cisa/types.hpp"

namespace cisa {

struct Point {
  std::string model = "custom";    // label
  std::string hardware;            // GPU preset name
  Geometry geo;
  CisaConfig cisa;
  Workload work;
};

struct Prediction {
  int qshare_g = 1;         // effective G of the phase
  double forwards = 0;      // forwards summed (full_prefill: ceil(L/P))
  ForwardCost cost;         // summed over forwards
  ComponentTimes dense, cisa;  // seconds
  double dense_peer_attention = 0;  // seconds, dense attention at the peer kernel's rate
  Ceilings ceilings;
};

// Checks ranges and geometry; throws std::invalid_argument naming the field (scenario keys).
void validate_point(const Point& p);

KernelShape kernel_shape(const Hardware& hw, const Rates& rates);
Prediction predict(const Point& p, const KernelShape& shape, const Rates& rates, int radix_passes);

}  // namespace cisa
