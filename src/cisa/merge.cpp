// Joining the shards of `cisa-sim --shard i/N` runs (cisa-sim merge), streamed when the shards are
// sorted by point_index (as --shard writes them): memory bounded for any sweep size.
#include "cisa/merge.hpp"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <memory>
#include <numeric>
#include <queue>
#include <set>

#include "cisa/errors.hpp"
#include "cisa/write_hdf5.hpp"

namespace cisa {

namespace {

// Appends src's rows to dst (same columns, same types, in any order).
void append_rows(Table& dst, const Table& src, const std::string& file) {
  if (dst.columns().size() != src.columns().size())
    throw InputError({file, 0, "/points"}, "has a different set of columns than the first file");
  for (const auto& d : dst.columns()) {
    const Column* s = src.find(d.name);
    if (!s || s->data.index() != d.data.index())
      throw InputError({file, 0, "/points/" + d.name}, "column missing or of another type than in the first file");
    std::visit(
        [&](auto& dv) {
          using V = std::decay_t<decltype(dv)>;
          const auto& sv = std::get<V>(s->data);
          auto& mut = const_cast<V&>(dv);
          mut.insert(mut.end(), sv.begin(), sv.end());
        },
        d.data);
  }
}

// The file attribute points_total ("" or absent: unknown, 0).
std::size_t points_total(const Attributes& a, const std::string& file) {
  const auto it = a.find("points_total");
  if (it == a.end() || it->second.empty()) return 0;
  const std::string& s = it->second;
  if (s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
    throw InputError({file, 0, "attribute points_total"}, "expected a non-negative integer, got '" + s.substr(0, 40) + "'");
  return static_cast<std::size_t>(std::stoull(s));
}

// Reorders every column by point_index.
Table sorted_by_index(const Table& t) {
  const auto& idx = std::get<std::vector<std::int64_t>>(t.find("point_index")->data);
  std::vector<std::size_t> order(idx.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return idx[a] < idx[b]; });
  Table out;
  for (const auto& c : t.columns()) {
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          V sorted;
          sorted.reserve(v.size());
          for (auto k : order) sorted.push_back(v[k]);
          if constexpr (std::is_same_v<V, std::vector<double>>) out.add_f64(c.name, c.unit, c.description) = std::move(sorted);
          else if constexpr (std::is_same_v<V, std::vector<std::int64_t>>) out.add_i64(c.name, c.unit, c.description) = std::move(sorted);
          else out.add_text(c.name, c.description) = std::move(sorted);
        },
        c.data);
  }
  return out;
}

// The shards joined and sorted in memory (the merge before streaming; now only for shards not
// sorted by point_index). Checks as the streamed merge does.
Table merged_in_memory(const std::vector<std::string>& inputs) {
  Table all;
  std::set<std::int64_t> seen;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string& f = inputs[i];
    Table t = read_hdf5_group(f, "points");
    if (i == 0) all = std::move(t);
    else append_rows(all, t, f);
  }
  for (auto v : std::get<std::vector<std::int64_t>>(all.find("point_index")->data))
    if (!seen.insert(v).second) throw InputError({"inputs", 0, "point_index"}, "point " + std::to_string(v) + " appears in two files");
  return sorted_by_index(all);
}

// ---- streamed merge: shards each sorted by point_index (as `--shard i/N` writes them) ----
// Every column is written a block at a time in point_index order, a k-way merge of the shards'
// rows: memory is bounded by the blocks (and one byte or two per row for the merge order), not
// by the sweep. The output is laid out as write_hdf5 lays out the joined, sorted table
// (Hdf5ColumnStream), so it is the same file as the in-memory merge's.

struct Shard {
  std::string file;
  std::unique_ptr<Hdf5GroupReader> r;
  std::vector<std::size_t> col;  // the first file's column k is this file's column col[k]
};

// Rows of one column of one shard, read a block at a time in row order.
struct Cursor {
  Shard* s = nullptr;
  std::size_t k = 0;  // the shard's column
  Column buf;
  std::size_t begin = 0, pos = 0, end = 0;  // buf holds rows [begin, end); next row: pos
  std::size_t block = 16384;
  void refill() {
    const std::size_t n = std::min(block, s->r->rows() - end);
    s->r->read(k, end, n, buf);
    begin = end;
    end += n;
  }
  bool at_end() {
    if (pos == end && end < s->r->rows()) refill();
    return pos == end;
  }
};

// The merge order: for output row j, the shard it comes from (one byte a row for <= 256 shards).
// Empty when a shard is not sorted by point_index (the caller falls back to the in-memory
// merge). A point in two shards (or twice in one) is an InputError, as in the in-memory merge.
template <class Id>
std::vector<Id> merge_order(std::vector<Shard>& shards, std::size_t pi, std::size_t rows, bool& sorted) {
  std::vector<Id> order;
  order.reserve(rows);
  std::vector<Cursor> cur(shards.size());
  using Head = std::pair<std::int64_t, std::size_t>;  // (point_index, shard)
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
  auto value = [&](Cursor& c) { return std::get<std::vector<std::int64_t>>(c.buf.data)[c.pos - c.begin]; };
  for (std::size_t i = 0; i < shards.size(); ++i) {
    cur[i].s = &shards[i];
    cur[i].k = shards[i].col[pi];
    cur[i].block = 65536;
    if (!cur[i].at_end()) heads.emplace(value(cur[i]), i);
  }
  auto twice = [](std::int64_t v) {
    return InputError({"inputs", 0, "point_index"}, "point " + std::to_string(v) + " appears in two files");
  };
  sorted = true;
  bool have_last = false;
  std::int64_t last = 0;
  while (!heads.empty()) {
    const auto [v, i] = heads.top();
    heads.pop();
    if (have_last && v == last) throw twice(v);
    have_last = true;
    last = v;
    order.push_back(static_cast<Id>(i));
    Cursor& c = cur[i];
    ++c.pos;
    if (c.at_end()) continue;
    const std::int64_t next = value(c);
    if (next == v) throw twice(v);
    if (next < v) {
      sorted = false;  // not a --shard file as written: the in-memory merge sorts it
      return {};
    }
    heads.emplace(next, i);
  }
  return order;
}

// Cell j of a column's data as a comparable value.
bool same_cell(const decltype(Column::data)& a, std::size_t i, const decltype(Column::data)& b, std::size_t j) {
  if (const auto* x = std::get_if<std::vector<double>>(&a))
    return std::memcmp(&(*x)[i], &std::get<std::vector<double>>(b)[j], sizeof(double)) == 0;  // bits: NaN counts
  if (const auto* x = std::get_if<std::vector<std::int64_t>>(&a)) return (*x)[i] == std::get<std::vector<std::int64_t>>(b)[j];
  return std::get<std::vector<std::string>>(a)[i] == std::get<std::vector<std::string>>(b)[j];
}

// What write_hdf5 finds in the whole merged column k: whether all rows hold one value (`first`,
// the merged column's first row: only when `want_uniform`) and, for text, the longest value.
// Reads the shards' column (a block at a time; numbers stop at the first other value).
void survey(std::vector<Shard>& shards, std::size_t k, const Column& first, bool want_uniform, bool& uniform,
            std::size_t& width) {
  const bool text = first.is_text();
  uniform = want_uniform;
  width = 1;
  Column buf;
  for (auto& sh : shards) {
    const std::size_t c = sh.col[k], n = sh.r->rows();
    if (n == 0) continue;
    if (sh.r->fill_only(c)) {  // one value in every row: read one
      sh.r->read(c, 0, 1, buf);
      if (uniform && !same_cell(buf.data, 0, first.data, 0)) uniform = false;
      if (text) width = std::max(width, std::get<std::vector<std::string>>(buf.data)[0].size());
      continue;
    }
    // Blocks from 4,096 rows (most columns differ early) up to 65,536.
    for (std::size_t at = 0, step = 4096; at < n && (uniform || text); at += step, step = std::min<std::size_t>(2 * step, 65536)) {
      const std::size_t m = std::min(step, n - at);
      sh.r->read(c, at, m, buf);
      for (std::size_t j = 0; j < m && uniform; ++j)
        if (!same_cell(buf.data, j, first.data, 0)) uniform = false;
      if (text)
        for (const auto& v : std::get<std::vector<std::string>>(buf.data)) width = std::max(width, v.size());
    }
  }
}

// Writes the merged table through an Hdf5ColumnStream, column by column.
template <class Id>
void write_streamed(std::vector<Shard>& shards, const std::vector<Id>& order, const Attributes& attrs,
                    const std::string& out) {
  const std::size_t rows = order.size();
  Hdf5ColumnStream w(out, "points", rows, attrs);
  const std::size_t block = w.block_rows();
  const auto& cols = shards[0].r->schema().columns();
  for (std::size_t k = 0; k < cols.size(); ++k) {
    std::vector<Cursor> cur(shards.size());
    for (std::size_t i = 0; i < shards.size(); ++i) cur[i].s = &shards[i], cur[i].k = shards[i].col[k];
    Column blk{cols[k].name, cols[k].unit, cols[k].description, cols[k].data};
    // Rows [at, at + n) of the merged column into blk.
    auto fill = [&](std::size_t at, std::size_t n) {
      std::visit(
          [&](auto& v) {
            using V = std::decay_t<decltype(v)>;
            v.resize(n);
            for (std::size_t j = 0; j < n; ++j) {
              Cursor& c = cur[order[at + j]];
              if (c.pos == c.end) c.refill();
              v[j] = std::get<V>(c.buf.data)[c.pos++ - c.begin];
            }
          },
          blk.data);
    };
    fill(0, std::min(block, rows));
    bool uniform = false;
    std::size_t width = 1;
    if (w.packs() || blk.is_text()) survey(shards, k, blk, w.packs(), uniform, width);
    w.begin(blk, uniform, width);
    if (!uniform) {
      for (std::size_t at = 0; at < rows; at += block) {
        if (at) fill(at, std::min(block, rows - at));
        w.append(blk);
      }
    }
    w.end();
    for (auto& sh : shards) sh.r->release(sh.col[k]);
  }
  w.commit();
}

}  // namespace

MergeResult merge_shards(const std::vector<std::string>& inputs, const std::string& out,
                         const std::string& command_line) {
  if (inputs.empty()) throw InputError({"command line", 0, "inputs"}, "give at least one shard file");
  // Every file is checked first (attributes, columns: names, types, lengths), its data not read.
  Attributes first;
  std::set<std::string> shard_names;
  std::vector<Shard> shards;
  std::size_t rows = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string& f = inputs[i];
    if (!std::filesystem::exists(f)) throw InputError({f, 0, ""}, "no such file");
    Attributes a = read_hdf5_attributes(f);  // InputError naming the file and dataset when corrupt
    Shard sh{f, std::make_unique<Hdf5GroupReader>(f, "points"), {}};
    const Table& t = sh.r->schema();
    const Column* pi = t.find("point_index");
    if (!pi) throw InputError({f, 0, "/points/point_index"}, "missing; was it written by cisa-sim?");
    if (!std::holds_alternative<std::vector<std::int64_t>>(pi->data))
      throw InputError({f, 0, "/points/point_index"}, "must be an integer column");
    if (i == 0) {
      first = a;
    } else {
      for (const char* key : {"tool_version", "scenario_effective_yaml", "basis"})
        if (a[key] != first[key])
          throw InputError({f, 0, key}, std::string("differs from ") + inputs[0] + ": refusing to merge results of different " +
                                            (std::string(key) == "tool_version" ? "tool versions" : "scenarios"));
    }
    const Table& t0 = i == 0 ? t : shards[0].r->schema();
    if (t0.columns().size() != t.columns().size())
      throw InputError({f, 0, "/points"}, "has a different set of columns than the first file");
    for (const auto& d : t0.columns()) {
      std::size_t k = 0;
      while (k < t.columns().size() && t.columns()[k].name != d.name) ++k;
      if (k == t.columns().size() || t.columns()[k].data.index() != d.data.index())
        throw InputError({f, 0, "/points/" + d.name}, "column missing or of another type than in the first file");
      sh.col.push_back(k);
    }
    if (!shard_names.insert(a["shard"]).second) throw InputError({f, 0, "shard"}, "shard " + a["shard"] + " given twice");
    rows += sh.r->rows();
    shards.push_back(std::move(sh));
  }
  Attributes attrs = first;
  attrs["shard"] = "merged";
  std::string from;
  for (const auto& f : inputs) from += (from.empty() ? "" : "\n") + f;
  attrs["merged_from"] = from;
  attrs["command_line"] = command_line;
  const std::size_t total = points_total(first, inputs[0]);
  auto warn_missing = [&](std::size_t n) {
    if (total && n != total)
      std::cerr << "cisa-sim merge: warning: " << n << " of " << total << " points present (missing shards?)\n";
  };
  // The merge order's width: one byte a row for up to 256 shards.
  std::size_t pi = 0;
  while (shards[0].r->schema().columns()[pi].name != "point_index") ++pi;
  bool sorted = false;
  if (shards.size() <= 256) {
    const auto order = merge_order<std::uint8_t>(shards, pi, rows, sorted);
    if (sorted) warn_missing(rows), write_streamed(shards, order, attrs, out);
  } else if (shards.size() <= 65536) {
    const auto order = merge_order<std::uint16_t>(shards, pi, rows, sorted);
    if (sorted) warn_missing(rows), write_streamed(shards, order, attrs, out);
  }
  if (!sorted) {
    // Needed only for shards not sorted by point_index (or more than 65,536 of them): every
    // column held and sorted in memory (~1.2 KB a point).
    shards.clear();
    const Table merged = merged_in_memory(inputs);
    rows = merged.rows();
    warn_missing(rows);
    write_hdf5(out, {{"points", &merged}}, attrs);
  }
  return {rows, sorted};
}

}  // namespace cisa
