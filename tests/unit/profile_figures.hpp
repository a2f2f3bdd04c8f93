// Test helper: a profile figure measured on the H200 only (for profiles built in a test).
#pragma once

#include "model/implementation.hpp"

namespace cisa::test {

inline PerCard h200_figure(double value) {
  PerCard c;
  c.cards.push_back({"h200_sxm", Figure{value, "MEAS: test"}});
  return c;
}

}  // namespace cisa::test
