// printf's "%.10g" of a double, the number format of every CSV and JSON cell: exact (the same
// characters as std::to_chars(..., chars_format::general, 10)), several times faster for the values a
// sweep produces.
#pragma once

namespace cisa {

// Writes v as "%.10g" at p (at most 24 characters: room for 32 is plenty) and returns the end.
char* format_g10(char* p, double v);

}  // namespace cisa
