#include "cisa/format_g10.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace cisa {

namespace {

// 10^k = m x 2^q for k in [-kMaxPow, kMaxPow], m in [2^63, 2^64): exact for 0 <= k <= 27
// (5^27 < 2^63), else m rounded to the nearest integer (relative error at most 2^-64). Generated
// with Python's fractions.Fraction.
constexpr int kMaxPow = 40;
struct Pow10 {
  std::uint64_t m;
  int q;
};
constexpr Pow10 kPow10[2 * kMaxPow + 1] = {
    {0x8b61313bbabce2c6ULL, -196},  // 1e-40 (rounded)
    {0xae397d8aa96c1b78ULL, -193},  // 1e-39 (rounded)
    {0xd9c7dced53c72256ULL, -190},  // 1e-38 (rounded)
    {0x881cea14545c7575ULL, -186},  // 1e-37 (rounded)
    {0xaa242499697392d3ULL, -183},  // 1e-36 (rounded)
    {0xd4ad2dbfc3d07788ULL, -180},  // 1e-35 (rounded)
    {0x84ec3c97da624ab5ULL, -176},  // 1e-34 (rounded)
    {0xa6274bbdd0fadd62ULL, -173},  // 1e-33 (rounded)
    {0xcfb11ead453994baULL, -170},  // 1e-32 (rounded)
    {0x81ceb32c4b43fcf5ULL, -166},  // 1e-31 (rounded)
    {0xa2425ff75e14fc32ULL, -163},  // 1e-30 (rounded)
    {0xcad2f7f5359a3b3eULL, -160},  // 1e-29 (rounded)
    {0xfd87b5f28300ca0eULL, -157},  // 1e-28 (rounded)
    {0x9e74d1b791e07e48ULL, -153},  // 1e-27 (rounded)
    {0xc612062576589ddbULL, -150},  // 1e-26 (rounded)
    {0xf79687aed3eec551ULL, -147},  // 1e-25 (rounded)
    {0x9abe14cd44753b53ULL, -143},  // 1e-24 (rounded)
    {0xc16d9a0095928a27ULL, -140},  // 1e-23 (rounded)
    {0xf1c90080baf72cb1ULL, -137},  // 1e-22 (rounded)
    {0x971da05074da7befULL, -133},  // 1e-21 (rounded)
    {0xbce5086492111aebULL, -130},  // 1e-20 (rounded)
    {0xec1e4a7db69561a5ULL, -127},  // 1e-19 (rounded)
    {0x9392ee8e921d5d07ULL, -123},  // 1e-18 (rounded)
    {0xb877aa3236a4b449ULL, -120},  // 1e-17 (rounded)
    {0xe69594bec44de15bULL, -117},  // 1e-16 (rounded)
    {0x901d7cf73ab0acd9ULL, -113},  // 1e-15 (rounded)
    {0xb424dc35095cd80fULL, -110},  // 1e-14 (rounded)
    {0xe12e13424bb40e13ULL, -107},  // 1e-13 (rounded)
    {0x8cbccc096f5088ccULL, -103},  // 1e-12 (rounded)
    {0xafebff0bcb24aaffULL, -100},  // 1e-11 (rounded)
    {0xdbe6fecebdedd5bfULL, -97},   // 1e-10 (rounded)
    {0x89705f4136b4a597ULL, -93},   // 1e-9 (rounded)
    {0xabcc77118461cefdULL, -90},   // 1e-8 (rounded)
    {0xd6bf94d5e57a42bcULL, -87},   // 1e-7 (rounded)
    {0x8637bd05af6c69b6ULL, -83},   // 1e-6 (rounded)
    {0xa7c5ac471b478423ULL, -80},   // 1e-5 (rounded)
    {0xd1b71758e219652cULL, -77},   // 1e-4 (rounded)
    {0x83126e978d4fdf3bULL, -73},   // 1e-3 (rounded)
    {0xa3d70a3d70a3d70aULL, -70},   // 1e-2 (rounded)
    {0xcccccccccccccccdULL, -67},   // 1e-1 (rounded)
    {0x8000000000000000ULL, -63},   // 1e0
    {0xa000000000000000ULL, -60},   // 1e1
    {0xc800000000000000ULL, -57},   // 1e2
    {0xfa00000000000000ULL, -54},   // 1e3
    {0x9c40000000000000ULL, -50},   // 1e4
    {0xc350000000000000ULL, -47},   // 1e5
    {0xf424000000000000ULL, -44},   // 1e6
    {0x9896800000000000ULL, -40},   // 1e7
    {0xbebc200000000000ULL, -37},   // 1e8
    {0xee6b280000000000ULL, -34},   // 1e9
    {0x9502f90000000000ULL, -30},   // 1e10
    {0xba43b74000000000ULL, -27},   // 1e11
    {0xe8d4a51000000000ULL, -24},   // 1e12
    {0x9184e72a00000000ULL, -20},   // 1e13
    {0xb5e620f480000000ULL, -17},   // 1e14
    {0xe35fa931a0000000ULL, -14},   // 1e15
    {0x8e1bc9bf04000000ULL, -10},   // 1e16
    {0xb1a2bc2ec5000000ULL, -7},    // 1e17
    {0xde0b6b3a76400000ULL, -4},    // 1e18
    {0x8ac7230489e80000ULL, 0},     // 1e19
    {0xad78ebc5ac620000ULL, 3},     // 1e20
    {0xd8d726b7177a8000ULL, 6},     // 1e21
    {0x878678326eac9000ULL, 10},    // 1e22
    {0xa968163f0a57b400ULL, 13},    // 1e23
    {0xd3c21bcecceda100ULL, 16},    // 1e24
    {0x84595161401484a0ULL, 20},    // 1e25
    {0xa56fa5b99019a5c8ULL, 23},    // 1e26
    {0xcecb8f27f4200f3aULL, 26},    // 1e27
    {0x813f3978f8940984ULL, 30},    // 1e28 (rounded)
    {0xa18f07d736b90be5ULL, 33},    // 1e29 (rounded)
    {0xc9f2c9cd04674edfULL, 36},    // 1e30 (rounded)
    {0xfc6f7c4045812296ULL, 39},    // 1e31 (rounded)
    {0x9dc5ada82b70b59eULL, 43},    // 1e32 (rounded)
    {0xc5371912364ce305ULL, 46},    // 1e33 (rounded)
    {0xf684df56c3e01bc7ULL, 49},    // 1e34 (rounded)
    {0x9a130b963a6c115cULL, 53},    // 1e35 (rounded)
    {0xc097ce7bc90715b3ULL, 56},    // 1e36 (rounded)
    {0xf0bdc21abb48db20ULL, 59},    // 1e37 (rounded)
    {0x96769950b50d88f4ULL, 63},    // 1e38 (rounded)
    {0xbc143fa4e250eb31ULL, 66},    // 1e39 (rounded)
    {0xeb194f8e1ae525fdULL, 69},    // 1e40 (rounded)
};

// 10^j as doubles (correctly rounded literals), j in [-kMaxDec, kMaxDec]: the exponent's first
// estimate is raised where |v| reaches the next power (no second multiply, no mispredicted loop).
constexpr int kMaxDec = 50;
constexpr double kDecimal[2 * kMaxDec + 1] = {
    1e-50, 1e-49, 1e-48, 1e-47, 1e-46, 1e-45, 1e-44, 1e-43, 1e-42, 1e-41, 1e-40, 1e-39, 1e-38,
    1e-37, 1e-36, 1e-35, 1e-34, 1e-33, 1e-32, 1e-31, 1e-30, 1e-29, 1e-28, 1e-27, 1e-26, 1e-25,
    1e-24, 1e-23, 1e-22, 1e-21, 1e-20, 1e-19, 1e-18, 1e-17, 1e-16, 1e-15, 1e-14, 1e-13, 1e-12,
    1e-11, 1e-10, 1e-9,  1e-8,  1e-7,  1e-6,  1e-5,  1e-4,  1e-3,  1e-2,  1e-1,  1e0,   1e1,
    1e2,   1e3,   1e4,   1e5,   1e6,   1e7,   1e8,   1e9,   1e10,  1e11,  1e12,  1e13,  1e14,
    1e15,  1e16,  1e17,  1e18,  1e19,  1e20,  1e21,  1e22,  1e23,  1e24,  1e25,  1e26,  1e27,
    1e28,  1e29,  1e30,  1e31,  1e32,  1e33,  1e34,  1e35,  1e36,  1e37,  1e38,  1e39,  1e40,
    1e41,  1e42,  1e43,  1e44,  1e45,  1e46,  1e47,  1e48,  1e49,  1e50};

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

// "dd" of v < 100 as two bytes of a little-endian word.
std::uint64_t pair_of(std::uint32_t v) {
  std::uint16_t t = 0;
  std::memcpy(&t, kPairs.c + 2 * v, 2);
  return t;
}

}  // namespace

char* format_g10(char* p, double v) {
#ifndef __SIZEOF_INT128__
  return library_g10(p, v);
#else
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  const int be = static_cast<int>((bits >> 52) & 0x7ff);
  if (be == 0 || be == 0x7ff) return library_g10(p, v);  // zero, subnormal, inf, nan
  // |v| = m2 x 2^(be - 1075), m2 in [2^52, 2^53); |v| in [2^(e2-1), 2^e2).
  const std::uint64_t m2 = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
  const int e2 = be - 1022;
  // floor(log10 |v|) or one less: log10(2) ~ 78913 / 2^18 (exact for these exponents).
  int x = ((e2 - 1) * 78913) >> 18;
  // Then floor(log10 |v|), but where a rounded 10^j (j > 22) misjudges the boundary: the loop
  // below corrects that. Out of the table's range the loop hands v to the library anyway.
  x += std::fabs(v) >= kDecimal[std::clamp(x + 1, -kMaxDec, kMaxDec) + kMaxDec];
  // s = |v| x 10^k in [1e9, 1e10), k = 9 - x, as the integer n and the 64-bit fraction F / 2^64
  // (truncated). The product of the significands is exact, so s is exact where 10^k is
  // (0 <= k <= 27), else within 2^-64 relative (< 6e-10 absolute).
  __extension__ typedef unsigned __int128 U128;  // GCC and Clang on 64-bit targets
  std::uint64_t n = 0, F = 0;
  for (int tries = 0;; ++tries) {
    const int k = 9 - x;
    if (k > kMaxPow || k < -kMaxPow || tries == 2) return library_g10(p, v);
    const Pow10& t = kPow10[k + kMaxPow];
    const U128 prod = static_cast<U128>(m2) * t.m;  // in [2^115, 2^117)
    const int shift = 1075 - be - t.q;  // s = prod / 2^shift: shift in (80, 90) near [1e9, 1e10)
    if (shift <= 64 || shift >= 116) return library_g10(p, v);
    // 64-bit words only (the high word holds n and the top of the fraction): sh in [1, 51].
    const int sh = shift - 64;
    const std::uint64_t hi = static_cast<std::uint64_t>(prod >> 64),
                        lo = static_cast<std::uint64_t>(prod);
    n = hi >> sh;
    if (n >= 10000000000ULL) {
      ++x;
    } else if (n < 1000000000ULL) {
      --x;
    } else {
      F = hi << (64 - sh) | lo >> sh;
      break;
    }
  }
  // Rounding to the nearest integer is certain unless s lies within 2^-20 of a half (a tie, or
  // where an inexact 10^k could decide it wrongly): there the library decides. (F's truncation
  // sends at most one more value, at the margin's upper end, to the library.)
  constexpr std::uint64_t kHalf = 1ULL << 63, kMargin = 1ULL << 44;
  if (F - (kHalf - kMargin) <= 2 * kMargin) return library_g10(p, v);
  n += F > kHalf;
  if (n == 10000000000ULL) {
    n = 1000000000ULL;
    ++x;
  }
  // The ten digits as the bytes 0-9 of D (then zeros), built in registers and written with one
  // 16-byte store per case (room: 32 at p). (Written as bytes and read back as words, every call
  // waited on failed store-to-load forwarding: a third of this function's time.)
  const std::uint32_t hi = static_cast<std::uint32_t>(n / 100000), lo = static_cast<std::uint32_t>(n % 100000);
  const std::uint32_t hr = hi % 10000, lr = lo % 10000;  // two independent halves: a short dependency chain
  const std::uint64_t a = (static_cast<std::uint64_t>('0' + hi / 10000)) | pair_of(hr / 100) << 8 |
                          pair_of(hr % 100) << 24 | static_cast<std::uint64_t>('0' + lo / 10000) << 40 |
                          pair_of(lr / 100) << 48;
  const std::uint64_t b = pair_of(lr % 100);
  const U128 D = static_cast<U128>(a) | static_cast<U128>(b) << 64;
  // nd: the digits up to the last non-zero one (digit 0 is not '0'), from the '0' bytes of digits 2-9.
  const std::uint64_t w = ((a >> 16) | (b << 48)) ^ 0x3030303030303030ULL;  // little-endian: digit 9 is the top byte
  const int nd = w ? 10 - (__builtin_clzll(w) >> 3) : (((a >> 8) & 0xff) != '0' ? 2 : 1);
  *p = '-';
  p += v < 0;
  U128 r = 0;
  if (x < -4 || x >= 10) {  // d.ddddddddde[+-]XX
    r = (D & 0xff) | static_cast<U128>('.') << 8 | (D >> 8) << 16;
    std::memcpy(p, &r, 16);
    p += nd > 1 ? nd + 1 : 1;
    *p++ = 'e';
    *p++ = x < 0 ? '-' : '+';
    const int ax = x < 0 ? -x : x;
    if (ax >= 100) *p++ = static_cast<char>('0' + ax / 100);
    *p++ = static_cast<char>('0' + ax / 10 % 10);
    *p++ = static_cast<char>('0' + ax % 10);
    return p;
  }
  if (x >= 0) {  // x + 1 integer digits, then the fraction without trailing zeros
    if (nd <= x + 1) {
      std::memcpy(p, &D, 16);
      return p + x + 1;
    }
    const int at = 8 * (x + 1);  // x <= 9: the point at byte x + 1 <= 10
    r = (D & ((static_cast<U128>(1) << at) - 1)) | static_cast<U128>('.') << at | (D >> at) << (at + 8);
    std::memcpy(p, &r, 16);
    return p + nd + 1;
  }
  // 0.000ddd: -x - 1 zeros after the point (x >= -4), then the digits without trailing zeros
  const int z = 1 - x;  // the prefix "0.", "0.0", ... of 2 to 5 bytes
  const std::uint64_t prefix = 0x303030'2e30ULL & ((1ULL << (8 * z)) - 1);  // "0.000", little-endian
  r = static_cast<U128>(prefix) | D << (8 * z);
  std::memcpy(p, &r, 16);
  return p + z + nd;
#endif
}

}  // namespace cisa
