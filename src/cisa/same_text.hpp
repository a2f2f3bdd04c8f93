// Equality of two short strings without a call: a sweep's text cells (model, phase, dtypes, ...)
// hold the same few values row after row, and the library's compare and assign, a call each,
// were most of their cost (~7 ns a cell, 10 cells a row).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace cisa {

// Whether a and b hold the same characters. Strings of at most 15 characters with a capacity of
// at least 15 own a buffer of at least 16 bytes (capacity + the terminator): both are read as two
// words and the bytes past the size masked off; strings of 16 to 32 characters as four words, the
// first 16 bytes and the last 16 (they overlap below 32; a model preset with its TP, a phase
// name); longer strings go to memcmp.
inline bool same_text(const std::string& a, const std::string& b) {
  if (&a == &b) return true;  // e.g. the static name of an enum, row after row
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  if (n <= 15 && a.capacity() >= 15 && b.capacity() >= 15) {
    std::uint64_t x[2], y[2];
    std::memcpy(x, a.data(), 16);
    std::memcpy(y, b.data(), 16);
    const std::uint64_t lo = n >= 8 ? ~0ULL : (1ULL << (8 * n)) - 1;
    const std::uint64_t hi = n <= 8 ? 0ULL : (1ULL << (8 * (n - 8))) - 1;
    return ((x[0] ^ y[0]) & lo) == 0 && ((x[1] ^ y[1]) & hi) == 0;
  }
  if (n >= 16 && n <= 32) {
    std::uint64_t x[4], y[4];
    std::memcpy(x, a.data(), 16);
    std::memcpy(x + 2, a.data() + n - 16, 16);
    std::memcpy(y, b.data(), 16);
    std::memcpy(y + 2, b.data() + n - 16, 16);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3])) == 0;
  }
  return std::memcmp(a.data(), b.data(), n) == 0;
}

// Assigns v to cell unless it already holds it (a reused table's cells mostly do).
inline void set_text(std::string& cell, const std::string& v) {
  if (!same_text(cell, v)) cell.assign(v);
}

}  // namespace cisa
