// Streamed HDF5 files (issue 12, session 12): columns whose first chunk compresses well are
// chunked and deflated (write_hdf5.cpp's chunk encoder: libdeflate; HDF5's deflate filter reads
// them), the rest stay contiguous; every value reads back bit for bit (NaN, -0.0, texts), with
// chunks aligned or not to the first one; CISA_H5_DEFLATE=0 lays the file out as before. The
// encoder's streams are checked against zlib's inflate on data of every kind. Held tables
// (write_hdf5: held runs, merge; session 13) go through the same column writer: deflated and
// fill-value columns from 4,096 rows, bit for bit; CISA_H5_DEFLATE=0 keeps them contiguous.
#include <hdf5.h>
#include <stdlib.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"

#include "cisa/cell_deflate.hpp"
#include "cisa/write_hdf5.hpp"

namespace cisa::detail {
bool deflate_chunk(const unsigned char* in, std::size_t n, std::vector<unsigned char>& out);
}  // namespace cisa::detail

using namespace cisa;
namespace fs = std::filesystem;

namespace {

// Built without libdeflate, no column is deflated: the tests below that expect it say so and stop.
bool encoder_available() {
  std::vector<unsigned char> zeros(4096, 0), out;
  return cisa::detail::deflate_chunk(zeros.data(), zeros.size(), out);
}

Table make(std::size_t row0, std::size_t n) {
  Table t;
  auto& cycle = t.add_f64("cycle", "ms", "a few values, cycling");
  auto& smooth = t.add_f64("smooth", "bytes", "grows slowly");
  auto& noise = t.add_f64("noise", "", "random bits");
  auto& odd = t.add_f64("odd", "", "NaN and signed zeros among repeats");
  auto& idx = t.add_i64("idx", "", "row index");
  auto& name = t.add_text("name", "two names");
  for (std::size_t r = row0; r < row0 + n; ++r) {
    cycle.push_back(0.25 * static_cast<double>(r % 7));
    smooth.push_back(1e9 + 4096.0 * static_cast<double>(r / 3));
    std::uint64_t bits = (r + 1) * 0x9E3779B97F4A7C15ULL;  // splitmix64 of the row: the same whatever the chunks
    bits = (bits ^ (bits >> 30)) * 0xBF58476D1CE4E5B9ULL;
    bits = (bits ^ (bits >> 27)) * 0x94D049BB133111EBULL;
    bits ^= bits >> 31;
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    noise.push_back(std::isnan(v) ? 1.0 : v);
    odd.push_back(r % 5 == 0 ? std::nan("") : (r % 5 == 1 ? -0.0 : 0.0));
    idx.push_back(static_cast<std::int64_t>(r));
    name.push_back(r % 11 < 6 ? "fa3" : "cudnn_sdpa");
  }
  return t;
}

bool same_bits(const Table& a, const Table& b) {
  if (a.columns().size() != b.columns().size()) return false;
  for (std::size_t k = 0; k < a.columns().size(); ++k) {
    const Column &x = a.columns()[k], &y = b.columns()[k];
    if (x.name != y.name || x.unit != y.unit || x.description != y.description || x.data.index() != y.data.index())
      return false;
    if (const auto* f = std::get_if<std::vector<double>>(&x.data)) {
      const auto& g = std::get<std::vector<double>>(y.data);
      if (f->size() != g.size() || (!f->empty() && std::memcmp(f->data(), g.data(), f->size() * sizeof(double)) != 0))
        return false;
    } else if (x.data != y.data) {
      return false;
    }
  }
  return true;
}

int filters_of(const fs::path& p, const std::string& column) {
  const hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, ("points/" + column).c_str(), H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(d);
  const int n = H5Pget_layout(dcpl) == H5D_CHUNKED ? H5Pget_nfilters(dcpl) : 0;
  H5Pclose(dcpl);
  H5Dclose(d);
  H5Fclose(f);
  return n;
}

void write(const fs::path& p, std::size_t rows, const std::vector<std::size_t>& chunks,
           unsigned threads = 1) {
  Hdf5TableStream h5(p, "points", make(0, 0), rows, {{"name", 10}}, {{"k", "v"}});
  h5.set_threads(threads);
  std::size_t at = 0;
  for (std::size_t n : chunks) {
    h5.append(make(at, n));
    at += n;
  }
  h5.commit();
}

}  // namespace

TEST_CASE("the chunk encoder's streams inflate (zlib) to their input", "[hdf5]") {
  if (!encoder_available()) {
    WARN("built without libdeflate: no chunk encoder to check");
    return;
  }
  std::mt19937_64 rng(17);
  std::size_t packed = 0, runs = 0;
  for (int t = 0; t < 1500; ++t) {
    const std::size_t n = t < 40 ? static_cast<std::size_t>(t) : 1 + rng() % 150000;
    std::vector<unsigned char> in(n);
    const int kind = t % 6;
    const std::size_t period = 1 + rng() % (kind == 3 ? 40000 : 300);
    for (std::size_t i = 0; i < n; ++i) {
      if (kind == 0) in[i] = static_cast<unsigned char>(rng());  // no repeats: not packed
      else if (kind == 1 || kind == 3) in[i] = i < period ? static_cast<unsigned char>(rng() % (kind == 1 ? 256 : 4)) : in[i - period];
      else if (kind == 2) in[i] = static_cast<unsigned char>((i / period) & 3);  // runs
      else if (kind == 4) in[i] = rng() % 10 == 0 ? static_cast<unsigned char>(rng()) : (i ? in[i - 1] : 0);
      else in[i] = 0;
    }
    std::vector<unsigned char> out;
    if (!cisa::detail::deflate_chunk(in.data(), n, out)) continue;
    ++runs;
    packed += out.size() < n;
    std::vector<unsigned char> back(n + 1);
    uLongf len = static_cast<uLongf>(back.size());
    const int rc = uncompress(back.data(), &len, out.data(), static_cast<uLong>(out.size()));
    INFO("case " << t << ", kind " << kind << ", " << n << " bytes, period " << period);
    REQUIRE(rc == Z_OK);
    REQUIRE(len == n);
    REQUIRE(std::memcmp(back.data(), in.data(), n) == 0);
  }
  CHECK(runs > 1000);
  CHECK(packed == runs);  // it says so when its stream would not be smaller
}

TEST_CASE("the cell encoder's streams inflate (zlib) to their input", "[hdf5]") {
  // Session 16: write_hdf5.cpp encodes deflated chunks with detail::cell_deflate (whole-cell
  // matches, fixed Huffman codes) and falls back to libdeflate when it packs to over a quarter
  // (write_hdf5.cpp kDeflateBelow).
  // Columns of 8-byte numbers and of text cells (1 to 40 bytes): periodic (periods up to past
  // deflate's 32 KiB window), runs, constant, periodic with changes, random; chunk sizes from 1
  // cell to 150,000 bytes.
  std::mt19937_64 rng(23);
  std::size_t runs = 0, packed = 0, small = 0;
  for (int t = 0; t < 1200; ++t) {
    const std::size_t cell = t % 3 == 0 ? 1 + rng() % 40 : 8;
    const std::size_t cells =
        t < 30 ? static_cast<std::size_t>(t) + 1 : 1 + rng() % (150000 / cell);
    const std::size_t n = cells * cell;
    const int kind = t % 5;
    const std::size_t period = 1 + rng() % (rng() % 4 == 0 ? 6000 : 200);
    std::vector<unsigned char> in(n);
    for (std::size_t i = 0; i < cells; ++i)
      for (std::size_t k = 0; k < cell; ++k) {
        unsigned char& b = in[i * cell + k];
        if (kind == 0)
          b = i < period ? static_cast<unsigned char>(rng())
                         : in[(i - period) * cell + k];  // periodic
        else if (kind == 1)
          b = static_cast<unsigned char>((i / period) * 37 + k);  // runs
        else if (kind == 2)
          b = static_cast<unsigned char>(k * 11);  // one value
        else if (kind == 3)
          b = i >= period && rng() % 50 != 0 ? in[(i - period) * cell + k]
                                             : static_cast<unsigned char>(rng());
        else
          b = static_cast<unsigned char>(rng());  // random: not packed
      }
    for (const std::size_t limit : {n / 8, n}) {
      std::vector<unsigned char> out;
      const std::size_t len = cisa::detail::cell_deflate(in.data(), n, cell, out, limit);
      INFO("case " << t << ", kind " << kind << ", cell " << cell << ", " << cells
                   << " cells, period " << period << ", limit " << limit);
      if (len == 0) {  // not shorter than limit: what must pack does
        CHECK_FALSE(
            (limit == n && n >= 64 &&
             (kind == 2 || (kind == 0 && period * cell * 2 <= std::min<std::size_t>(n, 32768)))));
        continue;
      }
      ++runs;
      REQUIRE(len < limit);
      small += len * 8 < n;
      ++packed;
      std::vector<unsigned char> back(n + 1);
      uLongf got = static_cast<uLongf>(back.size());
      REQUIRE(uncompress(back.data(), &got, out.data(), static_cast<uLong>(len)) == Z_OK);
      REQUIRE(got == n);
      REQUIRE(std::memcmp(back.data(), in.data(), n) == 0);
    }
  }
  CHECK(runs > 1000);
  CHECK(small > 700);
  // A periodic column of numbers (the sweep's inner axes) packs to a sliver of its bytes.
  std::vector<double> col(16384);
  for (std::size_t i = 0; i < col.size(); ++i) col[i] = 1.0 / static_cast<double>(1 + i % 100);
  std::vector<unsigned char> out;
  const std::size_t len = cisa::detail::cell_deflate(
      reinterpret_cast<const unsigned char*>(col.data()), col.size() * 8, 8, out, col.size());
  CHECK(len > 0);
  CHECK(len < 3000);
}

TEST_CASE("compressible streamed columns are deflated and read back bit for bit", "[stream][hdf5]") {
  const fs::path plain = fs::temp_directory_path() / "cisa_test_deflate_plain.h5";
  const fs::path packed = fs::temp_directory_path() / "cisa_test_deflate_packed.h5";
  const std::size_t rows = 5000;
  const Table want = make(0, rows);
  ::setenv("CISA_H5_DEFLATE", "0", 1);
  write(plain, rows, {1000, 1000, 1000, 1000, 1000});
  CHECK(same_bits(want, read_hdf5_group(plain, "points")));
  for (const char* c : {"cycle", "smooth", "noise", "odd", "idx", "name"}) CHECK(filters_of(plain, c) == 0);
  ::unsetenv("CISA_H5_DEFLATE");  // the default
  if (!encoder_available()) {
    WARN("built without libdeflate: streamed columns are not deflated");
    return;
  }
  // Chunks of the first one's size (the last one short), then appends not aligned to it.
  for (const auto& chunks : std::vector<std::vector<std::size_t>>{
           {1000, 1000, 1000, 1000, 1000}, {1024, 1024, 1024, 1024, 904}, {700, 1000, 13, 2287, 1000}, {700, 4300},
           {100, 4900}, {5000}}) {
    write(packed, rows, chunks);
    CHECK(same_bits(want, read_hdf5_group(packed, "points")));
    CHECK(read_hdf5_attributes(packed) == read_hdf5_attributes(plain));
    for (const char* c : {"cycle", "name", "odd"}) CHECK(filters_of(packed, c) == 1);  // deflate
    CHECK(filters_of(packed, "noise") == 0);  // idx and smooth change in every row or three: either
    CHECK(fs::file_size(packed) < fs::file_size(plain) * 2 / 3);
  }
  // Fewer rows than the sample needs: contiguous, as before.
  write(packed, 40, {40});
  CHECK(same_bits(make(0, 40), read_hdf5_group(packed, "points")));
  CHECK(filters_of(packed, "cycle") == 0);
  fs::remove(plain);
  fs::remove(packed);
}

// A column's chunks as stored (H5Dread_chunk: the encoder's bytes and filter masks, in order);
// a contiguous column's storage size. (Whole files differ in their objects' modification times.)
std::string stored_chunks(const fs::path& p, const std::string& column) {
  const hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, ("points/" + column).c_str(), H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(d);
  std::string out = std::to_string(H5Dget_storage_size(d)) + ":";
  if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
    const hid_t space = H5Dget_space(d);
    hsize_t n = 0;
    H5Dget_num_chunks(d, space, &n);
    for (hsize_t i = 0; i < n; ++i) {
      hsize_t offset = 0, size = 0;
      unsigned mask = 0;
      haddr_t addr = 0;
      H5Dget_chunk_info(d, space, i, &offset, &mask, &addr, &size);
      std::string bytes(size, '\0');
      uint32_t read_mask = 0;
      H5Dread_chunk(d, H5P_DEFAULT, &offset, &read_mask, bytes.data());
      out += std::to_string(offset) + "/" + std::to_string(mask) + "/" + bytes;
    }
    H5Sclose(space);
  }
  H5Pclose(dcpl);
  H5Dclose(d);
  H5Fclose(f);
  return out;
}

TEST_CASE("streamed chunks encoded on several threads are stored as on one", "[stream][hdf5]") {
  // Session 15: a chunk's deflated columns are encoded in parallel, their writes stay in order.
  const fs::path one = fs::temp_directory_path() / "cisa_test_deflate_1thread.h5";
  const fs::path many = fs::temp_directory_path() / "cisa_test_deflate_nthreads.h5";
  for (const auto& chunks : std::vector<std::vector<std::size_t>>{{1000, 1000, 1000, 1000, 1000},
                                                                  {1024, 1024, 1024, 1024, 904},
                                                                  {700, 1000, 13, 2287, 1000},
                                                                  {5000}}) {
    write(one, 5000, chunks, 1);
    CHECK(stored_chunks(one, "cycle").size() > 100);  // chunks read, not only a size
    for (unsigned threads : {2u, 3u, 8u}) {
      write(many, 5000, chunks, threads);
      CHECK(same_bits(make(0, 5000), read_hdf5_group(many, "points")));
      CHECK(fs::file_size(many) == fs::file_size(one));
      for (const char* c : {"cycle", "smooth", "noise", "odd", "idx", "name"})
        CHECK(stored_chunks(many, c) == stored_chunks(one, c));
    }
  }
  fs::remove(one);
  fs::remove(many);
}

namespace {

// make()'s columns and what held tables add: a uniform NaN column, a uniform text, UTF-8 texts of
// every length up to 9 bytes (the widest sets the column's width), an empty string among them.
Table make_held(std::size_t row0, std::size_t n) {
  Table t = make(row0, n);
  auto& nan = t.add_f64("unmeasured", "ms", "NaN in every row");
  auto& same = t.add_text("hardware", "one value");
  auto& utf = t.add_text("label", "texts of every length");
  const std::string pieces[] = {"", "a", "\xc2\xb5s", "G=16", "\xe2\x89\xa4 1M", "fa3_split"};
  for (std::size_t r = row0; r < row0 + n; ++r) {
    nan.push_back(std::nan(""));
    same.push_back("h200_sxm");
    utf.push_back(pieces[(r * 7 / 3) % 6]);
  }
  return t;
}

bool contiguous(const fs::path& p, const std::string& column) {
  const hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, ("points/" + column).c_str(), H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(d);
  const bool c = H5Pget_layout(dcpl) == H5D_CONTIGUOUS;
  H5Pclose(dcpl);
  H5Dclose(d);
  H5Fclose(f);
  return c;
}

hsize_t storage_of(const fs::path& p, const std::string& column) {
  const hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, ("points/" + column).c_str(), H5P_DEFAULT);
  const hsize_t n = H5Dget_storage_size(d);
  H5Dclose(d);
  H5Fclose(f);
  return n;
}

Table concatenated(const Table& a, const Table& b) {
  Table t = a;
  for (const auto& c : t.columns())
    std::visit(
        [&](auto& dv) {
          using V = std::decay_t<decltype(dv)>;
          const auto& sv = std::get<V>(b.find(c.name)->data);
          auto& mut = const_cast<V&>(dv);
          mut.insert(mut.end(), sv.begin(), sv.end());
        },
        c.data);
  return t;
}

const char* const kHeldColumns[] = {"cycle", "smooth", "noise", "odd", "idx", "name", "unmeasured", "hardware", "label"};

}  // namespace

TEST_CASE("held tables (write_hdf5, merge) are deflated like streamed ones and read back bit for bit", "[hdf5]") {
  const fs::path plain = fs::temp_directory_path() / "cisa_test_held_plain.h5";
  const fs::path packed = fs::temp_directory_path() / "cisa_test_held_packed.h5";
  const Attributes attrs = {{"tool_version", "test"}, {"scenario_yaml", "a: 1\n"}};
  // 40,000 rows: two whole chunks of 16,384 and a short one; 5,000: one chunk of all rows;
  // 4,095: too short, contiguous; 0 rows.
  for (const std::size_t rows : {std::size_t{40000}, std::size_t{5000}, std::size_t{4095}, std::size_t{0}}) {
    INFO(rows << " rows");
    const Table want = make_held(0, rows);
    ::setenv("CISA_H5_DEFLATE", "0", 1);
    write_hdf5(plain, {{"points", &want}}, attrs);
    ::unsetenv("CISA_H5_DEFLATE");
    CHECK(same_bits(want, read_hdf5_group(plain, "points")));
    for (const char* c : kHeldColumns) CHECK(contiguous(plain, c));  // the old layout
    if (rows) CHECK(storage_of(plain, "unmeasured") == rows * 8);
    write_hdf5(packed, {{"points", &want}}, attrs);
    CHECK(same_bits(want, read_hdf5_group(packed, "points")));
    CHECK(read_hdf5_attributes(packed) == read_hdf5_attributes(plain));
    if (!encoder_available()) {
      WARN("built without libdeflate: held columns are not deflated");
      continue;
    }
    if (rows < 4096) {
      for (const char* c : kHeldColumns) CHECK(contiguous(packed, c));
      if (rows) CHECK(fs::file_size(packed) == fs::file_size(plain));
      continue;
    }
    for (const char* c : {"cycle", "name", "odd", "label"}) CHECK(filters_of(packed, c) == 1);  // deflate
    CHECK(filters_of(packed, "noise") == 0);
    CHECK(contiguous(packed, "noise"));
    for (const char* c : {"unmeasured", "hardware"}) CHECK(storage_of(packed, c) == 0);  // the fill value
    CHECK(fs::file_size(packed) < fs::file_size(plain) * 2 / 3);
  }
  // What merge does: shards written streamed, read, joined, written held.
  const fs::path s0 = fs::temp_directory_path() / "cisa_test_held_s0.h5";
  const fs::path s1 = fs::temp_directory_path() / "cisa_test_held_s1.h5";
  write(s0, 18000, {16384, 1616});
  {
    Hdf5TableStream h5(s1, "points", make(0, 0), 22000, {{"name", 10}}, attrs);
    h5.append(make(18000, 5000));
    h5.append(make(23000, 17000));
    h5.commit();
  }
  const Table merged = concatenated(read_hdf5_group(s0, "points"), read_hdf5_group(s1, "points"));
  write_hdf5(packed, {{"points", &merged}}, attrs);
  CHECK(same_bits(make(0, 40000), read_hdf5_group(packed, "points")));
  if (encoder_available()) {
    for (const char* c : {"cycle", "name", "odd"}) CHECK(filters_of(packed, c) == 1);
    CHECK(filters_of(packed, "noise") == 0);
  }
  for (const auto& p : {plain, packed, s0, s1}) fs::remove(p);
}

TEST_CASE("shuffle8 is HDF5's shuffle of 8-byte elements", "[hdf5]") {
  // Session 22: columns of numbers that pack only as bytes are stored after the shuffle filter,
  // which write_hdf5.cpp applies itself (detail::shuffle8) before encoding a whole chunk.
  std::mt19937_64 rng(29);
  for (const std::size_t count :
       {0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4096, 16383, 16384}) {
    std::vector<unsigned char> in(count * 8), out(count * 8, 0xAB);
    for (auto& b : in) b = static_cast<unsigned char>(rng());
    cisa::detail::shuffle8(in.data(), count, out.data());
    bool same = true;
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t b = 0; b < 8; ++b) same = same && out[b * count + i] == in[i * 8 + b];
    INFO(count << " elements");
    CHECK(same);
  }
}

namespace {

// Columns for the session-22 layouts: an index and byte counts (numbers that pack as bytes once
// shuffled, not by whole cells), and columns uniform in the first chunk only (an outer axis, a
// text label, one that turns to noise), and one uniform throughout.
Table make_late(std::size_t row0, std::size_t n) {
  Table t;
  auto& index = t.add_i64("index", "", "row index");
  auto& bytes = t.add_f64("bytes", "bytes", "a multiple of 4096 that grows with the row");
  auto& outer = t.add_i64("outer", "tokens", "one value for 1,000 rows, then runs of 1,000");
  auto& label = t.add_text("label", "one text, then two alternating in runs of 7");
  auto& noise = t.add_f64("late_noise", "", "one value, then random bits");
  auto& never = t.add_f64("never", "", "one value in every row");
  for (std::size_t r = row0; r < row0 + n; ++r) {
    index.push_back(static_cast<std::int64_t>(r));
    bytes.push_back(4096.0 * static_cast<double>(3 * r + 1));
    outer.push_back(r < 1000 ? 131072 : static_cast<std::int64_t>(131072 * (1 + r / 1000)));
    label.push_back(r < 1000 ? "first" : ((r / 7) % 2 ? "terminal_prefill" : "decode"));
    std::uint64_t bits = (r + 7) * 0x9E3779B97F4A7C15ULL;
    bits = (bits ^ (bits >> 30)) * 0xBF58476D1CE4E5B9ULL;
    bits ^= bits >> 31;
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    noise.push_back(r < 1000 ? 1.5 : (std::isnan(v) ? 2.0 : v));
    never.push_back(-0.0);
  }
  return t;
}

void write_late(const fs::path& p, std::size_t rows, const std::vector<std::size_t>& chunks,
                unsigned threads) {
  Hdf5TableStream h5(p, "points", make_late(0, 0), rows, {{"label", 16}}, {{"k", "v"}});
  h5.set_threads(threads);
  std::size_t at = 0;
  for (std::size_t n : chunks) {
    h5.append(make_late(at, n));
    at += n;
  }
  h5.commit();
}

// The column's filters in order (H5Z_FILTER_*), empty for a contiguous one; whether it has a fill
// value of its own.
std::vector<int> filter_ids(const fs::path& p, const std::string& column,
                            bool* user_fill = nullptr) {
  const hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, ("points/" + column).c_str(), H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(d);
  std::vector<int> ids;
  if (H5Pget_layout(dcpl) == H5D_CHUNKED)
    for (int k = 0; k < H5Pget_nfilters(dcpl); ++k) {
      unsigned flags = 0;
      std::size_t nelmts = 0;
      unsigned config = 0;
      ids.push_back(static_cast<int>(H5Pget_filter2(dcpl, static_cast<unsigned>(k), &flags, &nelmts,
                                                    nullptr, 0, nullptr, &config)));
    }
  if (user_fill) {
    H5D_fill_value_t fill = H5D_FILL_VALUE_ERROR;
    *user_fill = H5Pfill_value_defined(dcpl, &fill) >= 0 && fill == H5D_FILL_VALUE_USER_DEFINED;
  }
  H5Pclose(dcpl);
  H5Dclose(d);
  H5Fclose(f);
  return ids;
}

}  // namespace

TEST_CASE("byte-packed numbers are shuffled, late-changing columns chunked with their fill value",
          "[stream][hdf5]") {
  // Session 22 (issue 12): numbers that libdeflate packs but whole cells do not (an index, byte
  // counts) are stored with the shuffle filter before deflate and encoded as bytes; a column
  // uniform in the first streamed chunk only is chunked and deflated with that value as its fill
  // value (its chunks packed by whole cells, or stored as they are: the filter mask says so);
  // every value reads back bit for bit, on one thread or several, chunks aligned or not.
  if (!encoder_available()) {
    WARN("built without libdeflate: streamed columns are not deflated");
    return;
  }
  const fs::path one = fs::temp_directory_path() / "cisa_test_late_1.h5";
  const fs::path many = fs::temp_directory_path() / "cisa_test_late_3.h5";
  const fs::path plain = fs::temp_directory_path() / "cisa_test_late_plain.h5";
  const std::size_t rows = 5000;
  const Table want = make_late(0, rows);
  ::setenv("CISA_H5_DEFLATE", "0", 1);
  write_late(plain, rows, {1000, 1000, 1000, 1000, 1000}, 1);
  ::unsetenv("CISA_H5_DEFLATE");
  CHECK(same_bits(want, read_hdf5_group(plain, "points")));
  for (const char* c : {"index", "bytes", "outer", "label", "late_noise", "never"})
    CHECK(filter_ids(plain, c).empty());
  const std::vector<int> shuffled = {H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE};
  const std::vector<int> deflated = {H5Z_FILTER_DEFLATE};
  for (const auto& chunks : std::vector<std::vector<std::size_t>>{{1000, 1000, 1000, 1000, 1000},
                                                                  {1000, 1000, 1000, 1000, 999, 1},
                                                                  {1000, 700, 13, 2287, 1000}}) {
    write_late(one, rows, chunks, 1);
    write_late(many, rows, chunks, 3);
    const Table got = read_hdf5_group(one, "points");
    CHECK(same_bits(want, got));
    CHECK(same_bits(want, read_hdf5_group(many, "points")));
    CHECK(filter_ids(one, "index") == shuffled);
    CHECK(filter_ids(one, "bytes") == shuffled);
    for (const char* c : {"outer", "label", "late_noise", "never"}) {
      bool fill = false;
      INFO(c);
      CHECK(filter_ids(one, c, &fill) == deflated);
      CHECK(fill);
    }
    // One value in every row: no chunk written, read as the fill value (merge reads one value).
    Hdf5GroupReader r(one, "points");
    for (std::size_t k = 0; k < got.columns().size(); ++k)
      CHECK(r.fill_only(k) == (got.columns()[k].name == "never"));
    for (const char* c : {"index", "bytes", "outer", "label", "late_noise", "never"}) {
      INFO(c);
      CHECK(stored_chunks(one, c) == stored_chunks(many, c));
    }
    if (chunks[1] == 1000 && chunks[2] == 1000) {  // whole chunks: written by write_slab's encoder
      // The first chunk holds the fill value: not stored. The noise does not pack: stored as it
      // is (filter mask 1); the outer axis packs to a sliver.
      const std::string noise = stored_chunks(one, "late_noise");
      CHECK(noise.find("1000/1/") != std::string::npos);
      CHECK(noise.substr(noise.find(':') + 1, 2) != "0/");  // no chunk at row 0
      const std::string outer = stored_chunks(one, "outer");
      CHECK(std::stoul(outer.substr(0, outer.find(':'))) < 4 * 1000 * 8 / 8);
    }
    CHECK(fs::file_size(one) < fs::file_size(plain));
  }
  fs::remove(one);
  fs::remove(many);
  fs::remove(plain);
}
