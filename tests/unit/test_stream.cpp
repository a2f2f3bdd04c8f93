// Streamed runs (issue 12, bounds): the lazy sweep gives the points, order and de-duplication of
// the held expansion; chunked, threaded evaluation gives byte-identical columns; the streamed
// HDF5 file and CSV hold the same values as the in-memory writers.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "catch.hpp"

#include "cisa/evaluate.hpp"
#include "cisa/results.hpp"
#include "cisa/same_text.hpp"
#include "cisa/scenario.hpp"
#include "cisa/write_hdf5.hpp"
#include "cisa/write_text.hpp"

using namespace cisa;
namespace fs = std::filesystem;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("cisa_test_stream_" + name);
  std::ofstream(p) << text;
  return p.string();
}

// The de-duplication key of the expansion before streaming (scenario.cpp, issue 12), verbatim.
std::string old_point_key(const Point& p) {
  std::ostringstream o;
  o << p.hardware << '|' << p.geo.q_heads << '|' << p.geo.kv_heads << '|' << p.geo.head_dim << '|'
    << p.geo.hidden << '|' << p.cisa.chunk_tokens << '|' << p.cisa.window_pages << '|'
    << p.cisa.budget_chunks << '|' << p.cisa.qshare_g << '|' << to_string(p.cisa.kv_dtype) << '|'
    << to_string(p.cisa.rep_dtype) << '|' << p.cisa.rep_dim << '|' << to_string(p.cisa.rep_kind)
    << '|' << to_string(p.cisa.score_agg) << '|' << p.cisa.selection_overlap << '|'
    << to_string(p.work.phase) << '|' << p.work.context_tokens << '|' << p.work.batch << '|'
    << p.work.prefill_tokens << '|' << p.work.mtp_tokens << '|' << p.dense_impl << '|' << p.cisa_impl;
  return o.str();
}

// The held expansion before streaming: every tuple built from the base, the first of each key kept.
std::vector<Point> old_expand(const Sweep& s) {
  std::vector<Point> out;
  std::set<std::string> seen;
  std::vector<std::size_t> idx(s.axes.size(), 0);
  const std::size_t total = s.tuples();
  for (std::size_t n = 0; n < total; ++n) {
    Point p = s.base;
    for (std::size_t a = 0; a < s.axes.size(); ++a)
      for (const auto& set : s.axes[a][idx[a]]) set.apply(p);
    if (p.work.phase == Phase::decode) p.cisa.qshare_g = 1;
    if (p.work.phase == Phase::mtp) p.cisa.qshare_g = p.work.mtp_tokens;
    if (seen.insert(old_point_key(p)).second) out.push_back(p);
    for (std::size_t a = s.axes.size(); a-- > 0;) {
      if (++idx[a] < s.axes[a].size()) break;
      idx[a] = 0;
    }
  }
  return out;
}

const char* kHead = R"(name: stream
model: nemotron3_ultra
tp: 2
hardware: h200_sxm
basis: calibrated
cisa: {chunk: 16, window: 128, budget: 1024, G: 4}
workload: {phase: terminal_prefill, context: 262144, batch: 2, prefill_tokens: 512, mtp_tokens: 2}
)";

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Every column of a and b equal, bit for bit (NaN included).
void require_same(const Table& a, const Table& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.columns().size() == b.columns().size());
  for (std::size_t k = 0; k < a.columns().size(); ++k) {
    const Column &x = a.columns()[k], &y = b.columns()[k];
    INFO(x.name);
    REQUIRE(x.name == y.name);
    REQUIRE(x.data.index() == y.data.index());
    if (const auto* f = std::get_if<std::vector<double>>(&x.data)) {
      const auto& g = std::get<std::vector<double>>(y.data);
      std::size_t bad = 0;
      for (std::size_t r = 0; r < f->size(); ++r) bad += !same_bits((*f)[r], g[r]);
      CHECK(bad == 0);
    } else if (const auto* i = std::get_if<std::vector<std::int64_t>>(&x.data)) {
      CHECK(*i == std::get<std::vector<std::int64_t>>(y.data));
    } else {
      CHECK(std::get<std::vector<std::string>>(x.data) == std::get<std::vector<std::string>>(y.data));
    }
  }
}

// Concatenation of the streamed chunks.
Table streamed(const Scenario& sc, Shard shard, std::size_t chunk_rows, unsigned threads, std::size_t* chunks = nullptr) {
  PointsTableBuilder b;
  std::size_t n = 0, count = 0;
  evaluate_scenario_chunks(
      sc,
      [&](const Table& chunk) {
        ++count;
        CHECK(chunk.rows() <= chunk_rows);
        for (std::size_t k = 0; k < chunk.columns().size(); ++k) {
          auto& dst = const_cast<Column&>(b.table().columns()[k]);
          std::visit(
              [&](auto& o) {
                using V = std::decay_t<decltype(o)>;
                const auto& in = std::get<V>(chunk.columns()[k].data);
                o.insert(o.end(), in.begin(), in.end());
              },
              dst.data);
        }
        n += chunk.rows();
      },
      {}, shard, StreamOptions{chunk_rows, threads});
  if (chunks) *chunks = count;
  return std::move(b.table());
}

}  // namespace

TEST_CASE("the lazy sweep keeps the points, order and duplicates of the held expansion", "[stream]") {
  // Sweeps with duplicates of every kind: decode and mtp G, repeated values, keys overridden by a
  // later axis (also inside zip), overlaps equal to 6 figures, repeated hardware.
  const std::vector<std::string> sweeps = {
      "sweep:\n  phase: [terminal_prefill, decode, mtp]\n  G: [1, 2, 4]\n  budget: [512, 1024]\n",
      "sweep:\n  G: [1, 2, 4]\n  phase: [decode, terminal_prefill, decode]\n  mtp_tokens: [1, 2]\n",
      "sweep:\n  context: [131072, 131072, 262144]\n  budget: [512, 512]\n",
      "sweep:\n  budget: [512, 1024, 2048]\n  zip: {budget: [64, 64, 128], G: [2, 2, 4]}\n",
      "sweep:\n  zip: {phase: [decode, decode, terminal_prefill, mtp], G: [1, 4, 4, 2]}\n  batch: [1, 2]\n",
      "sweep:\n  selection_overlap: [0.1234567, 0.1234568, 0.5]\n  G: [1, 1, 2]\n",
      "sweep:\n  hardware: [h200_sxm, b200, h200_sxm]\n  phase: [decode, terminal_prefill]\n  G: [2, 8]\n",
      "sweep:\n  G: [2, 8]\n  zip: {phase: [decode, mtp], mtp_tokens: [2, 2]}\n",
      "sweep:\n  dense_impl: [best, cudnn, best]\n  cisa_impl: [auto, cisa_kernels]\n  phase: [decode, terminal_prefill]\n",
  };
  for (const std::string& sw : sweeps) {
    INFO(sw);
    const Scenario sc = load_scenario(write_temp("dedup.yaml", std::string(kHead) + sw), {});
    const std::vector<Point> want = old_expand(sc.sweep);
    REQUIRE(sc.points.size() == want.size());
    CHECK(sc.point_count == want.size());
    CHECK(sc.duplicates_collapsed == sc.sweep.tuples() - want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      CHECK(old_point_key(sc.points[i]) == old_point_key(want[i]));
      CHECK(sc.points[i].model == want[i].model);
    }
  }
}

TEST_CASE("the lazy sweep matches the held expansion on random sweeps", "[stream]") {
  // Axes drawn from a few keys with repeated values, so that duplicates of every kind occur.
  const std::vector<std::pair<std::string, std::vector<std::string>>> keys = {
      {"phase", {"terminal_prefill", "decode", "mtp", "full_prefill"}},
      {"G", {"1", "2", "4"}},
      {"budget", {"512", "1024"}},
      {"mtp_tokens", {"1", "2", "4"}},
      {"batch", {"1", "2"}},
      {"selection_overlap", {"0.25", "0.2500001", "0.5"}},
  };
  std::uint64_t state = 12345;
  auto rnd = [&](std::size_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>((state >> 33) % n);
  };
  for (int trial = 0; trial < 40; ++trial) {
    std::string sw = "sweep:\n";
    std::set<std::string> used;
    const std::size_t axes = 1 + rnd(4);
    for (std::size_t a = 0; a < axes; ++a) {
      const auto& [key, values] = keys[rnd(keys.size())];
      if (!used.insert(key).second) continue;
      std::string list;
      const std::size_t n = 1 + rnd(4);
      for (std::size_t v = 0; v < n; ++v) list += (v ? ", " : "") + values[rnd(values.size())];
      if (key == "phase" && list.find("full_prefill") != std::string::npos) list += ", decode";
      sw += "  " + key + ": [" + list + "]\n";
    }
    if (rnd(2)) sw += "  zip: {G: [1, 2, 2], budget: [512, 512, 1024]}\n";
    INFO(sw);
    Scenario sc;
    try {
      sc = load_scenario(write_temp("rand.yaml", std::string(kHead) + sw), {});
    } catch (const std::exception&) {
      continue;  // e.g. G > P: invalid sweeps are refused as before
    }
    const std::vector<Point> want = old_expand(sc.sweep);
    REQUIRE(sc.points.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(old_point_key(sc.points[i]) == old_point_key(want[i]));
  }
}

TEST_CASE("streamed chunks equal the in-memory table, bit for bit, with shards and threads", "[stream]") {
  const std::string sw =
      "sweep:\n  phase: [terminal_prefill, decode]\n  context: [131072, 262144, 524288]\n"
      "  budget: [512, 1024, 2048]\n  G: [1, 2, 4, 8]\n  batch: [1, 4]\n  hardware: [h200_sxm, b200]\n";
  const Scenario held = load_scenario(write_temp("chunks.yaml", std::string(kHead) + sw), {});
  const Scenario lazy = load_scenario(write_temp("chunks.yaml", std::string(kHead) + sw), {}, false);
  CHECK(lazy.points.empty());
  REQUIRE(lazy.point_count == held.points.size());
  REQUIRE(held.points.size() > 100);  // several chunks of 37 rows
  for (const Shard shard : {Shard{0, 1}, Shard{1, 3}}) {
    const Table want = evaluate_scenario(held, {}, shard);
    std::size_t chunks = 0;
    const Table got = streamed(lazy, shard, 37, 3, &chunks);  // many chunks, rows split over threads
    CHECK(chunks >= 2);
    require_same(want, got);
    require_same(want, streamed(lazy, shard, 100000, 1));
    CHECK(shard_rows(lazy.point_count, shard) == want.rows());
    // The held path also takes a lazily loaded scenario.
    require_same(want, evaluate_scenario(lazy, {}, shard));
  }
  // Provenance needs no points: the same attributes as from the held scenario.
  Attributes a = provenance(held, "x"), b = provenance(lazy, "x");
  a.erase("created_utc");
  b.erase("created_utc");
  CHECK(a == b);
}

TEST_CASE("reused chunk tables' text cells follow their values", "[stream]") {
  // Text axes outermost: a (phase, hardware, kv_dtype) run is 72 rows, so runs start inside
  // put_rows' 64-row blocks and move across the two chunk tables that evaluation reuses
  // (results.cpp TextBlocks: a block whose cells hold its value is not written again).
  const std::string sw =
      "sweep:\n  phase: [terminal_prefill, decode, terminal_prefill]\n  hardware: [h200_sxm, b200, "
      "h200_sxm]\n"
      "  kv_dtype: [bf16, fp8, bf16]\n  context: [131072, 262144, 524288]\n  budget: [512, 1024, "
      "2048]\n"
      "  G: [1, 2, 4, 8]\n  batch: [1, 4]\n";
  const Scenario held = load_scenario(write_temp("text.yaml", std::string(kHead) + sw), {});
  const Scenario lazy = load_scenario(write_temp("text.yaml", std::string(kHead) + sw), {}, false);
  const Table want = evaluate_scenario(held);
  for (const std::size_t rows : {64, 100, 200, 777})
    for (const unsigned threads : {1u, 2u}) {
      INFO("chunk rows " << rows << ", threads " << threads);
      require_same(want, streamed(lazy, Shard{0, 1}, rows, threads));
    }
}

TEST_CASE("a streamed HDF5 file and CSV hold the in-memory values", "[stream]") {
  const std::string sw = "sweep:\n  phase: [terminal_prefill, decode]\n  budget: [512, 1024, 2048]\n  G: [1, 2, 4]\n"
                         "  dense_impl: [best, fa3]\n  batch: [1, 2, 3, 4, 5]\n";
  const Scenario sc = load_scenario(write_temp("h5.yaml", std::string(kHead) + sw), {}, false);
  const Table want = evaluate_scenario(sc);
  const fs::path held = fs::temp_directory_path() / "cisa_test_stream_held.h5";
  const fs::path str = fs::temp_directory_path() / "cisa_test_stream_streamed.h5";
  const Attributes attrs = provenance(sc, "test");
  write_hdf5(held, {{"points", &want}}, attrs);
  PointsTableBuilder schema;
  std::ostringstream csv;
  {
    Hdf5TableStream h5(str, "points", schema.table(), sc.point_count, text_column_widths(sc), attrs);
    write_csv_header(csv, schema.table());
    evaluate_scenario_chunks(
        sc,
        [&](const Table& chunk) {
          h5.append(chunk);
          write_csv_rows(csv, chunk, 2);
        },
        {}, {}, StreamOptions{29, 2});
    CHECK(!fs::exists(str));  // nothing at the target before commit
    h5.commit();
  }
  require_same(read_hdf5_group(held, "points"), read_hdf5_group(str, "points"));
  CHECK(read_hdf5_attributes(held) == read_hdf5_attributes(str));
  std::ostringstream whole;
  write_csv(whole, want);
  CHECK(csv.str() == whole.str());
  // Text widths cover every value (exact but for "best", the longest candidate).
  const auto widths = text_column_widths(sc);
  for (const auto& c : want.columns())
    if (c.is_text())
      for (const auto& v : std::get<std::vector<std::string>>(c.data)) CHECK(v.size() <= widths.at(c.name));
  fs::remove(held);
  fs::remove(str);
}

// Columns with one value in every row so far are stored as HDF5 fill values, not written; a later
// chunk with another value writes the column after all. Every case reads back exactly.
TEST_CASE("a streamed HDF5 file stores uniform columns as fill values and reads them back", "[stream]") {
  auto make = [](std::size_t row0, std::size_t n) {
    Table t;
    auto& nan = t.add_f64("nan", "ms", "never measured");
    auto& late = t.add_f64("late", "", "uniform in the first chunk only");
    auto& vary = t.add_f64("vary", "", "different in every row");
    auto& ints = t.add_i64("ints", "", "one integer");
    auto& late_i = t.add_i64("late_i", "", "uniform until the last chunk");
    auto& text = t.add_text("text", "one name");
    auto& late_t = t.add_text("late_t", "a second name from the second chunk");
    for (std::size_t r = row0; r < row0 + n; ++r) {
      nan.push_back(std::nan(""));
      late.push_back(r < 5 ? -0.0 : 0.0);  // bits differ: -0.0 must not read back as +0.0
      vary.push_back(0.5 * static_cast<double>(r));
      ints.push_back(-7);
      late_i.push_back(r < 10 ? 3 : 4);
      text.push_back("inkling@tp8");
      late_t.push_back(r < 5 ? "a" : "bb");
    }
    return t;
  };
  const Table want = make(0, 12);
  const fs::path p = fs::temp_directory_path() / "cisa_test_stream_uniform.h5";
  {
    Hdf5TableStream h5(p, "points", make(0, 0), 12, {{"text", 11}, {"late_t", 2}}, {});
    h5.append(make(0, 5));
    h5.append(make(5, 0));
    h5.append(make(5, 5));
    h5.append(make(10, 2));
    h5.commit();
  }
  const Table got = read_hdf5_group(p, "points");
  require_same(want, got);
  const auto& late = std::get<std::vector<double>>(got.find("late")->data);
  CHECK(std::signbit(late[0]));
  CHECK(!std::signbit(late[11]));
  // No rows: every dataset is made, empty.
  {
    Hdf5TableStream h5(p, "points", make(0, 0), 0, {{"text", 11}, {"late_t", 2}}, {});
    h5.commit();
  }
  CHECK(read_hdf5_group(p, "points").rows() == 0);
  fs::remove(p);
}

TEST_CASE("an unfinished streamed HDF5 write leaves nothing at the target", "[stream]") {
  const Scenario sc = load_scenario(write_temp("abort.yaml", std::string(kHead) + "sweep:\n  batch: [1, 2, 3]\n"), {}, false);
  const fs::path p = fs::temp_directory_path() / "cisa_test_stream_abort.h5";
  fs::remove(p);
  PointsTableBuilder schema;
  {
    Hdf5TableStream h5(p, "points", schema.table(), sc.point_count + 1, text_column_widths(sc), provenance(sc, "t"));
    evaluate_scenario_chunks(sc, [&](const Table& chunk) { h5.append(chunk); }, {}, {}, StreamOptions{2, 1});
    CHECK_THROWS_AS(h5.commit(), std::logic_error);  // a row short
  }
  CHECK(!fs::exists(p));
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
    CHECK(e.path().filename().string().find("cisa_test_stream_abort.h5.tmp-cisa") == std::string::npos);
}

TEST_CASE("CSV cells print as Column::format_cell(row, 10)", "[stream]") {
  Table t;
  auto& f = t.add_f64("x", "", "");
  for (double v : {0.0, -0.0, 1.0, -1.0, 9999999999.0, 10000000000.0, 12345678901.0, -9999999999.0, 0.1, 1e-300, 1e300,
                   123456.789, 2.5e9, 4.0e15, std::nan(""), HUGE_VAL, -HUGE_VAL, 1.0 / 3, 65536.0, 1e10 - 0.5})
    f.push_back(v);
  std::uint64_t state = 7;
  for (int i = 0; i < 20000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    double v;
    std::memcpy(&v, &state, sizeof v);
    if (!std::isfinite(v)) continue;
    f.push_back(v);
    f.push_back(std::round(static_cast<double>(state >> 30) / 7.0));  // integers of up to 11 digits
  }
  // Repeats (the row-to-row cache of write_csv_rows) and an int and a text column.
  for (std::size_t r = 0; r < 5000; ++r) f.push_back(f[r / 3]);
  auto& n = t.add_i64("n", "", "");
  auto& l = t.add_text("label", "");
  for (std::size_t r = 0; r < f.size(); ++r) {
    n.push_back(static_cast<std::int64_t>(r % 7) * (r % 2 ? -1 : 1) * 1234567890123LL);
    l.push_back(r % 5 == 0 ? "a,\"b\"" : r % 5 == 1 ? "inkling_small@tp8" : "x");
  }
  const Column& c = t.columns().front();
  std::string want = "x,n,label\n";
  for (std::size_t r = 0; r < f.size(); ++r) {
    std::string got;
    append_csv_cell(got, c, r);
    INFO(f[r]);
    CHECK(got == c.format_cell(r, 10));
    // The CSV before streaming: format_cell(row, 10), text quoted where it holds , " or newline.
    want += c.format_cell(r, 10) + "," + t.columns()[1].format_cell(r, 10) + "," +
            (r % 5 == 0 ? std::string("\"a,\"\"b\"\"\"") : l[r]) + "\n";
  }
  for (unsigned threads : {1u, 3u}) {
    std::ostringstream os;
    write_csv_header(os, t);
    write_csv_rows(os, t, threads);
    CHECK(os.str() == want);
  }
}

// The row writer keeps a block's cells row by row (text pointers and lengths at [row * columns +
// column]): several columns of each kind, long (> 32 characters) and quoted texts in any column
// and row, repeats and changes, over the 32-row groups and 256-row blocks it formats in.
TEST_CASE("CSV rows of many columns with long and quoted texts equal the cell-by-cell CSV",
          "[stream]") {
  Table t;
  const std::size_t rows = 1000;
  std::vector<std::vector<double>*> fs;
  std::vector<std::vector<std::string>*> ss;
  std::vector<std::vector<std::int64_t>*> is;
  for (int k = 0; k < 3; ++k) {
    fs.push_back(&t.add_f64("f" + std::to_string(k), "", ""));
    ss.push_back(&t.add_text("s" + std::to_string(k), ""));
    is.push_back(&t.add_i64("i" + std::to_string(k), "", ""));
  }
  const std::size_t nc = 9;
  std::uint64_t state = 11;
  auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL; };
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < nc; ++c) {
      const std::uint64_t x = next() >> 33, kind = c % 3, run = (r / (c + 1)) % 4;
      if (kind == 0)
        fs[c / 3]->push_back(run ? static_cast<double>(r / 7) * 0.125
                                 : static_cast<double>(x) * 1.0e-7);
      if (kind == 1)
        ss[c / 3]->push_back(x % 9 == 0   ? std::string(33 + x % 40, 'L')
                             : x % 9 == 1 ? "quote \"" + std::string(30, 'q') + "\", long"
                             : x % 9 == 2 ? "a,b"
                             : run        ? "same"
                                          : "t" + std::to_string(x % 5));
      if (kind == 2) is[c / 3]->push_back(run ? 42 : static_cast<std::int64_t>(x) - 1000000);
    }
  std::string want;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < nc; ++c) {
      if (c) want += ',';
      append_csv_cell(want, t.columns()[c], r);
    }
    want += '\n';
  }
  for (unsigned threads : {1u, 2u, 3u}) {
    std::ostringstream os;
    CsvRowWriter w(threads);
    w.write(os, t);
    w.write(os, t);  // a second chunk: scratch and the row-to-row state kept
    CHECK(os.str() == want + want);
  }
}

TEST_CASE("a sweep of more than 1e9 points is refused before any work, with the reason", "[stream]") {
  std::string sw = "sweep:\n";
  for (const char* key : {"batch", "budget", "window", "rep_dim", "hidden", "head_dim"}) {
    sw += std::string("  ") + key + ": [";
    for (int v = 1; v <= 32; ++v) sw += (v > 1 ? ", " : "") + std::to_string(v * 8);
    sw += "]\n";
  }
  try {
    load_scenario(write_temp("huge.yaml", std::string(kHead) + sw), {}, false);  // 32^6 = 1.07e9
    FAIL("not refused");
  } catch (const std::exception& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK(m.find("more than 1e9 points") != std::string::npos);
    CHECK(m.find("--set sweep.") != std::string::npos);
  }
}

TEST_CASE("same_text agrees with string equality at every length", "[stream]") {
  // Session 22: strings of 16-32 characters (a model preset with its TP, a phase name) are
  // compared as four words, the first and last 16 bytes; shorter ones as two masked words.
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string a(n, 'x');
    for (std::size_t k = 0; k < n; ++k) a[k] = static_cast<char>('a' + (k * 7) % 26);
    const std::string same = a;  // its own buffer
    std::string roomy = a;
    roomy.reserve(64);  // a heap buffer at any length
    CHECK(same_text(a, same));
    CHECK(same_text(roomy, a));
    for (std::size_t k = 0; k < n; ++k) {
      std::string b = a;
      b[k] = static_cast<char>(b[k] ^ 0x20);
      INFO(n << " characters, differing at " << k);
      CHECK_FALSE(same_text(a, b));
      CHECK_FALSE(same_text(roomy, b));
    }
    CHECK_FALSE(same_text(a, a + "q"));
    if (n > 0) CHECK_FALSE(same_text(a, a.substr(0, n - 1)));
  }
}
