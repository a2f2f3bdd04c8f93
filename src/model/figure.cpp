#include "model/figure.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace cisa {

std::string to_string(Label l) {
  switch (l) {
    case Label::DS: return "DS";
    case Label::MEAS: return "MEAS";
    case Label::PUB: return "PUB";
    case Label::XFER: return "XFER";
    case Label::EST: return "EST";
    case Label::CALC: return "CALC";
    case Label::GIVEN: return "given";
  }
  return "given";
}

Label Figure::label() const {
  struct Prefix {
    const char* text;
    Label label;
  };
  for (const Prefix& p : {Prefix{"DS", Label::DS}, Prefix{"MEAS", Label::MEAS}, Prefix{"PUB", Label::PUB},
                          Prefix{"XFER", Label::XFER}, Prefix{"EST", Label::EST}, Prefix{"CALC", Label::CALC}})
    if (source.rfind(p.text, 0) == 0) return p.label;
  return Label::GIVEN;
}

namespace {

// The percentage after the last `key` in a source ("spread 3.1%", "rms residual 7.2 %"), as a
// fraction; NaN if absent.
double percent_after(const std::string& s, const std::string& key) {
  const auto at = s.rfind(key);
  if (at == std::string::npos) return NAN;
  char* end = nullptr;
  const double v = std::strtod(s.c_str() + at + key.size(), &end);
  if (end && *end == ' ') ++end;
  return (end && *end == '%' && v >= 0) ? v / 100.0 : NAN;
}

}  // namespace

Band band_of(const Figure& f) {
  if (!std::isnan(f.lo) && !std::isnan(f.hi) && f.value != 0)
    return {std::min(f.lo, f.hi) / f.value, std::max(f.lo, f.hi) / f.value};
  double rel = 0.0;
  switch (f.label()) {
    case Label::DS:
    case Label::CALC: rel = 0.0; break;
    case Label::MEAS: {
      // Half the recorded spread (max - min over repetitions), or a fit's rms relative residual
      // over its own calibration shapes (a figure fitted over many shapes is as uncertain as the
      // fit is off at them); at least 3 % for drift between machine starts (three H200
      // calibrations read 4.34 / 4.54 / 4.63 TB/s), at most 15 %.
      const double s = percent_after(f.source, "spread "),
                   r = percent_after(f.source, "rms residual ");
      rel = !std::isnan(s) ? s / 2.0 : !std::isnan(r) ? r : 0.05;
      rel = std::clamp(rel, 0.03, 0.15);
      break;
    }
    case Label::PUB: rel = 0.10; break;
    case Label::XFER: rel = 0.20; break;
    case Label::EST:
    case Label::GIVEN: rel = 0.30; break;
  }
  return {1.0 / (1.0 + rel), 1.0 + rel};
}

Figure transferred(const Figure& f, double factor, const std::string& rule, const std::string& from) {
  char head[160];
  std::snprintf(head, sizeof head, "XFER: %.4g on %s x %.4g (", f.value, from.c_str(), factor);
  Figure out;
  out.value = f.value * factor;
  out.source = head + rule + "); was " + f.source;
  if (!std::isnan(f.lo)) {
    const Band x = band_of(out);
    out.lo = std::min(f.lo * factor, out.value * x.lo);
    out.hi = std::max(f.hi * factor, out.value * x.hi);
  }
  return out;
}

}  // namespace cisa
