// format_g10 (every CSV number cell) against the library's exact "%.10g" (std::to_chars with a
// precision), on random bit patterns, on random magnitudes and on decimal ties and their neighbours.
#include "cisa/format_g10.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "catch.hpp"

namespace {

std::string ours(double v) {
  char b[32];
  return std::string(b, cisa::format_g10(b, v));
}
std::string library(double v) {
  char b[64];
  return std::string(b, std::to_chars(b, b + sizeof b, v, std::chars_format::general, 10).ptr);
}

}  // namespace

TEST_CASE("format_g10 prints what %.10g prints", "[format]") {
  std::mt19937_64 g(std::random_device{}());
  std::size_t checked = 0, bad = 0;
  auto check = [&](double v) {
    ++checked;
    if (ours(v) != library(v) && bad++ < 5) FAIL_CHECK(ours(v) << " vs " << library(v) << " for bits of " << v);
  };
  for (int i = 0; i < 300000; ++i) {  // any finite double
    std::uint64_t bits = g();
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isfinite(v)) check(v);
  }
  std::uniform_real_distribution<double> ln(-60.0, 90.0);
  for (int i = 0; i < 300000; ++i) {  // the magnitudes sweeps produce, both signs
    const double v = std::exp(ln(g));
    check(v);
    check(-v);
  }
  for (int i = 0; i < 100000; ++i) {  // ten digits then a 5: exact or near decimal ties, and neighbours
    const long long m = 1000000000LL + static_cast<long long>(g() % 9000000000ULL);
    const int e = static_cast<int>(g() % 44) - 22;
    const double v = static_cast<double>(m * 10 + 5) * std::pow(10.0, e - 10);
    check(v);
    check(std::nextafter(v, 0.0));
    check(std::nextafter(v, 1e300));
    check(static_cast<double>(m) + 0.5);
  }
  for (double v : {0.0, -0.0, 1e10, 9999999999.5, 9999999999.4, 99999.999995, 1e-4, 1e-5, 1e36, 1e37, 1e-18, 1e-19,
                   5e-324, 2.2250738585072014e-308, std::numeric_limits<double>::max(), 0.1, 0.5, 1.5, 2.5,
                   std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN()})
    check(v);
  CHECK(bad == 0);
  CHECK(checked > 1000000);
}
