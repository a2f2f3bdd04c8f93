// One evaluation point (geometry x CISA settings x workload on a GPU) and its prediction.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/ceilings.hpp"
#include "model/hardware.hpp"
#include "model/roofline.hpp"
#include "model/traffic.hpp"
#include "model/types.hpp"

namespace cisa {

struct Point {
  std::string model = "custom";    // label
  std::string hardware;            // GPU preset name
  Geometry geo;
  CisaConfig cisa;
  Workload work;
  std::string dense_impl = "best";         // implementation profile of the dense baseline, or "best"
  std::string cisa_impl = "auto";   // implementation profile pricing CISA, or "auto" (per architecture)
  // Sparse-attention design (issue 15): "cisa" (the CISA traffic model of traffic.cpp), or the
  // key of Scenario::designs (a shipped models/design/NAME.yaml or a design file), whose traffic
  // model (src/design) prices the CISA-side columns.
  std::string design = "cisa";
};

// One implementation on one card at one bound: everything the traffic model and the roofline need.
struct Pricing {
  std::string impl;  // profile name
  Rates rates;
  KernelShape shape;
};

// The pricings of a point, at the bounds lo / point / hi (index by static_cast<int>(Bound)).
struct PointPricing {
  std::vector<std::array<Pricing, 3>> dense;  // dense candidates: one named, or all for "best"
  std::array<Pricing, 3> cisa;
  bool has_own = false;  // the CISA implementation has a dense kernel of its own ...
  std::array<Pricing, 3> own;  // ... priced here (the "_vs_own" ratios)
  // Unique to each pricing a Pricer builds, never reused in a process: the key of predict's
  // per-thread memo of the dense side. A copy, which its owner may change, gets 0: not memoised.
  struct Id {
    std::uint64_t value = 0;
    Id() = default;
    explicit Id(std::uint64_t v) : value(v) {}
    Id(const Id&) {}
    Id(Id&& o) noexcept : value(o.value) { o.value = 0; }
    Id& operator=(const Id&) {
      value = 0;
      return *this;
    }
    Id& operator=(Id&& o) noexcept {
      value = o.value;
      o.value = 0;
      return *this;
    }
  } id;
};

struct Prediction {
  std::string design = "cisa";  // the design's name (src/design) pricing the CISA-side figures
  int qshare_g = 1;          // effective G of the phase
  double forwards = 0;       // forwards summed (full_prefill: ceil(L/P))
  ForwardCost cost;          // summed over forwards: CISA with its implementation, dense with the baseline's
  std::string dense_impl;    // the dense baseline (the fastest candidate for "best")
  std::string cisa_impl;     // the CISA implementation ("auto" resolved)
  ComponentTimes dense, cisa;  // seconds at the point estimate; dense = the baseline
  ComponentTimes dense_lo, dense_hi, cisa_lo, cisa_hi;  // the ends of the uncertainty band
  double dense_own_attention = NAN;  // the CISA implementation's own dense kernel (NaN: it has none)
  double dense_own_lo = NAN, dense_own_hi = NAN;
  Ceilings ceilings;
};

// Checks ranges and geometry; throws std::invalid_argument naming the field (scenario keys).
void validate_point(const Point& p);

Prediction predict(const Point& p, const PointPricing& pricing);

}  // namespace cisa
