#include "route/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace cisa::route {

ReportTables make_tables(const std::vector<LayerReport>& layers, const RouteConfig& cfg) {
  ReportTables t;
  {
    cisa::Table& tb = t.routing;
    auto& layer = tb.add_i64("layer", "", "layer index in the activations file");
    auto& budget = tb.add_i64("budget_chunks", "chunks", "K: remote chunks selected per selection");
    auto& g = tb.add_i64("qshare_g", "positions", "G: adjacent analysed positions sharing one selection");
    auto& w = tb.add_i64("window_pages", "pages", "W: recent full pages always read");
    auto& chunk = tb.add_i64("chunk_tokens", "tokens", "c: chunk (page) size");
    auto& rule = tb.add_text("rep_rule", "representative rule (mean | minmax)");
    auto& agg = tb.add_text("aggregation", "group score aggregation over positions (sum | max | last)");
    auto& head = tb.add_i64("q_head", "", "query head; -1 = mean over all heads");
    auto& kvg = tb.add_i64("kv_group", "", "KV group of the head; -1 = all groups");
    auto& pos = tb.add_i64("positions", "positions", "analysed positions");
    auto& elig = tb.add_f64("eligible_chunks_mean", "chunks", "mean N_e (eligible remote chunks) over positions");
    auto& rmean = tb.add_f64("recall_mean", "", "dense attention probability inside the read pages (top-K + window + tail), mean over positions (and heads)");
    auto& rmin = tb.add_f64("recall_min", "", "minimum recall over positions (and heads)");
    auto& rp10 = tb.add_f64("recall_p10", "", "10th percentile of recall over positions (and heads)");
    auto& r0 = tb.add_f64("recall_no_window", "", "recall of top-K over all full pages, no window (+ tail)");
    auto& rm = tb.add_f64("recall_more_chunks", "", "recall of top-(K+W) over all full pages, no window (+ tail): the window's pages spent on selected chunks");
    auto& wg = tb.add_f64("window_gain", "", "recall_mean - recall_no_window: mass gained by adding the recent window");
    auto& mg = tb.add_f64("more_chunks_gain", "", "recall_more_chunks - recall_no_window: mass gained by W more selected chunks");
    auto& qs = tb.add_f64("qshare_overlap", "", "|QShare top-K ∩ per-position top-K| / smaller set, mean over positions (and groups)");
    std::vector<std::vector<double>*> lag;
    for (auto l : cfg.lags)
      lag.push_back(&tb.add_f64(fmt::format("lag{}_overlap", l), "",
                                fmt::format("|top-K(t) ∩ top-K(t+{})| / smaller set, per-position selections (G=1); NaN without such pairs", l)));
    for (const auto& L : layers)
      for (const auto& row : L.rows) {
        layer.push_back(row.layer);
        budget.push_back(row.budget);
        g.push_back(row.qshare_g);
        w.push_back(row.window);
        chunk.push_back(cfg.chunk_tokens);
        rule.push_back(to_string(L.rep));
        agg.push_back(to_string(L.aggregation));
        head.push_back(row.q_head);
        kvg.push_back(row.kv_group);
        pos.push_back(row.positions);
        elig.push_back(row.eligible_mean);
        rmean.push_back(row.recall_mean);
        rmin.push_back(row.recall_min);
        rp10.push_back(row.recall_p10);
        r0.push_back(row.recall_no_window);
        rm.push_back(row.recall_more_chunks);
        wg.push_back(row.recall_mean - row.recall_no_window);
        mg.push_back(row.recall_more_chunks - row.recall_no_window);
        qs.push_back(row.qshare_overlap);
        for (std::size_t i = 0; i < lag.size(); ++i) lag[i]->push_back(row.lag_overlap[i]);
      }
  }
  {
    cisa::Table& tb = t.curve;
    auto& layer = tb.add_i64("layer", "", "layer index");
    auto& budget = tb.add_i64("budget_chunks", "chunks", "K");
    auto& g = tb.add_i64("qshare_g", "positions", "G");
    auto& w = tb.add_i64("window_pages", "pages", "W");
    auto& rule = tb.add_text("rep_rule", "representative rule (mean | minmax)");
    auto& agg = tb.add_text("aggregation", "group score aggregation (sum | max | last)");
    auto& rmean = tb.add_f64("recall_mean", "", "recall, mean over heads and positions");
    auto& rmin = tb.add_f64("recall_min_head", "", "smallest per-head mean recall");
    for (const auto& L : layers)
      for (const auto& row : L.curve) {
        layer.push_back(row.layer);
        budget.push_back(row.budget);
        g.push_back(row.qshare_g);
        w.push_back(row.window);
        rule.push_back(to_string(L.rep));
        agg.push_back(to_string(L.aggregation));
        rmean.push_back(row.recall_mean);
        rmin.push_back(row.recall_min_head);
      }
  }
  {
    cisa::Table& tb = t.init;
    auto& layer = tb.add_i64("layer", "", "layer index");
    auto& kvg = tb.add_i64("kv_group", "", "KV group");
    auto& rule = tb.add_text("rep_rule", "representatives the candidates were scored against");
    auto& cand = tb.add_i64("candidate", "", "0..r-1: head projection within the group; r: row-wise mean");
    auto& label = tb.add_text("candidate_label", "'head i' or 'mean'");
    auto& qh = tb.add_i64("q_head", "", "global query head of the candidate; -1 for the mean");
    auto& kl = tb.add_f64("kl_mean", "nats", "KL(dense page mass || candidate page distribution), mean over positions");
    auto& chosen = tb.add_i64("chosen", "", "1 for the candidate with the smallest KL");
    auto& used = tb.add_i64("positions", "positions", "positions with >= 2 full pages that entered the mean");
    std::vector<std::pair<int, RepRule>> done;  // the initialisation depends on (layer, rep) only
    for (const auto& L : layers) {
      if (std::find(done.begin(), done.end(), std::make_pair(L.layer, L.rep)) != done.end()) continue;
      done.emplace_back(L.layer, L.rep);
      const int r = L.init.candidates - 1;
      for (int gi = 0; gi < L.init.kv_heads; ++gi)
        for (int ci = 0; ci <= r; ++ci) {
          layer.push_back(L.layer);
          kvg.push_back(gi);
          rule.push_back(to_string(L.rep));
          cand.push_back(ci);
          label.push_back(candidate_label(ci, r));
          qh.push_back(ci == r ? -1 : gi * r + ci);
          kl.push_back(L.init.kl[static_cast<std::size_t>(gi * (r + 1) + ci)]);
          chosen.push_back(L.init.chosen[static_cast<std::size_t>(gi)] == ci ? 1 : 0);
          used.push_back(L.init.positions[static_cast<std::size_t>(gi)]);
        }
    }
  }
  return t;
}

std::string summary_text(const std::vector<LayerReport>& layers, const RouteConfig& cfg) {
  std::string s;
  s += fmt::format("CISA routing diagnostics (chunk {} tokens)\n", cfg.chunk_tokens);
  for (const auto& L : layers) {
    const int r = L.init.candidates - 1;
    s += fmt::format("\nlayer {}: {} tokens, {} analysed positions, {} q heads / {} kv heads, d={}; "
                     "representatives {}, aggregation {}\n",
                     L.layer, L.tokens, L.positions, L.q_heads, L.kv_heads, L.head_dim,
                     to_string(L.rep), to_string(L.aggregation));
    const bool init_shown = std::any_of(layers.data(), &L, [&](const LayerReport& o) {
      return o.layer == L.layer && o.rep == L.rep;
    });
    if (init_shown) s += "  initialisation: as above (same representatives)\n";
    else s += "  initialisation (KL dense||candidate, nats; * = chosen):\n";
    for (int g = 0; g < L.init.kv_heads && !init_shown; ++g) {
      s += fmt::format("    group {:>2}:", g);
      for (int c = 0; c <= r; ++c) {
        const double v = L.init.kl[static_cast<std::size_t>(g * (r + 1) + c)];
        s += fmt::format("  {}{}={:.4f}", L.init.chosen[static_cast<std::size_t>(g)] == c ? "*" : "",
                         candidate_label(c, r), v);
      }
      s += "\n";
    }
    s += fmt::format("  selection uses: ");
    for (std::size_t g = 0; g < L.indexer.size(); ++g)
      s += fmt::format("{}g{}={}", g ? ", " : "", g, candidate_label(L.indexer[g], r));
    s += "\n";
    s += fmt::format("  {:>6} {:>4} {:>5} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}", "K", "G", "W",
                     "recall", "min", "p10", "+window", "+chunks", "qshare");
    for (auto l : cfg.lags) s += fmt::format(" {:>8}", fmt::format("lag{}", l));
    s += "\n";
    for (const auto& row : L.rows) {
      if (row.q_head != -1) continue;
      s += fmt::format("  {:>6} {:>4} {:>5} {:>9.4f} {:>8.4f} {:>8.4f} {:>+8.4f} {:>+8.4f} {:>8.4f}",
                       row.budget, row.qshare_g, row.window, row.recall_mean, row.recall_min,
                       row.recall_p10, row.recall_mean - row.recall_no_window,
                       row.recall_more_chunks - row.recall_no_window, row.qshare_overlap);
      for (double v : row.lag_overlap) s += fmt::format(" {:>8.4f}", v);
      s += "\n";
    }
    s += "  (+window: recall gained by the W-page window over top-K alone; +chunks: by W more\n"
         "   selected chunks instead; qshare/lag: top-K overlap, intersection / smaller set)\n";
    s += fmt::format("  time: page mass {:.2f} s, initialisation {:.2f} s, selection+diagnostics {:.2f} s\n",
                     L.seconds_page_mass, L.seconds_init, L.seconds_select);
  }
  return s;
}

}  // namespace cisa::route
