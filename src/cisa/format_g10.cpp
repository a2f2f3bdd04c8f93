#include "cisa/format_g10.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace cisa {

namespace {

// 10^0 .. 10^27: exact in an x87 long double (5^27 < 2^64), so v * 10^k carries one rounding.
constexpr int kMaxPow = 27;
struct Pow10 {
  long double p[kMaxPow + 1];
  constexpr Pow10() : p{} {
    long double x = 1;
    for (int i = 0; i <= kMaxPow; ++i, x *= 10) p[i] = x;
  }
};
constexpr Pow10 kPow10{};

char* library_g10(char* p, double v) { return std::to_chars(p, p + 32, v, std::chars_format::general, 10).ptr; }

// "00" .. "99"
struct Pairs {
  char c[200];
  constexpr Pairs() : c{} {
    for (int i = 0; i < 100; ++i) {
      c[2 * i] = static_cast<char>('0' + i / 10);
      c[2 * i + 1] = static_cast<char>('0' + i % 10);
    }
  }
};
constexpr Pairs kPairs{};

// The five digits of h < 100000 at d.
void put5(char* d, std::uint32_t h) {
  const std::uint32_t r = h % 10000;
  d[0] = static_cast<char>('0' + h / 10000);
  std::memcpy(d + 1, kPairs.c + 2 * (r / 100), 2);
  std::memcpy(d + 3, kPairs.c + 2 * (r % 100), 2);
}

// Strips trailing '0's of digits [b, e); returns the new end.
const char* strip_zeros(const char* b, const char* e) {
  while (e > b && e[-1] == '0') --e;
  return e;
}

// Whether long double arithmetic really carries 64 bits here: not under an emulator that computes
// it in double (valgrind) or with the x87 precision control lowered.
bool extended_at_run_time() {
  volatile long double one = 1.0L, tiny = 1.0L / 9223372036854775808.0L;  // 2^-63
  return static_cast<long double>(one + tiny) != one;
}

}  // namespace

char* format_g10(char* p, double v) {
  // The fast path needs a 64-bit significand (x87 extended) to scale with a single rounding.
  if constexpr (std::numeric_limits<long double>::digits < 64) return library_g10(p, v);
  static const bool extended = extended_at_run_time();
  if (!extended || !std::isfinite(v) || v == 0) return library_g10(p, v);
  const double a = std::fabs(v);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &a, sizeof bits);
  const int e2 = static_cast<int>(bits >> 52) - 1022;  // a in [2^(e2-1), 2^e2) (normal numbers)
  if (e2 < -1000) return library_g10(p, v);           // subnormal
  // floor(log10 a) or one less: log10(2) ~ 78913 / 2^18 (exact for these exponents).
  int x = ((e2 - 1) * 78913) >> 18;
  long double s = 0;
  for (int tries = 0;; ++tries) {
    const int k = 9 - x;  // s = a * 10^k in [1e9, 1e10)
    if (k > kMaxPow || k < -kMaxPow || tries == 2) return library_g10(p, v);
    s = k >= 0 ? static_cast<long double>(a) * kPow10.p[k] : static_cast<long double>(a) / kPow10.p[-k];
    if (s >= 1e10L) ++x;
    else if (s < 1e9L) --x;
    else break;
  }
  // s is within 2^-64 relative (< 6e-10 absolute) of the exact a * 10^k: rounding to the nearest
  // integer is certain unless s lies near a half; there the library decides.
  // Adding 2^63 leaves a unit in the last place of 1: the sum holds s rounded to the nearest
  // integer, read from its significand (no float-to-int conversion, which changes the x87 mode).
  constexpr long double kTwo63 = 9223372036854775808.0L;
  const long double rounded = s + kTwo63;
  const long double rest = s - (rounded - kTwo63);  // in [-0.5, 0.5]
  if (rest > 0.5L - 1e-6L || rest < -0.5L + 1e-6L) return library_g10(p, v);
  std::uint64_t n = 0;
  std::memcpy(&n, &rounded, sizeof n);  // the explicit 64-bit significand: 2^63 + round(s)
  n -= 1ULL << 63;
  if (n == 10000000000ULL) {
    n = 1000000000ULL;
    ++x;
  }
  char d[10];
  put5(d, static_cast<std::uint32_t>(n / 100000));  // two independent halves: a short dependency chain
  put5(d + 5, static_cast<std::uint32_t>(n % 100000));
  if (v < 0) *p++ = '-';
  if (x < -4 || x >= 10) {  // d.ddddddddde[+-]XX
    *p++ = d[0];
    const char* e = strip_zeros(d + 1, d + 10);
    if (e > d + 1) {
      *p++ = '.';
      std::memcpy(p, d + 1, static_cast<std::size_t>(e - d - 1));
      p += e - d - 1;
    }
    *p++ = 'e';
    *p++ = x < 0 ? '-' : '+';
    const int ax = x < 0 ? -x : x;
    if (ax >= 100) *p++ = static_cast<char>('0' + ax / 100);
    *p++ = static_cast<char>('0' + ax / 10 % 10);
    *p++ = static_cast<char>('0' + ax % 10);
    return p;
  }
  if (x >= 0) {  // x + 1 integer digits, then the fraction without trailing zeros
    std::memcpy(p, d, static_cast<std::size_t>(x + 1));
    p += x + 1;
    const char* e = strip_zeros(d + x + 1, d + 10);
    if (e > d + x + 1) {
      *p++ = '.';
      std::memcpy(p, d + x + 1, static_cast<std::size_t>(e - d - x - 1));
      p += e - d - x - 1;
    }
    return p;
  }
  // 0.000ddd: -x - 1 zeros after the point, then the digits without trailing zeros
  *p++ = '0';
  *p++ = '.';
  for (int i = 0; i < -x - 1; ++i) *p++ = '0';
  const char* e = strip_zeros(d, d + 10);
  std::memcpy(p, d, static_cast<std::size_t>(e - d));
  return p + (e - d);
}

}  // namespace cisa
