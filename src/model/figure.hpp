// A sourced number. Its source string starts with a label that says how it is known:
//   DS    datasheet / press figure of the card
//   MEAS  measured on the card named in the source (method, date, spread)
//   PUB   published by a third party (the source names it)
//   XFER  transferred from another card or implementation by a stated rule
//   EST   first-principles estimate
//   CALC  computed from other figures
// The label decides the figure's uncertainty band unless the figure gives its own range.
#pragma once

#include <cmath>
#include <string>

namespace cisa {

enum class Label { DS, MEAS, PUB, XFER, EST, CALC, GIVEN };
std::string to_string(Label l);

struct Figure {
  double value = 0.0;
  std::string source;  // e.g. "DS: NVIDIA H200 datasheet", "MEAS: cisa-sim calibrate ... spread 1.0%"
  double lo = NAN, hi = NAN;  // optional explicit range (same unit as value)
  Label label() const;
  bool measured() const { return label() == Label::MEAS; }
  bool given() const { return !std::isnan(value); }
};

inline const Figure kNotMeasured{NAN, "not measured"};

// Relative uncertainty of a figure as multiplicative factors {low, high} around its value:
// the explicit range when given; else the measured spread ("spread 3.1%") for MEAS; else a
// default per label (DS, CALC 0; MEAS 5 %, or half its spread within 3-15 %; PUB 10 %; XFER 20 %;
// EST 30 %). README "Uncertainty".
struct Band {
  double lo = 1.0, hi = 1.0;
};
Band band_of(const Figure& f);

// The figure `f` (given on card `from`) moved to another card by `factor` under `rule`: labelled
// XFER, its source naming the original; a range of the original moves with it, widened to at
// least the XFER band.
Figure transferred(const Figure& f, double factor, const std::string& rule, const std::string& from);

}  // namespace cisa
