// printf's "%.10g" of a double, the number format of every CSV cell: exact (the same characters as
// std::to_chars(..., chars_format::general, 10)), several times faster for the values a sweep
// produces. Integer arithmetic only (a 64 x 64-bit product with a table of powers of ten); the
// library decides zeros, subnormals, inf, nan, magnitudes beyond 1e+-40 and values near a
// rounding tie.
#pragma once

namespace cisa {

// Writes v as "%.10g" at p and returns the end (at most 24 characters, but up to 32 bytes at p
// are written: p needs room for 32).
char* format_g10(char* p, double v);

}  // namespace cisa
