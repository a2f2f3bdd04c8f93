// cisa-sim merge (cisa/merge.hpp; session 14): shards sorted by point_index (as --shard i/N writes
// them, interleaved) are merged a block of rows at a time (Hdf5GroupReader -> Hdf5ColumnStream)
// into the file the in-memory merge writes: the same values bit for bit and the same layout
// (contiguous / chunked + deflated / fill value, storage bytes) per column. Unsorted shards fall
// back to the in-memory merge; duplicates and mismatched columns are refused with no file left.
#include <hdf5.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "catch.hpp"

#include "cisa/errors.hpp"
#include "cisa/merge.hpp"
#include "cisa/write_hdf5.hpp"

using namespace cisa;
namespace fs = std::filesystem;

namespace {

// `n` rows of a sweep-like table, in point_index order: inputs that cycle, an "outer axis" that
// is one value for the first 40,000 rows (more than two chunks) then another, NaN / -0.0, random
// bits, one-value columns (NaN, text), texts of several lengths (UTF-8).
Table sweep(std::size_t n) {
  Table t;
  auto& idx = t.add_i64("point_index", "", "row");
  auto& cycle = t.add_f64("cycle", "ms", "a few values");
  auto& outer = t.add_f64("outer", "", "one value, then another");
  auto& odd = t.add_f64("odd", "", "NaN and signed zeros");
  auto& noise = t.add_f64("noise", "", "random bits");
  auto& nan = t.add_f64("unmeasured", "ms", "NaN in every row");
  auto& late = t.add_i64("late", "", "0 but in the last row");
  auto& same = t.add_text("hardware", "one value");
  auto& label = t.add_text("label", "texts of several lengths");
  const std::string pieces[] = {"", "a", "\xc2\xb5s", "G=16", "\xe2\x89\xa4 1M", "fa3_split"};
  for (std::size_t r = 0; r < n; ++r) {
    idx.push_back(static_cast<std::int64_t>(r));
    cycle.push_back(0.25 * static_cast<double>(r % 7));
    outer.push_back(r < 40000 ? 1.5 : 2.5);
    odd.push_back(r % 5 == 0 ? std::nan("") : (r % 5 == 1 ? -0.0 : 0.0));
    std::uint64_t bits = (r + 1) * 0x9E3779B97F4A7C15ULL;
    bits = (bits ^ (bits >> 30)) * 0xBF58476D1CE4E5B9ULL;
    bits ^= bits >> 31;
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    noise.push_back(std::isnan(v) ? 1.0 : v);
    nan.push_back(std::nan(""));
    late.push_back(r + 1 == n ? 7 : 0);
    same.push_back("h200_sxm");
    label.push_back(pieces[(r * 7 / 3) % 6]);
  }
  return t;
}

// Rows `rows` of t (in that order).
Table pick(const Table& t, const std::vector<std::size_t>& rows) {
  Table out;
  for (const auto& c : t.columns())
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          V sel;
          for (auto r : rows) sel.push_back(v[r]);
          if constexpr (std::is_same_v<V, std::vector<double>>) out.add_f64(c.name, c.unit, c.description) = sel;
          else if constexpr (std::is_same_v<V, std::vector<std::int64_t>>) out.add_i64(c.name, c.unit, c.description) = sel;
          else out.add_text(c.name, c.description) = sel;
        },
        c.data);
  return out;
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

// A column's layout as stored: layout class, filters, storage bytes, fill value defined, string size.
using Layout = std::tuple<int, int, hsize_t, int, std::size_t>;
Layout layout_of(const fs::path& p, const std::string& column) {
  const hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, ("points/" + column).c_str(), H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(d);
  const hid_t t = H5Dget_type(d);
  H5D_fill_value_t fill = H5D_FILL_VALUE_ERROR;
  H5Pfill_value_defined(dcpl, &fill);
  const int layout = H5Pget_layout(dcpl);
  const Layout l{layout, layout == H5D_CHUNKED ? H5Pget_nfilters(dcpl) : 0, H5Dget_storage_size(d),
                 static_cast<int>(fill), H5Tget_size(t)};
  H5Tclose(t);
  H5Pclose(dcpl);
  H5Dclose(d);
  H5Fclose(f);
  return l;
}

Attributes shard_attrs(const std::string& shard, std::size_t total) {
  return {{"tool_version", "test"}, {"scenario_effective_yaml", "a: 1\n"}, {"basis", "calibrated"},
          {"shard", shard}, {"points_total", std::to_string(total)}};
}

// Writes t's rows r with r % n == i (i = 0..n-1) to one file each, as --shard i/n does; every
// third one streamed in chunks of 5,000 rows, the others held.
std::vector<std::string> shards_of(const Table& t, std::size_t n, const std::string& stem) {
  std::vector<std::string> files;
  const std::size_t rows = t.rows();
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::size_t> mine;
    for (std::size_t r = i; r < rows; r += n) mine.push_back(r);
    const Table s = pick(t, mine);
    const std::string file = (fs::temp_directory_path() / (stem + std::to_string(i) + ".h5")).string();
    const Attributes a = shard_attrs(std::to_string(i) + "/" + std::to_string(n), rows);
    if (i % 3 == 2) {
      Hdf5TableStream h5(file, "points", pick(t, {}), s.rows(), {{"hardware", 12}, {"label", 16}}, a);
      for (std::size_t at = 0; at < s.rows(); at += 5000) {
        std::vector<std::size_t> part;
        for (std::size_t r = at; r < std::min(s.rows(), at + 5000); ++r) part.push_back(r);
        h5.append(pick(s, part));
      }
      h5.commit();
    } else {
      write_hdf5(file, {{"points", &s}}, a);
    }
    files.push_back(file);
  }
  return files;
}

void check_same_file(const fs::path& got, const fs::path& want, const Table& t) {
  CHECK(same_bits(read_hdf5_group(got, "points"), read_hdf5_group(want, "points")));
  for (const auto& c : t.columns()) {
    INFO("column " << c.name);
    CHECK(layout_of(got, c.name) == layout_of(want, c.name));
  }
}

}  // namespace

TEST_CASE("merge streams shards sorted by point_index into the in-memory merge's file", "[merge][hdf5]") {
  const fs::path out = fs::temp_directory_path() / "cisa_test_merge_out.h5";
  const fs::path want = fs::temp_directory_path() / "cisa_test_merge_want.h5";
  // 70,001 rows over 7 shards (packed: chunks of 16,384, fill values); 3,000 over 4 (contiguous);
  // 70,001 over 1; 70,001 with deflate off (contiguous, no fill values).
  struct Case {
    std::size_t rows, shards;
    bool deflate;
  };
  for (const Case& c : {Case{70001, 7, true}, Case{3000, 4, true}, Case{70001, 1, true}, Case{70001, 3, false}}) {
    INFO(c.rows << " rows, " << c.shards << " shards, deflate " << c.deflate);
    if (!c.deflate) ::setenv("CISA_H5_DEFLATE", "0", 1);
    const Table t = sweep(c.rows);
    std::vector<std::string> files = shards_of(t, c.shards, "cisa_test_merge_s");
    std::reverse(files.begin(), files.end());  // any order of files
    const MergeResult r = merge_shards(files, out.string(), "test");
    CHECK(r.streamed);
    CHECK(r.rows == c.rows);
    Attributes a = shard_attrs("merged", c.rows);
    for (const auto& f : files) a["merged_from"] += (a["merged_from"].empty() ? "" : "\n") + f;
    a["command_line"] = "test";
    CHECK(read_hdf5_attributes(out) == a);
    write_hdf5(want, {{"points", &t}}, a);  // what the in-memory merge writes
    check_same_file(out, want, t);
    ::unsetenv("CISA_H5_DEFLATE");
    for (const auto& f : files) fs::remove(f);
  }
  fs::remove(out);
  fs::remove(want);
}

TEST_CASE("merge: an unsorted shard falls back to the in-memory merge; duplicates are refused", "[merge][hdf5]") {
  const fs::path out = fs::temp_directory_path() / "cisa_test_merge_out.h5";
  const fs::path want = fs::temp_directory_path() / "cisa_test_merge_want.h5";
  const Table t = sweep(20000);
  std::vector<std::string> files = shards_of(t, 2, "cisa_test_merge_u");
  {  // shard 1 rewritten in descending point_index order
    std::vector<std::size_t> rows;
    for (std::size_t r = 20000 - 1; r < 20000; r -= 2) rows.push_back(r);
    const Table s = pick(t, rows);
    write_hdf5(files[1], {{"points", &s}}, shard_attrs("1/2", 20000));
  }
  const MergeResult res = merge_shards(files, out.string(), "test");
  CHECK_FALSE(res.streamed);
  CHECK(res.rows == 20000);
  write_hdf5(want, {{"points", &t}}, read_hdf5_attributes(out));
  check_same_file(out, want, t);
  fs::remove(out);

  // A point in two shards; a point twice in one shard (sorted): refused, no file left.
  for (const bool within : {false, true}) {
    INFO("duplicate within one shard: " << within);
    std::vector<std::size_t> rows;
    for (std::size_t r = 1; r < 20000; r += 2) rows.push_back(r);
    if (within) rows.insert(rows.begin() + 100, rows[100]);
    else rows.insert(rows.begin() + 100, 200);  // shard 0's row 200
    const Table s = pick(t, rows);
    write_hdf5(files[1], {{"points", &s}}, shard_attrs("1/2", 20000));
    try {
      merge_shards(files, out.string(), "test");
      FAIL("merged");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("appears in two files") != std::string::npos);
    }
    CHECK_FALSE(fs::exists(out));
  }

  // Columns that differ: a missing column, then one of another type.
  for (const bool retype : {false, true}) {
    std::vector<std::size_t> rows;
    for (std::size_t r = 1; r < 20000; r += 2) rows.push_back(r);
    Table p = pick(t, rows), q;
    for (const auto& c : p.columns()) {
      if (c.name == "noise" && !retype) continue;
      if (c.name == "noise") {
        q.add_i64(c.name, c.unit, c.description).assign(rows.size(), 1);
        continue;
      }
      std::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, std::vector<double>>) q.add_f64(c.name, c.unit, c.description) = v;
            else if constexpr (std::is_same_v<V, std::vector<std::int64_t>>) q.add_i64(c.name, c.unit, c.description) = v;
            else q.add_text(c.name, c.description) = v;
          },
          c.data);
    }
    if (!retype) q.add_f64("extra", "", "").assign(rows.size(), 0.0);
    write_hdf5(files[1], {{"points", &q}}, shard_attrs("1/2", 20000));
    try {
      merge_shards(files, out.string(), "test");
      FAIL("merged");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(files[1]) != std::string::npos);
      CHECK(std::string(e.what()).find("/points/noise") != std::string::npos);
    }
    CHECK_FALSE(fs::exists(out));
  }
  for (const auto& f : files) fs::remove(f);
  fs::remove(want);
}

TEST_CASE("Hdf5GroupReader reads any range of rows of a column as read_hdf5_group does", "[merge][hdf5]") {
  const fs::path p = fs::temp_directory_path() / "cisa_test_group_reader.h5";
  const Table t = sweep(40000);
  write_hdf5(p, {{"points", &t}}, {{"k", "v"}});
  const Table all = read_hdf5_group(p, "points");
  Hdf5GroupReader r(p, "points");
  REQUIRE(r.rows() == 40000);
  REQUIRE(r.schema().columns().size() == t.columns().size());
  for (std::size_t k = 0; k < t.columns().size(); ++k) {
    const Column& c = all.columns()[k];
    INFO("column " << c.name);
    CHECK(r.schema().columns()[k].name == c.name);
    CHECK(r.schema().columns()[k].data.index() == c.data.index());
    CHECK(r.fill_only(k) == (c.name == "unmeasured" || c.name == "hardware" || c.name == "outer"));  // outer: 1.5 in 40,000 rows
    for (const auto& [begin, n] : std::vector<std::pair<std::size_t, std::size_t>>{
             {0, 40000}, {0, 1}, {16380, 10}, {16384, 16384}, {39999, 1}, {7, 0}, {12345, 20000}}) {
      Column got;
      r.read(k, begin, n, got);
      std::vector<std::size_t> rows;
      for (std::size_t j = begin; j < begin + n; ++j) rows.push_back(j);
      const Table sel = pick(all, rows);
      got.name = c.name, got.unit = c.unit, got.description = c.description;
      CHECK(got.data.index() == c.data.index());
      const Column& w = sel.columns()[k];
      if (const auto* f = std::get_if<std::vector<double>>(&w.data)) {
        const auto& g = std::get<std::vector<double>>(got.data);
        CHECK((g.size() == f->size() && (f->empty() || std::memcmp(g.data(), f->data(), 8 * f->size()) == 0)));
      } else {
        CHECK(got.data == w.data);
      }
    }
    r.release(k);
  }
  Column past;
  CHECK_THROWS_AS(r.read(0, 39999, 2, past), std::out_of_range);
  fs::remove(p);
}
