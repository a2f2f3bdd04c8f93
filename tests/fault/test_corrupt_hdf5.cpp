// The HDF5 readers on a corpus made here: foreign layouts (2-D and ragged columns, scalar and
// exotic datatypes, non-string attributes, sub-groups), every truncation and byte flips of a file
// written by write_hdf5. Each read either succeeds or throws InputError naming the file (and the
// dataset when it is one dataset's fault): never another exception, never a crash. The crafted
// files are also left in CISA_CORPUS_DIR for the CLI checks (corrupt_cli.sh).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "catch.hpp"
#include "cisa/errors.hpp"
#include "cisa/write_hdf5.hpp"
#include "h5craft.hpp"

using namespace cisa;
namespace fs = std::filesystem;
using h5craft::Kind;
using h5craft::Spec;

namespace {

fs::path corpus_dir() {
  const fs::path d = CISA_CORPUS_DIR;
  fs::create_directories(d);
  return d;
}

// `pattern` is pieces separated by ".*" (backslash escapes allowed): each piece must occur in
// `text`, in order, the first at the start. (Not std::regex: GCC 12 warns inside it under ASan.)
bool matches(const std::string& text, const std::string& pattern) {
  std::size_t at = 0, from = 0;
  bool first = true;
  while (from <= pattern.size()) {
    const std::size_t star = pattern.find(".*", from);
    std::string piece;
    for (std::size_t k = from; k < (star == std::string::npos ? pattern.size() : star); ++k)
      if (pattern[k] != '\\') piece += pattern[k];
    const std::size_t pos = text.find(piece, at);
    if (pos == std::string::npos || (first && pos != 0)) return false;
    at = pos + piece.size();
    first = false;
    if (star == std::string::npos) break;
    from = star + 2;
  }
  return true;
}

// "ok", "input: <message>" or "OTHER: <message>" (a wrong exit code in the CLI).
std::string outcome(const fs::path& p) {
  try {
    (void)read_hdf5_attributes(p);
    (void)read_hdf5_group(p, "points");
    return "ok";
  } catch (const InputError& e) {
    return std::string("input: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("OTHER: ") + e.what();
  }
}

std::vector<char> bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put(const fs::path& p, const std::vector<char>& b, std::size_t n) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(b.data(), static_cast<std::streamsize>(n));
}

fs::path good_file() {
  Table t;
  auto& x = t.add_f64("x", "ms", "a float column");
  auto& i = t.add_i64("point_index", "", "an int column");
  auto& s = t.add_text("phase", "a text column");
  for (int r = 0; r < 64; ++r) {
    x.push_back(r * 0.25);
    i.push_back(r);
    s.push_back(r % 2 ? "decode" : "terminal_prefill");
  }
  const fs::path p = corpus_dir() / "good.h5";
  write_hdf5(p, {{"points", &t}}, {{"tool_version", "test"}, {"scenario_effective_yaml", "a: 1\n"}, {"basis", "b"}});
  return p;
}

struct Case {
  std::string file;
  std::vector<Spec> columns;
  std::string expect;  // regex on the InputError message; "" = must read fine
  std::vector<std::string> int_attrs = {};
  std::string group = "points";
};

}  // namespace

TEST_CASE("foreign layouts are refused naming the file and the dataset", "[hdf5][corrupt]") {
  const std::vector<Case> cases = {
      {"two_d.h5", {{"point_index", Kind::i64}, {"x", Kind::f64, {4, 3}}}, "two_d.h5: field '/points/x'.*1-D"},
      {"ragged.h5", {{"point_index", Kind::i64, {4}}, {"y", Kind::f64, {5}}}, "ragged.h5: field '/points/y'.*equal lengths"},
      {"scalar.h5", {{"x", Kind::f64, {}}}, "scalar.h5: field '/points/x'.*1-D"},
      {"compound.h5", {{"x", Kind::compound}}, "compound.h5: field '/points/x'.*unsupported datatype"},
      {"enum.h5", {{"x", Kind::enum_}}, "enum.h5: field '/points/x'.*unsupported datatype"},
      {"opaque.h5", {{"x", Kind::opaque}}, "opaque.h5: field '/points/x'.*unsupported datatype"},
      {"bitfield.h5", {{"x", Kind::bitfield}}, "bitfield.h5: field '/points/x'.*unsupported datatype"},
      {"array.h5", {{"x", Kind::array}}, "array.h5: field '/points/x'.*unsupported datatype"},
      {"unit_int.h5", {{"x", Kind::f64, {4}, false, true}}, "unit_int.h5: field '/points/x \\(attribute unit\\)'.*not a string"},
      {"huge_chunked.h5", {{"x", Kind::f64, {hsize_t{1} << 30}, true}}, "huge_chunked.h5: field '/points/x'.*implausible length"},
      {"unwritten.h5", {{"x", Kind::f64, {hsize_t{1} << 21}}}, "unwritten.h5: field '/points/x'.*fewer bytes"},
      {"int_attr.h5", {{"x", Kind::f64}}, "int_attr.h5: field 'attribute points_total'.*not a string", {"points_total"}},
      {"no_points.h5", {{"x", Kind::f64}}, "no_points.h5: field '/points'.*no such group", {}, "other"},
      {"f32_u8_vlen.h5", {{"point_index", Kind::u8}, {"x", Kind::f32}, {"s", Kind::vlen_str}, {"t", Kind::fixed_str}}, ""},
      {"float_index.h5", {{"point_index", Kind::f64}}, ""},  // readable; merge refuses it (corrupt_cli.sh)
  };
  for (const auto& c : cases) {
    INFO(c.file);
    const fs::path p = corpus_dir() / c.file;
    REQUIRE(h5craft::write_file(p.string(), c.group, c.columns, {{"tool_version", "t"}}, c.int_attrs));
    const std::string got = outcome(p);
    if (c.expect.empty()) {
      CHECK(got == "ok");
    } else {
      CHECK(matches(got, "input: .*" + c.expect + ".*"));
    }
  }
  // Readable, but merge refuses a non-numeric points_total (corrupt_cli.sh).
  REQUIRE(h5craft::write_file((corpus_dir() / "points_total_text.h5").string(), "points", {{"point_index", Kind::i64}},
                              {{"points_total", "abc"}}));
  CHECK(outcome(corpus_dir() / "points_total_text.h5") == "ok");
  // A group member that is not a dataset.
  const fs::path sub = corpus_dir() / "subgroup.h5";
  REQUIRE(h5craft::write_file(sub.string(), "points", {{"x", Kind::f64}}));
  {
    hid_t f = H5Fopen(sub.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Gclose(H5Gcreate2(f, "points/inner", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Fclose(f);
  }
  CHECK(matches(outcome(sub), "input: .*field '/points/inner'.*not a dataset.*"));
  // Not HDF5 at all, empty, a folder, a device.
  std::ofstream(corpus_dir() / "text.h5") << "name: not hdf5\n";
  std::ofstream(corpus_dir() / "empty.h5");
  for (const fs::path& p : {corpus_dir() / "text.h5", corpus_dir() / "empty.h5"})
    CHECK(matches(outcome(p), "input: .*not an HDF5 file.*"));
  CHECK(matches(outcome(corpus_dir()), "input: .*not a regular file.*"));
  CHECK(matches(outcome("/dev/zero"), "input: .*not a regular file.*"));
}

TEST_CASE("every truncation of a result file is refused", "[hdf5][corrupt]") {
  const fs::path good = good_file();
  REQUIRE(outcome(good) == "ok");
  const std::vector<char> b = bytes_of(good);
  const fs::path p = corpus_dir() / "truncated.h5";
  std::size_t runs = 0, wrong = 0;
  for (std::size_t n = 0; n < b.size(); n += (n < 4096 ? 3 : 97)) {
    put(p, b, n);
    ++runs;
    const std::string got = outcome(p);
    if (got.rfind("input: ", 0) != 0 || got.find("truncated.h5") == std::string::npos) {
      ++wrong;
      UNSCOPED_INFO("truncated to " << n << " bytes: " << got);
    }
  }
  put(corpus_dir() / "truncated_half.h5", b, b.size() / 2);
  std::cout << "corrupt_hdf5 truncations: runs=" << runs << " crashes=0 wrong_exit=" << wrong << "\n";
  CHECK(wrong == 0);
}

TEST_CASE("byte flips of a result file are detected or harmless", "[hdf5][corrupt]") {
  const fs::path good = good_file();
  const std::vector<char> b = bytes_of(good);
  const fs::path p = corpus_dir() / "flipped.h5";
  std::mt19937 rng(12);
  std::size_t runs = 0, wrong = 0, detected = 0;
  for (std::size_t off = 0; off < b.size(); ++off) {
    for (const int mask : {0x01, 0xff}) {
      if (off >= 4096 && rng() % 8 != 0) continue;  // every byte of the metadata, a sample of the rest
      std::vector<char> f = b;
      f[off] = static_cast<char>(f[off] ^ static_cast<char>(mask));
      put(p, f, f.size());
      ++runs;
      const std::string got = outcome(p);
      if (got.rfind("input: ", 0) == 0) ++detected;
      if (got != "ok" && got.rfind("input: ", 0) != 0) {
        ++wrong;
        UNSCOPED_INFO("flip " << int(mask) << " at " << off << ": " << got);
      }
      if (off == 0 && mask == 0xff) put(corpus_dir() / "flipped_signature.h5", f, f.size());
      if (off == 200 && mask == 0x01) put(corpus_dir() / "flipped_header.h5", f, f.size());
    }
  }
  std::cout << "corrupt_hdf5 byte flips: runs=" << runs << " crashes=0 wrong_exit=" << wrong
            << " (detected " << detected << ", harmless data flips " << runs - detected - wrong << ")\n";
  CHECK(wrong == 0);
}

// Held tables of 4,096 rows and more have deflated (chunked) columns and fill-value columns
// (write_hdf5.cpp, session 13): flips in their chunk index or compressed chunks and truncations
// inside them are refused the same way.
TEST_CASE("byte flips and truncations of a file with deflated columns", "[hdf5][corrupt]") {
  Table t;
  auto& x = t.add_f64("x", "ms", "repeats: deflated");
  auto& u = t.add_f64("u", "ms", "NaN in every row: the fill value");
  auto& i = t.add_i64("point_index", "", "an int column");
  auto& s = t.add_text("phase", "a text column: deflated");
  for (int r = 0; r < 20000; ++r) {
    x.push_back((r % 13) * 0.25);
    u.push_back(std::nan(""));
    i.push_back(r);
    s.push_back(r % 3 ? "decode" : "terminal_prefill");
  }
  const fs::path good = corpus_dir() / "good_deflated.h5";
  write_hdf5(good, {{"points", &t}}, {{"tool_version", "test"}});
  REQUIRE(outcome(good) == "ok");
  const std::vector<char> b = bytes_of(good);
  const fs::path p = corpus_dir() / "flipped_deflated.h5";
  std::mt19937 rng(13);
  std::size_t runs = 0, wrong = 0, detected = 0;
  for (int k = 0; k < 1200; ++k) {
    std::vector<char> f = b;
    const std::size_t off = k < 400 ? rng() % std::min<std::size_t>(4096, b.size()) : rng() % b.size();
    const unsigned mask = k % 2 ? 0xffu : 1u << (rng() % 8);
    f[off] = static_cast<char>(static_cast<unsigned char>(f[off]) ^ mask);
    const std::size_t n = k % 10 == 9 ? rng() % b.size() : f.size();  // every tenth: truncated too
    put(p, f, n);
    ++runs;
    const std::string got = outcome(p);
    if (got.rfind("input: ", 0) == 0) ++detected;
    if (got != "ok" && got.rfind("input: ", 0) != 0) {
      ++wrong;
      UNSCOPED_INFO("flip at " << off << ", " << n << " bytes: " << got);
    }
  }
  std::cout << "corrupt_hdf5 deflated file: runs=" << runs << " crashes=0 wrong_exit=" << wrong << " (detected " << detected
            << ")\n";
  CHECK(wrong == 0);
}
