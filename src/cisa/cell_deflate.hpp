#pragma once
// A fast deflate (zlib stream, RFC 1950/1951) encoder for table columns whose cells repeat:
// write_hdf5.cpp's deflated HDF5 chunks. Any inflater (HDF5's deflate filter, zlib) reads its
// streams; only the encoder is ours.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cisa::detail {

// Encodes in[0, n), cells of `cell` bytes each (8: a number; a text column's width), as one zlib
// stream of fixed-Huffman blocks into out (grown as needed, never shrunk). Matches are whole cells
// at whole-cell distances: the cell at the last match's distance, or the last / first earlier cell
// of the same value (a hash of its first 8 bytes). A sweep's column repeats a period of cells (the
// inner axes it depends on) or runs of one value, so most chunks are a few literal cells and long
// matches: ~5x cheaper than libdeflate's byte-wise search (level 1), streams ~15 % larger (fixed
// codes). Returns the stream's length, or 0 when it would not be shorter than `limit` bytes (the
// caller then tries a byte-wise encoder).
std::size_t cell_deflate(const unsigned char* in, std::size_t n, std::size_t cell,
                         std::vector<unsigned char>& out, std::size_t limit);

// HDF5's shuffle filter (H5Z_FILTER_SHUFFLE) for 8-byte elements: byte b of element i of
// in[0, 8 * count) to out[b * count + i] (out holds 8 * count bytes). A column of numbers that
// differ in their low bytes only (an index, byte counts as float64) is then runs and repeats of
// bytes that cell_deflate(..., cell = 1, ...) packs.
void shuffle8(const unsigned char* in, std::size_t count, unsigned char* out);

// The stream's trailer: Adler-32 of in[0, n) (RFC 1950).
std::uint32_t adler32_of(const unsigned char* in, std::size_t n);

}  // namespace cisa::detail
