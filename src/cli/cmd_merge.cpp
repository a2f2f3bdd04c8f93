// cisa-sim merge A.h5 B.h5 ... -o ALL.h5: join the shards of one scenario run.
#include <algorithm>
#include <boost/program_options.hpp>
#include <iostream>
#include <numeric>
#include <set>

#include "cisa/errors.hpp"
#include "cisa/output_file.hpp"
#include "cisa/write_hdf5.hpp"
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"

namespace po = boost::program_options;

namespace cisa::cli {

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

}  // namespace

int cmd_merge(int argc, char** argv) {
  return guarded("merge", [&]() {
    std::vector<std::string> inputs;
    std::string out;
    po::options_description opts("cisa-sim merge options");
    opts.add_options()("help,h", "show this help")("out,o", po::value(&out), "merged HDF5 file (required)")(
        "inputs", po::value(&inputs)->composing(), "shard files");
    po::positional_options_description pos;
    pos.add("inputs", -1);
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << "Join the HDF5 files of `cisa-sim --shard i/N` runs of one scenario into one file.\n"
                   "Refuses files from different scenarios, overrides or tool versions, and overlapping shards.\n\n"
                << "usage: cisa-sim merge A.h5 B.h5 ... -o ALL.h5\n" << opts;
      return kExitOk;
    }
    po::notify(vm);
    if (out.empty()) throw InputError({"command line", 0, "--out"}, "give the merged file with -o ALL.h5");
    if (inputs.empty()) throw InputError({"command line", 0, "inputs"}, "give at least one shard file");
    check_output(out, "--out", false);  // a bad target is refused before any reading
    Attributes first;
    Table all;
    std::set<std::string> shards;
    std::set<std::int64_t> seen;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::string& f = inputs[i];
      if (!std::filesystem::exists(f)) throw InputError({f, 0, ""}, "no such file");
      Attributes a = read_hdf5_attributes(f);  // InputError naming the file and dataset when corrupt
      Table t = read_hdf5_group(f, "points");
      const Column* pi = t.find("point_index");
      if (!pi) throw InputError({f, 0, "/points/point_index"}, "missing; was it written by cisa-sim?");
      if (!std::holds_alternative<std::vector<std::int64_t>>(pi->data))
        throw InputError({f, 0, "/points/point_index"}, "must be an integer column");
      if (i == 0) {
        first = a;
        all = std::move(t);
      } else {
        for (const char* key : {"tool_version", "scenario_effective_yaml", "basis"})
          if (a[key] != first[key])
            throw InputError({f, 0, key}, std::string("differs from ") + inputs[0] + ": refusing to merge results of different " +
                                              (std::string(key) == "tool_version" ? "tool versions" : "scenarios"));
        append_rows(all, t, f);
      }
      if (!shards.insert(a["shard"]).second) throw InputError({f, 0, "shard"}, "shard " + a["shard"] + " given twice");
    }
    for (auto v : std::get<std::vector<std::int64_t>>(all.find("point_index")->data))
      if (!seen.insert(v).second) throw InputError({"inputs", 0, "point_index"}, "point " + std::to_string(v) + " appears in two files");
    Table merged = sorted_by_index(all);
    Attributes attrs = first;
    attrs["shard"] = "merged";
    std::string from;
    for (const auto& f : inputs) from += (from.empty() ? "" : "\n") + f;
    attrs["merged_from"] = from;
    attrs["command_line"] = join_args(argc, argv);
    const std::size_t total = points_total(first, inputs[0]);
    if (total && merged.rows() != total)
      std::cerr << "cisa-sim merge: warning: " << merged.rows() << " of " << total << " points present (missing shards?)\n";
    write_hdf5(out, {{"points", &merged}}, attrs);
    std::cout << "merged " << inputs.size() << " files, " << merged.rows() << " points -> " << out << "\n";
    return kExitOk;
  });
}

}  // namespace cisa::cli
