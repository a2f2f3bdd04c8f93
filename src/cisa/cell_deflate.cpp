#include "cisa/cell_deflate.hpp"

#ifdef CISA_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include <algorithm>
#include <array>
#include <cstring>

namespace cisa::detail {

namespace {

// Deflate's fixed Huffman code (RFC 1951, 3.2.6), bit-reversed: the stream is written least
// significant bit first, Huffman codes most significant bit first.
constexpr std::uint32_t reversed(std::uint32_t code, unsigned bits) {
  std::uint32_t r = 0;
  for (unsigned k = 0; k < bits; ++k) r |= ((code >> k) & 1U) << (bits - 1 - k);
  return r;
}

struct Code {
  std::uint32_t bits = 0;  // the code (and extra bits), as written
  std::uint32_t len = 0;   // their count
};

// Literals and end of block (0..256), and each match length 3..258 with its extra bits.
struct Tables {
  std::array<Code, 257> literal{};
  std::array<Code, 259> length{};
  Tables() {
    for (std::uint32_t v = 0; v <= 256; ++v) {
      if (v < 144)
        literal[v] = {reversed(0x30 + v, 8), 8};
      else if (v < 256)
        literal[v] = {reversed(0x190 + v - 144, 9), 9};
      else
        literal[v] = {0, 7};  // 256: seven zero bits
    }
    static constexpr std::uint16_t base[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                               15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                               67, 83, 99, 115, 131, 163, 195, 227, 258};
    static constexpr std::uint8_t extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                               2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    for (std::uint32_t sym = 0; sym < 29; ++sym) {
      const std::uint32_t code = 257 + sym;
      const Code c =
          code < 280 ? Code{reversed(code - 256, 7), 7} : Code{reversed(0xC0 + code - 280, 8), 8};
      const std::uint32_t hi = sym == 28 ? 258 : base[sym + 1] - 1;
      for (std::uint32_t l = base[sym]; l <= hi && l <= 258; ++l)
        length[l] = {c.bits | ((l - base[sym]) << c.len), c.len + extra[sym]};
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}

// A distance 1..32768: its 5-bit fixed code and extra bits.
Code distance_code(std::uint32_t d) {
  static constexpr std::uint16_t base[30] = {
      1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
      193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
  std::uint32_t sym = 29;
  while (base[sym] > d) --sym;
  const std::uint32_t extra = sym < 4 ? 0 : sym / 2 - 1;
  return {reversed(sym, 5) | ((d - base[sym]) << 5), 5 + extra};
}

// Bits into bytes, least significant first; stops writing (and says so) past `cap` bytes.
class BitOut {
 public:
  BitOut(unsigned char* out, std::size_t cap) : p_(out), end_(out + (cap > 8 ? cap - 8 : 0)) {}
  void put(std::uint32_t bits, std::uint32_t len) {  // len <= 32
    buf_ |= static_cast<std::uint64_t>(bits) << count_;
    count_ += len;
    if (count_ >= 32) {
      if (p_ >= end_) {  // full: the rest is counted, not written
        over_ = true;
        count_ = 0, buf_ = 0;
        return;
      }
      std::memcpy(p_, &buf_, 8);  // little-endian: the low bytes are the stream's next ones
      p_ += 4;
      buf_ >>= 32;
      count_ -= 32;
    }
  }
  // Pads to a byte; returns the end of the stream, or nullptr when it did not fit.
  unsigned char* finish() {
    if (over_) return nullptr;
    while (count_ > 0) {
      if (p_ >= end_) return nullptr;
      *p_++ = static_cast<unsigned char>(buf_);
      buf_ >>= 8;
      count_ = count_ > 8 ? count_ - 8 : 0;
    }
    return p_;
  }
  bool over() const { return over_; }

 private:
  unsigned char* p_;
  unsigned char* end_;
  std::uint64_t buf_ = 0;
  std::uint32_t count_ = 0;
  bool over_ = false;
};

// The bytes at p and at p - dist that agree, up to `max`: by blocks of 256 (libc's vectorised
// memcmp: a periodic column's match runs to the chunk's end), then by 8-byte words.
std::size_t agreeing(const unsigned char* p, std::size_t dist, std::size_t max) {
  const unsigned char* q = p - dist;
  std::size_t k = 0;
  while (k + 256 <= max && std::memcmp(p + k, q + k, 256) == 0) k += 256;
  for (; k + 8 <= max; k += 8) {
    std::uint64_t a, b;
    std::memcpy(&a, p + k, 8);
    std::memcpy(&b, q + k, 8);
    if (a != b) return k + static_cast<std::size_t>(__builtin_ctzll(a ^ b) / 8);
  }
  while (k < max && p[k] == q[k]) ++k;
  return k;
}

// Whether the cells of `cell` bytes at a and b agree; 8-byte cells (numbers) without a call.
inline bool same_cell(const unsigned char* a, const unsigned char* b, std::size_t cell) {
  if (cell == 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    return x == y;
  }
  return std::memcmp(a, b, cell) == 0;
}

// Whether the first 3 bytes at a and b agree (the shortest match deflate writes), and for cells
// of 8 bytes or more the first 8 (a match holds whole cells). The caller has 3 bytes left.
inline bool prefix_agrees(const unsigned char* a, const unsigned char* b, std::size_t cell) {
  if (cell >= 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    return x == y;
  }
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

}  // namespace

void shuffle8(const unsigned char* in, std::size_t count, unsigned char* out) {
  std::size_t i = 0;
  // 8 elements at a time: an 8 x 8 byte transpose in three steps of swaps (bytes, 16-bit pairs,
  // 32-bit halves between words), then one 8-byte store into each plane.
  for (; i + 8 <= count; i += 8) {
    std::uint64_t w[8];
    std::memcpy(w, in + i * 8, 64);
    for (int k = 0; k < 8; k += 2) {  // bytes
      const std::uint64_t t = ((w[k] >> 8) ^ w[k + 1]) & 0x00FF00FF00FF00FFULL;
      w[k + 1] ^= t;
      w[k] ^= t << 8;
    }
    for (int k = 0; k < 8; k += 4)  // 16-bit pairs
      for (int j = 0; j < 2; ++j) {
        const std::uint64_t t = ((w[k + j] >> 16) ^ w[k + j + 2]) & 0x0000FFFF0000FFFFULL;
        w[k + j + 2] ^= t;
        w[k + j] ^= t << 16;
      }
    for (int j = 0; j < 4; ++j) {  // 32-bit halves
      const std::uint64_t t = ((w[j] >> 32) ^ w[j + 4]) & 0x00000000FFFFFFFFULL;
      w[j + 4] ^= t;
      w[j] ^= t << 32;
    }
    // w[k] now holds byte k of the 8 elements, element 0 in its lowest byte.
    for (int k = 0; k < 8; ++k)
      std::memcpy(out + static_cast<std::size_t>(k) * count + i, &w[k], 8);
  }
  for (; i < count; ++i)
    for (std::size_t b = 0; b < 8; ++b) out[b * count + i] = in[i * 8 + b];
}

std::uint32_t adler32_of(const unsigned char* in, std::size_t n) {
#ifdef CISA_HAVE_LIBDEFLATE
  return libdeflate_adler32(1, in, n);
#else
  std::uint32_t a = 1, b = 0;
  while (n > 0) {
    const std::size_t m = std::min<std::size_t>(n, 5552);  // no overflow before the modulo
    for (std::size_t k = 0; k < m; ++k) b += a += in[k];
    a %= 65521, b %= 65521;
    in += m, n -= m;
  }
  return (b << 16) | a;
#endif
}

std::size_t cell_deflate(const unsigned char* in, std::size_t n, std::size_t cell,
                         std::vector<unsigned char>& out, std::size_t limit) {
  if (cell == 0 || n == 0 || n % cell != 0 || limit < 16) return 0;
  const std::size_t cells = n / cell;
  const std::size_t max_dist = 32768 / cell;  // deflate's window, in cells
  const Tables& t = tables();
  if (out.size() < limit) out.resize(limit);
  out[0] = 0x78, out[1] = 0x01;            // zlib header: deflate, 32 KiB window, fastest
  BitOut bits(out.data() + 2, limit - 6);  // the Adler-32 trailer after it
  bits.put(1, 1);                          // BFINAL: the only block
  bits.put(1, 2);                          // BTYPE 01: fixed Huffman codes
  // The last and the first earlier cell of a hash (0: none, else position + 1).
  constexpr unsigned kHashBits = 11;
  std::array<std::uint32_t, 1U << kHashBits> last{}, first{};
  const std::size_t key_bytes = std::min<std::size_t>(cell, 8);
  auto hash_at = [&](std::size_t i) {
    std::uint64_t v = 0;
    std::memcpy(&v, in + i * cell, key_bytes);
    return static_cast<std::size_t>((v * 0x9E3779B97F4A7C15ULL) >> (64 - kHashBits));
  };
  std::size_t dist = 0;  // the last match's, in cells
  for (std::size_t i = 0; i < cells && !bits.over();) {
    const std::size_t h = hash_at(i);
    const std::size_t left = n - i * cell;
    std::size_t best = 0, best_dist = 0;
    auto consider = [&](std::size_t d) {
      if (d == 0 || d > i || d > max_dist || d == best_dist) return;
      const unsigned char* p = in + i * cell;
      const unsigned char* q = p - d * cell;
      // Longer than best only if the cell at best agrees too: most candidates fail here, and the
      // long matches of periodic columns are scanned once, not once per candidate.
      if (best > 0 && (best + cell > left || !same_cell(p + best, q + best, cell))) return;
      // A match is written only when it holds 3 bytes or more: a candidate whose first 3 bytes (or
      // first 8 bytes of a cell of 8 or more) differ cannot be chosen, and is dropped without a
      // call (the best under 3 bytes it might set is never written and bounds no later check).
      if (left < 3 || !prefix_agrees(p, q, cell)) return;
      const std::size_t agree = agreeing(p, d * cell, left) / cell * cell;
      if (agree > best) best = agree, best_dist = d;
    };
    consider(dist);
    if (last[h]) consider(i + 1 - last[h]);
    if (first[h]) {
      if (i + 1 - first[h] > max_dist)
        first[h] = static_cast<std::uint32_t>(i + 1);  // out of the window
      else
        consider(i + 1 - first[h]);
    } else {
      first[h] = static_cast<std::uint32_t>(i + 1);
    }
    last[h] = static_cast<std::uint32_t>(i + 1);
    if (best >= 3) {
      const Code dc = distance_code(static_cast<std::uint32_t>(best_dist * cell));
      std::size_t len = best;
      auto match = [&](std::size_t l) {
        const Code& lc = t.length[l];
        bits.put(lc.bits, lc.len);
        bits.put(dc.bits, dc.len);
      };
      for (; len > 260; len -= 258) match(258);
      if (len > 258) match(len - 3), len = 3;  // 259, 260: no piece under 3
      match(len);
      dist = best_dist;
      i += best / cell;
    } else {
      for (std::size_t k = 0; k < cell; ++k) {
        const Code& lc = t.literal[in[i * cell + k]];
        bits.put(lc.bits, lc.len);
      }
      ++i;
    }
  }
  bits.put(t.literal[256].bits, t.literal[256].len);  // end of block
  unsigned char* end = bits.finish();
  if (!end) return 0;
  const std::uint32_t a = adler32_of(in, n);
  for (int k = 3; k >= 0; --k) *end++ = static_cast<unsigned char>(a >> (8 * k));
  return static_cast<std::size_t>(end - out.data());
}

}  // namespace cisa::detail
