#include "cli/run_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "cisa/errors.hpp"

namespace cisa::cli {

namespace {

std::vector<double> numbers(const Column& c) {
  std::vector<double> v;
  if (const auto* f = std::get_if<std::vector<double>>(&c.data)) return *f;
  if (const auto* i = std::get_if<std::vector<std::int64_t>>(&c.data))
    for (auto x : *i) v.push_back(static_cast<double>(x));
  return v;
}

std::set<std::string> distinct(const Table& t, const std::string& name) {
  std::set<std::string> s;
  if (const Column* c = t.find(name))
    for (std::size_t r = 0; r < t.rows(); ++r) s.insert(c->format_cell(r));
  return s;
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
std::vector<Key> key_columns(const Table& t) {
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
    if (distinct(t, name).size() > 1) keys.push_back({name, title, name == "prefill_tokens" ? 4 : 1});
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

void print_run_header(std::ostream& os, const Scenario& sc, const Table& t, const Attributes& attrs) {
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
  if (t.find("dense_impl"))
    os << wrap("dense baseline: " + joined(distinct(t, "dense_impl")) + " (the fastest dense implementation known for the card); CISA: " +
               joined(distinct(t, "cisa_impl")) + "; 'vs own' = dense with this project's kernels")
       << "\n";
  else
    os << "dense baseline: cuDNN SDPA's measured rate ('vs cuDNN'); 'vs own' = dense with this project's kernels\n";
  os << wrap("times: predicted, one global-attention layer, one forward, whole batch; busy = attention + scoring + top-k "
             "+ setup + other; x = busy dense / busy CISA")
     << "\n\n";
}

void print_run_table(std::ostream& os, const Table& t, const RunTableOptions& opt) {
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
    for (const auto& k : key_columns(t)) cols.push_back(render(*t.find(k.name), k.title, k.priority));
  }
  if (opt.markdown) return print_markdown(os, cols);
  const FitResult fit = print_fitted(os, cols, opt.wide || !opt.columns.empty() ? 0 : kTableWidth, opt.max_rows);
  if (!fit.left_out.empty()) {
    std::string s;
    for (const auto& x : fit.left_out) s += (s.empty() ? "" : ", ") + x;
    os << wrap("(left out to fit " + std::to_string(kTableWidth) + " columns: " + s +
               "; --wide shows them, --columns a,b,c picks /points columns by name)")
       << "\n";
  }
}

void print_budget_warning(std::ostream& os, const Table& t) {
  const Column *L = t.find("context_tokens"), *K = t.find("budget_chunks"), *c = t.find("chunk_tokens");
  if (!L || !K || !c) return;
  const auto l = numbers(*L), k = numbers(*K), ch = numbers(*c);
  std::size_t n = 0;
  for (std::size_t r = 0; r < l.size(); ++r) n += k[r] * ch[r] >= l[r];
  if (n)
    os << wrap(fmt::format("warning: {} point{} with K x c >= L: the budget covers the whole history, so CISA takes the "
                           "dense path there (no saving)",
                           n, n == 1 ? "" : "s"))
       << "\n";
}

void print_run_summary(std::ostream& os, const Table& t) {
  const Column* phase = t.find("phase");
  if (!phase) return;
  const bool impl = t.find("dense_impl") != nullptr;
  const std::vector<std::pair<std::string, std::string>> speedups =
      impl ? std::vector<std::pair<std::string, std::string>>{{"pred_speedup_busy", "busy vs dense"},
                                                             {"pred_speedup_busy_vs_own", "busy vs own"}}
           : std::vector<std::pair<std::string, std::string>>{{"pred_speedup_busy_vs_peer", "busy vs cuDNN"},
                                                             {"pred_speedup_busy", "busy vs own"}};
  for (const auto& ph : distinct(t, "phase")) {
    std::size_t count = 0;
    for (std::size_t r = 0; r < t.rows(); ++r) count += phase->format_cell(r) == ph;
    std::string line = "  " + ph + fmt::format(" ({} points):", count);
    for (const auto& [name, label] : speedups) {
      const Column* c = t.find(name);
      if (!c) continue;
      std::vector<double> v;
      const auto all = numbers(*c);
      for (std::size_t r = 0; r < all.size(); ++r)
        if (phase->format_cell(r) == ph && std::isfinite(all[r])) v.push_back(all[r]);
      if (v.empty()) continue;
      std::sort(v.begin(), v.end());
      const std::size_t m = v.size();
      const double med = m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
      line += fmt::format(" {} min {}x, median {}x, max {}x;", label, fmt_sig(v.front()), fmt_sig(med), fmt_sig(v.back()));
    }
    line.pop_back();
    os << wrap(line, kTableWidth, "    ") << "\n";
  }
}

}  // namespace cisa::cli
