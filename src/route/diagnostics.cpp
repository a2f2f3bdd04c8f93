// Routing diagnostics at given budgets K, QShare G and windows W (see route.hpp for the
// definitions). Everything here is post-processing of the dense page mass.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>

#include "cisa/errors.hpp"
#include "route/parallel.hpp"
#include "route/route.hpp"

namespace cisa::route {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Recall of (p, h) for each budget in `ks` (any order) under selection s.
void recall_at(const PageMass& m, const LayerActivations& a, const GroupSelection& s,
               std::int64_t p, int h, const std::vector<std::int64_t>& ks, double* out) {
  const float* row = m.row(p, h);
  const std::int64_t last_page = a.positions[static_cast<std::size_t>(p)] / m.chunk_tokens;
  double base = 0;
  for (std::int64_t j = s.window_begin; j <= last_page; ++j) base += row[j];
  std::int64_t kmax = 0;
  for (auto k : ks) kmax = std::max(kmax, k);
  kmax = std::min<std::int64_t>(kmax, static_cast<std::int64_t>(s.ranked.size()));
  std::vector<double> cum(static_cast<std::size_t>(kmax + 1), 0.0);
  for (std::int64_t i = 0; i < kmax; ++i)
    cum[static_cast<std::size_t>(i + 1)] = cum[static_cast<std::size_t>(i)] + row[s.ranked[static_cast<std::size_t>(i)]];
  for (std::size_t i = 0; i < ks.size(); ++i)
    out[i] = base + cum[static_cast<std::size_t>(std::min(ks[i], kmax))];
}

std::vector<std::int64_t> prefix(const GroupSelection& s, std::int64_t k) {
  const auto n = std::min<std::int64_t>(k, static_cast<std::int64_t>(s.ranked.size()));
  return {s.ranked.begin(), s.ranked.begin() + n};
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double mean_of(const std::vector<double>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

void check_config(const LayerActivations& a, const RouteConfig& cfg) {
  auto bad = [](const std::string& field, const std::string& what) {
    throw cisa::InputError(cisa::SourceLocation{"", 0, field}, what);
  };
  if (cfg.chunk_tokens <= 0) bad("chunk", "must be positive");
  if (cfg.budgets.empty()) bad("budget", "give at least one budget");
  if (cfg.qshare_gs.empty()) bad("G", "give at least one QShare group size");
  if (cfg.windows.empty()) bad("window", "give at least one window");
  for (auto k : cfg.budgets) if (k <= 0) bad("budget", "budgets must be positive");
  for (auto k : cfg.curve_budgets) if (k <= 0) bad("curve-budgets", "budgets must be positive");
  for (auto g : cfg.qshare_gs) if (g <= 0) bad("G", "G must be positive");
  for (auto w : cfg.windows) if (w < 0) bad("window", "window must be >= 0");
  for (auto l : cfg.lags) if (l <= 0) bad("lags", "lags must be positive");
  if (cfg.indexer > a.heads_per_group())
    bad("indexer", "candidate index must be <= heads per group (" +
                       std::to_string(a.heads_per_group()) + " = mean)");
}

}  // namespace

LayerReport analyse_layer(const LayerActivations& a, const RouteConfig& cfg) {
  check_config(a, cfg);
  const auto t0 = std::chrono::steady_clock::now();
  const PageMass m = dense_page_mass(a, cfg.chunk_tokens, {cfg.threads, cfg.key_block});
  const double secs = seconds_since(t0);
  LayerReport rep = analyse_layer(a, m, cfg);
  rep.seconds_page_mass = secs;
  return rep;
}

LayerReport analyse_layer(const LayerActivations& a, const PageMass& m, const RouteConfig& cfg) {
  check_config(a, cfg);
  const std::int64_t P = a.num_positions(), c = cfg.chunk_tokens;
  const int Hq = a.q_heads, Hkv = a.kv_heads, r = a.heads_per_group();
  const int threads = resolve_threads(cfg.threads);
  LayerReport rep;
  rep.layer = a.layer;
  rep.rep = cfg.rep;
  rep.aggregation = cfg.aggregation;
  rep.tokens = a.tokens;
  rep.positions = P;
  rep.q_heads = Hq;
  rep.kv_heads = Hkv;
  rep.head_dim = a.head_dim;

  auto t0 = std::chrono::steady_clock::now();
  const Representatives reps = make_representatives(a, c, cfg.rep);
  rep.init = initialise_indexer(m, a, reps, threads);
  rep.seconds_init = seconds_since(t0);
  rep.indexer = cfg.indexer < 0 ? rep.init.chosen : std::vector<int>(static_cast<std::size_t>(Hkv), cfg.indexer);
  const std::vector<float> iq = index_queries(a, rep.indexer);

  t0 = std::chrono::steady_clock::now();
  std::set<std::int64_t> curve_set(cfg.budgets.begin(), cfg.budgets.end());
  curve_set.insert(cfg.curve_budgets.begin(), cfg.curve_budgets.end());
  const std::vector<std::int64_t> curve_ks(curve_set.begin(), curve_set.end());
  const std::int64_t k_top = curve_ks.back();
  const std::int64_t k_budget_max = *std::max_element(cfg.budgets.begin(), cfg.budgets.end());

  // Find position index by absolute position (for lags).
  auto index_of = [&](std::int64_t t) -> std::int64_t {
    auto it = std::lower_bound(a.positions.begin(), a.positions.end(), t);
    return (it != a.positions.end() && *it == t) ? it - a.positions.begin() : -1;
  };

  for (const std::int64_t W : cfg.windows) {
    // Per-position selections (G = 1) for the QShare overlap and the lag overlaps.
    const auto per_pos = select_pages(a, reps, iq, {c, 1, W, cfg.aggregation}, k_budget_max, threads);
    for (const std::int64_t G : cfg.qshare_gs) {
      const auto sel = select_pages(a, reps, iq, {c, G, W, cfg.aggregation}, k_top, threads);
      const auto sel0 = select_pages(a, reps, iq, {c, G, 0, cfg.aggregation}, k_budget_max + W, threads);
      auto sel_of = [&](const std::vector<GroupSelection>& v, std::int64_t p, int g, std::int64_t gsize)
          -> const GroupSelection& { return v[static_cast<std::size_t>((p / gsize) * Hkv + g)]; };

      // recall[p][h][k] for the curve budgets.
      const std::size_t nk = curve_ks.size();
      std::vector<double> rec(static_cast<std::size_t>(P * Hq) * nk);
      detail::parallel_for(P * Hq, threads, [&](std::int64_t ph, int) {
        const std::int64_t p = ph / Hq;
        const int h = static_cast<int>(ph % Hq);
        recall_at(m, a, sel_of(sel, p, h / r, G), p, h, curve_ks, rec.data() + static_cast<std::size_t>(ph) * nk);
      });
      for (std::size_t ki = 0; ki < nk; ++ki) {
        CurveRow cr;
        cr.layer = a.layer;
        cr.budget = curve_ks[ki];
        cr.qshare_g = G;
        cr.window = W;
        double all = 0, min_head = std::numeric_limits<double>::infinity();
        for (int h = 0; h < Hq; ++h) {
          double s = 0;
          for (std::int64_t p = 0; p < P; ++p) s += rec[static_cast<std::size_t>(p * Hq + h) * nk + ki];
          all += s;
          min_head = std::min(min_head, s / static_cast<double>(P));
        }
        cr.recall_mean = all / static_cast<double>(P * Hq);
        cr.recall_min_head = min_head;
        rep.curve.push_back(cr);
      }

      for (const std::int64_t K : cfg.budgets) {
        const auto ki = static_cast<std::size_t>(std::lower_bound(curve_ks.begin(), curve_ks.end(), K) - curve_ks.begin());
        // No-window variants: top-K and top-(K+W) over all full pages.
        std::vector<double> r0(static_cast<std::size_t>(P * Hq)), rmore(static_cast<std::size_t>(P * Hq));
        detail::parallel_for(P * Hq, threads, [&](std::int64_t ph, int) {
          const std::int64_t p = ph / Hq;
          const int h = static_cast<int>(ph % Hq);
          double v[2];
          recall_at(m, a, sel_of(sel0, p, h / r, G), p, h, {K, K + W}, v);
          r0[static_cast<std::size_t>(ph)] = v[0];
          rmore[static_cast<std::size_t>(ph)] = v[1];
        });
        // Overlaps per (p, g).
        std::vector<double> qshare(static_cast<std::size_t>(P * Hkv));
        std::vector<std::vector<double>> lag(cfg.lags.size(), std::vector<double>(static_cast<std::size_t>(P * Hkv),
                                                                                 std::numeric_limits<double>::quiet_NaN()));
        detail::parallel_for(P * Hkv, threads, [&](std::int64_t pg, int) {
          const std::int64_t p = pg / Hkv;
          const int g = static_cast<int>(pg % Hkv);
          const auto mine = prefix(sel_of(per_pos, p, g, 1), K);
          qshare[static_cast<std::size_t>(pg)] = overlap(prefix(sel_of(sel, p, g, G), K), mine);
          for (std::size_t li = 0; li < cfg.lags.size(); ++li) {
            const std::int64_t q = index_of(a.positions[static_cast<std::size_t>(p)] + cfg.lags[li]);
            if (q >= 0) lag[li][static_cast<std::size_t>(pg)] = overlap(mine, prefix(sel_of(per_pos, q, g, 1), K));
          }
        });
        auto nanmean = [](const std::vector<double>& v, std::int64_t begin, std::int64_t step) {
          double s = 0;
          std::int64_t n = 0;
          for (auto i = static_cast<std::size_t>(begin); i < v.size(); i += static_cast<std::size_t>(step))
            if (!std::isnan(v[i])) { s += v[i]; ++n; }
          return n ? s / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
        };
        double elig = 0;
        for (std::int64_t p = 0; p < P; ++p) elig += static_cast<double>(sel_of(sel, p, 0, G).eligible);
        elig /= static_cast<double>(P);

        auto make_row = [&](int h) {
          RoutingRow row;
          row.layer = a.layer;
          row.budget = K;
          row.qshare_g = G;
          row.window = W;
          row.q_head = h;
          row.kv_group = h < 0 ? -1 : h / r;
          row.positions = P;
          row.eligible_mean = elig;
          std::vector<double> v, v0, vm;
          for (std::int64_t p = 0; p < P; ++p)
            for (int hh = 0; hh < Hq; ++hh) {
              if (h >= 0 && hh != h) continue;
              const auto ph = static_cast<std::size_t>(p * Hq + hh);
              v.push_back(rec[ph * nk + ki]);
              v0.push_back(r0[ph]);
              vm.push_back(rmore[ph]);
            }
          row.recall_mean = mean_of(v);
          row.recall_min = *std::min_element(v.begin(), v.end());
          row.recall_p10 = percentile(v, 0.10);
          row.recall_no_window = mean_of(v0);
          row.recall_more_chunks = mean_of(vm);
          const std::int64_t begin = h < 0 ? 0 : h / r, step = h < 0 ? 1 : Hkv;
          row.qshare_overlap = nanmean(qshare, begin, step);
          for (const auto& l : lag) row.lag_overlap.push_back(nanmean(l, begin, step));
          return row;
        };
        rep.rows.push_back(make_row(-1));
        for (int h = 0; h < Hq; ++h) rep.rows.push_back(make_row(h));
      }
    }
  }
  rep.seconds_select = seconds_since(t0);
  return rep;
}

}  // namespace cisa::route
