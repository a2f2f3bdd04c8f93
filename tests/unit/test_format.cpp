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

TEST_CASE("format_g10: special values, subnormals, every power of ten and the table's ends",
          "[format]") {
  std::size_t bad = 0, checked = 0;
  auto check = [&](double v) {
    for (double w : {v, -v}) {
      ++checked;
      if (ours(w) != library(w) && bad++ < 5) FAIL_CHECK(ours(w) << " vs " << library(w));
    }
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {0.0, inf, std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::min(),
                   std::numeric_limits<double>::max(),
                   std::nextafter(std::numeric_limits<double>::min(), 0.0), 1e-310, 2.5e-320})
    check(v);
  // Subnormals: every exponent bit pattern 0 with spread significands.
  for (std::uint64_t m = 1; m < (1ULL << 52); m = m * 3 + 1) {
    double v = 0;
    std::memcpy(&v, &m, sizeof v);
    check(v);
  }
  // Every power of ten a double holds, its neighbours, and the decade ends around it (1e9 - 0.5
  // ulp style values: where the first estimate of the exponent is one off and where rounding
  // carries into a new digit).
  for (int e = -325; e <= 308; ++e) {
    const double p10 = std::pow(10.0, e);
    for (double v :
         {p10, std::nextafter(p10, 0.0), std::nextafter(p10, inf), p10 * 0.99999999995,
          p10 * 0.999999999949, p10 * 0.9999999999501, p10 * 1.00000000005, p10 * 9.9999999995,
          p10 * 9.99999999949, p10 * 5.0, p10 * 1.5, p10 * 1.25, p10 * 1.2345678905})
      if (std::isfinite(v)) check(v);
  }
  // Every binary exponent (the table of 10^k: |k| <= 40, then the library), a few significands
  // each.
  std::mt19937_64 g(12345);
  for (int be = 1; be < 2047; ++be)
    for (int i = 0; i < 64; ++i) {
      const std::uint64_t bits = (static_cast<std::uint64_t>(be) << 52) | (g() >> 12);
      double v = 0;
      std::memcpy(&v, &bits, sizeof v);
      check(v);
    }
  // Short decimals (the values sweeps print most): n / 10^j for small n.
  for (int j = 0; j <= 12; ++j)
    for (int n = 1; n < 20000; n += 7) check(n / std::pow(10.0, j));
  CHECK(bad == 0);
  CHECK(checked > 300000);
}

// The exponent is first estimated from the binary exponent, then raised by a compare with a table
// of 10^j (j in [-50, 50], correctly rounded doubles, inexact above 1e22) and corrected by the
// digit count; the fraction's half-way test works on its top 64 bits. Values within a few
// thousand ulps of each 10^j (both sides), the table's ends and beyond, and a million values
// spread over its decades.
TEST_CASE("format_g10 at and around every power of ten of its exponent table", "[format]") {
  std::size_t bad = 0, checked = 0;
  auto check = [&](double v) {
    for (double w : {v, -v}) {
      ++checked;
      if (ours(w) != library(w) && bad++ < 5) FAIL_CHECK(ours(w) << " vs " << library(w));
    }
  };
  for (int e = -60; e <= 60; ++e) {
    const double p10 = std::stod("1e" + std::to_string(e));
    double lo = p10, hi = p10;
    for (int i = 0; i < 2000; ++i) {
      check(lo);
      check(hi);
      lo = std::nextafter(lo, 0.0);
      hi = std::nextafter(hi, 1e300);
    }
  }
  std::mt19937_64 g(2024);
  std::uniform_real_distribution<double> d(-52.0, 52.0), m(1.0, 10.0);
  for (int i = 0; i < 1000000; ++i) check(m(g) * std::pow(10.0, std::floor(d(g))));
  CHECK(bad == 0);
  CHECK(checked > 2000000);
}
