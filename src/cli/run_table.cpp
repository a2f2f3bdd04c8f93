#include "cli/run_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <type_traits>
#include <variant>

#include "cisa/errors.hpp"
#include "cisa/same_text.hpp"

namespace cisa::cli {

namespace {

std::vector<double> numbers(const Column& c) {
  std::vector<double> v;
  if (const auto* f = std::get_if<std::vector<double>>(&c.data)) return *f;
  if (const auto* i = std::get_if<std::vector<std::int64_t>>(&c.data))
    for (auto x : *i) v.push_back(static_cast<double>(x));
  return v;
}

std::set<std::string> distinct(const RunDigest& d, const std::string& name) {
  const auto it = d.distinct.find(name);
  return it == d.distinct.end() ? std::set<std::string>() : it->second;
}

// The columns whose distinct values the header and the key columns read.
const std::vector<std::string>& distinct_columns() {
  static const std::vector<std::string> names = {
      "model", "hardware", "batch", "q_heads", "kv_heads", "head_dim", "hidden", "prefill_tokens", "chunk_tokens",
      "window_pages", "kv_dtype", "rep_kind", "score_agg", "selection_overlap", "dense_impl", "cisa_impl", "phase"};
  return names;
}

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : "/") + x;
  return out;
}

std::string attr(const Attributes& a, const std::string& key) {
  const auto it = a.find(key);
  return it == a.end() ? std::string() : it->second;
}

// A column rendered for the console: times in ms or us, bytes in GB/MB, token counts as 1M.
TextColumn render(const Column& c, const std::string& title, int priority) {
  TextColumn out{title, {}, priority, c.is_text()};
  const std::size_t n = c.size();
  if (c.is_text()) {
    for (std::size_t r = 0; r < n; ++r) out.cells.push_back(c.format_cell(r));
    return out;
  }
  std::vector<double> v = numbers(c);
  double scale = 1;
  std::string unit = c.unit;
  if (c.unit == "ms") {
    unit = time_unit(v, scale);
  } else if (c.unit == "bytes") {
    double top = 0;
    for (double x : v)
      if (std::isfinite(x)) top = std::max(top, x);
    scale = top >= 1e9 ? 1e-9 : 1e-6;
    unit = top >= 1e9 ? "GB" : "MB";
  }
  const bool tokens = c.unit == "tokens" && std::holds_alternative<std::vector<std::int64_t>>(c.data);
  for (std::size_t r = 0; r < n; ++r) {
    if (tokens)
      out.cells.push_back(fmt_tokens(static_cast<long long>(v[r])));
    else if (std::holds_alternative<std::vector<std::int64_t>>(c.data) && scale == 1)
      out.cells.push_back(c.format_cell(r));
    else
      out.cells.push_back(fmt_sig(v[r] * scale));
  }
  if (!unit.empty() && unit != "x" && !tokens && unit != "chunks" && unit != "positions" && unit != "pages")
    out.title += " " + unit;
  return out;
}

struct Key {
  std::string name, title;
  int priority;
};

// The key columns, read by name so that files with and without the implementation columns work.
std::vector<Key> key_columns(const RunDigest& d) {
  const Table& t = d.shown;
  std::vector<Key> keys;
  const std::vector<std::pair<std::string, std::string>> axes = {
      {"model", "model"}, {"hardware", "gpu"}, {"batch", "B"}, {"q_heads", "Hq"}, {"kv_heads", "Hkv"},
      {"head_dim", "d"}, {"prefill_tokens", "P"}, {"chunk_tokens", "c"}, {"window_pages", "W"},
      {"kv_dtype", "kv"}, {"rep_kind", "rep"}, {"score_agg", "agg"}, {"selection_overlap", "overlap"}};
  if (t.find("design")) keys.push_back({"design", "design", 0});  // issue 15: design: / sweep.design
  keys.push_back({"phase", "phase", 0});
  keys.push_back({"context_tokens", "L", 0});
  keys.push_back({"budget_chunks", "K", 0});
  keys.push_back({"qshare_g", "G", 0});
  for (const auto& [name, title] : axes)
    if (distinct(d, name).size() > 1) keys.push_back({name, title, name == "prefill_tokens" ? 4 : 1});
  const bool impl = t.find("dense_impl") != nullptr;
  if (impl) keys.push_back({"dense_impl", "dense", 0});
  keys.push_back({"pred_ms_busy_dense", "busy dense", 0});
  keys.push_back({"pred_ms_busy_cisa", "busy CISA", 0});
  if (impl) {  // speedups over the best dense implementation, and over this project's own kernels
    keys.push_back({"pred_speedup_busy", "x vs dense", 0});
    keys.push_back({"pred_speedup_busy_vs_own", "x vs own", 2});
    keys.push_back({"pred_speedup_attention", "attn x vs dense", 3});
    keys.push_back({"pred_speedup_attention_vs_own", "attn x vs own", 5});
  } else {  // before implementation profiles: own kernels in pred_speedup_*, the library peer in *_vs_peer
    keys.push_back({"pred_speedup_busy_vs_peer", "x vs cuDNN", 0});
    keys.push_back({"pred_speedup_busy", "x vs own", 2});
    keys.push_back({"pred_speedup_attention_vs_peer", "attn x vs cuDNN", 3});
    keys.push_back({"pred_speedup_attention", "attn x vs own", 5});
  }
  keys.push_back({"pred_ms_attention_dense", "attn dense", 4});
  keys.push_back({"pred_ms_attention_cisa", "attn CISA", 4});
  keys.push_back({"pred_ms_scoring", "score", 6});
  keys.push_back({"pred_ms_topk", "topk", 6});
  keys.push_back({"pred_ms_setup", "setup", 7});
  keys.push_back({"pred_ms_other", "other", 7});
  keys.push_back({"bytes_kv_dense", "KV dense", 8});
  keys.push_back({"bytes_kv_cisa", "KV CISA", 8});
  std::vector<Key> present;
  for (const auto& k : keys)
    if (t.find(k.name)) present.push_back(k);
  return present;
}

std::vector<std::string> column_names(const Table& t) {
  std::vector<std::string> names;
  for (const auto& c : t.columns()) names.push_back(c.name);
  return names;
}

void print_markdown(std::ostream& os, const std::vector<TextColumn>& cols) {
  os << "|";
  for (const auto& c : cols) os << ' ' << c.title << " |";
  os << "\n|";
  for (const auto& c : cols) os << (c.left_align ? "---|" : "---:|");
  os << '\n';
  const std::size_t n = cols.empty() ? 0 : cols.front().cells.size();
  for (std::size_t r = 0; r < n; ++r) {
    os << "|";
    for (const auto& c : cols) os << ' ' << c.cells[r] << " |";
    os << '\n';
  }
}

}  // namespace

void print_run_header(std::ostream& os, const Scenario& sc, const RunDigest& t, const Attributes& attrs) {
  os << wrap("scenario " + sc.name + " (" + sc.file + ")" + (sc.description.empty() ? "" : ": " + sc.description)) << "\n";
  if (!sc.overrides.empty()) {
    std::string s;
    for (const auto& o : sc.overrides) s += (s.empty() ? "" : ", ") + o;
    os << wrap("  after --set " + s, kTableWidth, "    ") << "\n";
  }
  os << wrap("model " + joined(distinct(t, "model")) + ": per rank " + joined(distinct(t, "q_heads")) + " q / " +
             joined(distinct(t, "kv_heads")) + " kv heads, head dim " + joined(distinct(t, "head_dim")) + ", hidden " +
             joined(distinct(t, "hidden")))
     << "\n";
  for (const auto& name : distinct(t, "hardware")) {
    const auto it = sc.gpus.find(name);
    std::string line = "GPU " + (it == sc.gpus.end() ? name : it->second.display_name + " (" + name + ")");
    if (it != sc.gpus.end())
      line += fmt::format(": {} GB HBM at {} TB/s, {} TF/s BF16, {} SMs", fmt_sig(it->second.hbm_gb.value),
                          fmt_sig(it->second.hbm_bw_tbs.value), fmt_sig(it->second.bf16_tflops.value),
                          fmt_sig(it->second.sms.value));
    line += "; basis " + to_string(sc.basis);
    const std::string src = attr(attrs, "rates_source." + name);
    if (!src.empty()) line += " (" + src + ")";
    os << wrap(line) << "\n";
  }
  if (t.shown.find("dense_impl"))
    os << wrap("dense baseline: " + joined(distinct(t, "dense_impl")) + " (the fastest dense implementation known for the card); CISA: " +
               joined(distinct(t, "cisa_impl")) + "; 'vs own' = dense with this project's kernels")
       << "\n";
  else
    os << "dense baseline: cuDNN SDPA's measured rate ('vs cuDNN'); 'vs own' = dense with this project's kernels\n";
  os << wrap("times: predicted, one global-attention layer, one forward, whole batch; busy = attention + scoring + top-k "
             "+ setup + other; x = busy dense / busy CISA")
     << "\n\n";
}

void print_run_table(std::ostream& os, const RunDigest& d, const RunTableOptions& opt) {
  const Table& t = d.shown;
  std::vector<TextColumn> cols;
  if (!opt.columns.empty()) {
    for (const auto& name : opt.columns) {
      const Column* c = t.find(name);
      if (!c) {
        std::string msg = "no column '" + name + "'";
        const std::string hint = did_you_mean(name, column_names(t));
        if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
        throw InputError({"command line", 0, "--columns"}, msg + "; --format csv prints every column's name");
      }
      cols.push_back(render(*c, name, 0));
    }
  } else {
    for (const auto& k : key_columns(d)) cols.push_back(render(*t.find(k.name), k.title, k.priority));
  }
  if (opt.markdown) {
    if (d.rows != t.rows())  // a streamed sweep: markdown shows the rows held, head and tail
      os << fmt::format("(first {} and last {} of {} rows; --format csv for every row)\n", d.head, t.rows() - d.head, d.rows);
    return print_markdown(os, cols);
  }
  const std::size_t hidden = d.rows - t.rows();  // > 0: a streamed sweep, only head and tail held
  const FitResult fit = print_fitted(os, cols, opt.wide || !opt.columns.empty() ? 0 : kTableWidth, opt.max_rows,
                                     hidden, d.head);
  if (!fit.left_out.empty()) {
    std::string s;
    for (const auto& x : fit.left_out) s += (s.empty() ? "" : ", ") + x;
    os << wrap("(left out to fit " + std::to_string(kTableWidth) + " columns: " + s +
               "; --wide shows them, --columns a,b,c picks /points columns by name)")
       << "\n";
  }
}

void print_budget_warning(std::ostream& os, const RunDigest& d) {
  const std::size_t n = d.budget_covers;
  if (n)
    os << wrap(fmt::format("warning: {} point{} with K x c >= L: the budget covers the whole history, so CISA takes the "
                           "dense path there (no saving)",
                           n, n == 1 ? "" : "s"))
       << "\n";
}

void print_run_summary(std::ostream& os, const RunDigest& d) {
  if (!d.shown.find("phase")) return;
  const bool impl = d.shown.find("dense_impl") != nullptr;
  const std::vector<std::string> labels =
      impl ? std::vector<std::string>{"busy vs dense", "busy vs own"} : std::vector<std::string>{"busy vs cuDNN", "busy vs own"};
  for (const auto& [ph, pv] : d.phases) {
    std::string line = "  " + ph + fmt::format(" ({} points):", pv.count);
    for (std::size_t k = 0; k < pv.series.size(); ++k) {
      if (k >= labels.size() || d.summary_columns[k].empty()) continue;
      std::vector<double> v = pv.series[k].values;
      if (v.empty()) continue;
      const std::size_t m = v.size();
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m / 2), v.end());
      const double upper = v[m / 2];  // the lower middle (even m) is the largest of the lower half
      const double med = m % 2 ? upper : 0.5 * (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m / 2)) + upper);
      // Beyond RunDigest::kMaxSummary values, min and max are exact and the median is that of every stride-th.
      const std::string of = pv.series[k].stride > 1 ? fmt::format(" (of every {}-th point)", pv.series[k].stride) : "";
      line += fmt::format(" {} min {}x, median{} {}x, max {}x;", labels[k], fmt_sig(pv.series[k].min), of,
                          fmt_sig(med), fmt_sig(pv.series[k].max));
    }
    line.pop_back();
    os << wrap(line, kTableWidth, "    ") << "\n";
  }
}

// ---- RunDigest ----

void RunDigest::Series::push(double v) {
  min = std::min(min, v);
  max = std::max(max, v);
  if (count++ % stride == 0) {
    values.push_back(v);
    if (values.size() >= kMaxSummary) {  // keep every other one
      for (std::size_t k = 0; 2 * k < values.size(); ++k) values[k] = values[2 * k];
      values.resize((values.size() + 1) / 2);
      stride *= 2;
    }
  }
}

RunDigest::RunDigest(const Table& schema, std::size_t total, std::size_t max_rows) : rows(total), max_rows_(max_rows) {
  const bool all = max_rows == 0 || total <= max_rows;
  head = all ? total : (max_rows + 1) / 2;
  if (!all) distinct_cap_ = kMaxDistinct;
  for (const auto& c : schema.columns()) {
    if (std::holds_alternative<std::vector<double>>(c.data)) shown.add_f64(c.name, c.unit, c.description);
    else if (std::holds_alternative<std::vector<std::int64_t>>(c.data)) shown.add_i64(c.name, c.unit, c.description);
    else shown.add_text(c.name, c.description);
  }
  const bool impl = schema.find("dense_impl") != nullptr;
  summary_columns = impl ? std::vector<std::string>{"pred_speedup_busy", "pred_speedup_busy_vs_own"}
                         : std::vector<std::string>{"pred_speedup_busy_vs_peer", "pred_speedup_busy"};
  for (auto& name : summary_columns)
    if (!schema.find(name)) name.clear();
}

void RunDigest::add(const Table& chunk) {
  const std::size_t n = chunk.rows();
  const std::size_t tail = max_rows_ == 0 || rows <= max_rows_ ? 0 : max_rows_ / 2;
  // Rows shown: the head, and the tail of the whole run.
  std::vector<std::size_t> keep;
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t g = seen + r;
    if (g < head || g >= rows - tail) keep.push_back(r);
  }
  if (!keep.empty() && copy_rows_) {
    auto& dst = shown.columns();
    for (std::size_t k = 0; k < dst.size(); ++k) {
      auto& out = const_cast<Column&>(dst[k]);
      const Column& in = chunk.columns()[k];
      std::visit(
          [&](auto& o) {
            using V = std::decay_t<decltype(o)>;
            const auto& i = std::get<V>(in.data);
            for (std::size_t r : keep) o.push_back(i[r]);
          },
          out.data);
    }
  }
  // Distinct values of the key columns: raw values first (cheap), formatted at the end.
  for (const auto& name : distinct_columns()) {
    const Column* c = chunk.find(name);
    if (!c) continue;
    Distinct& dd = raw_[name];
    std::visit(
        [&](const auto& v) {
          using T = typename std::decay_t<decltype(v)>::value_type;
          for (std::size_t r = 0; r < n; ++r) {
            if constexpr (std::is_same_v<T, std::string>) {
              if (r && same_text(v[r], v[r - 1])) continue;
            } else if (r && v[r] == v[r - 1]) {
              continue;
            }
            std::uint64_t bits = 0;
            if constexpr (!std::is_same_v<T, std::string>) {
              static_assert(sizeof(T) == sizeof bits);
              std::memcpy(&bits, &v[r], sizeof bits);
              // Already listed (an inner axis cycles through its values row after row): the set
              // is not searched. Only values in the set enter the cache, so a hit changes nothing.
              if (dd.recent[Distinct::slot(bits)] == bits && dd.recent_set[Distinct::slot(bits)])
                continue;
            }
            if (dd.texts.size() + dd.numbers.size() >= distinct_cap_) break;  // streamed: bounded
            if constexpr (std::is_same_v<T, std::string>) {
              if (dd.texts.insert(v[r]).second) distinct[name].insert(v[r]);
            } else {
              if (dd.numbers.insert(bits).second) distinct[name].insert(c->format_cell(r));
              dd.recent[Distinct::slot(bits)] = bits;
              dd.recent_set[Distinct::slot(bits)] = true;
            }
          }
        },
        c->data);
  }
  const Column *L = chunk.find("context_tokens"), *K = chunk.find("budget_chunks"), *ch = chunk.find("chunk_tokens");
  if (L && K && ch) {
    const auto l = numbers(*L), k = numbers(*K), c = numbers(*ch);
    for (std::size_t r = 0; r < n; ++r) budget_covers += k[r] * c[r] >= l[r];
  }
  if (const Column* phase = chunk.find("phase")) {
    std::vector<std::vector<double>> cols;
    for (const auto& name : summary_columns) cols.push_back(name.empty() ? std::vector<double>() : numbers(*chunk.find(name)));
    const auto* names = std::get_if<std::vector<std::string>>(&phase->data);
    PhaseValues* last = nullptr;
    for (std::size_t r = 0; r < n; ++r) {
      // Rows of one phase come in runs: look the phase up only where it changes.
      if (!last || !names || r == 0 || !same_text((*names)[r], (*names)[r - 1]))
        last = &phases[phase->format_cell(r)];
      PhaseValues& pv = *last;
      if (pv.series.size() != cols.size()) {
        pv.series.resize(cols.size());
        // Room for every value up front (address space only): growing by copies re-touched them
        // all.
        for (auto& s : pv.series) s.values.reserve(std::min(rows, kMaxSummary));
      }
      ++pv.count;
      for (std::size_t k = 0; k < cols.size(); ++k)
        if (!cols[k].empty() && std::isfinite(cols[k][r])) pv.series[k].push(cols[k][r]);
    }
  }
  seen += n;
}

void RunDigest::adopt(Table&& whole) {
  copy_rows_ = false;
  add(whole);
  copy_rows_ = true;
  shown = std::move(whole);
}

void print_run_header(std::ostream& os, const Scenario& sc, const Table& t, const Attributes& attrs) {
  RunDigest d(t, t.rows(), 0);
  d.add(t);
  print_run_header(os, sc, d, attrs);
}

void print_run_table(std::ostream& os, const Table& t, const RunTableOptions& opt) {
  RunDigest d(t, t.rows(), 0);
  d.add(t);
  print_run_table(os, d, opt);
}

void print_budget_warning(std::ostream& os, const Table& t) {
  RunDigest d(t, t.rows(), 0);
  d.add(t);
  print_budget_warning(os, d);
}

void print_run_summary(std::ostream& os, const Table& t) {
  RunDigest d(t, t.rows(), 0);
  d.add(t);
  print_run_summary(os, d);
}

}  // namespace cisa::cli
