// Host-side planning of the CISA step and the dense baseline (pure C++; used by the CUDA entry
// points, the CPU references and the tests).
#include <algorithm>
#include <stdexcept>

#include "cisa_kernels/cisa_step.hpp"

namespace cisa::kernels {

std::vector<int> token_offsets(const StepBatch& b) {
  std::vector<int> off(b.new_tokens.size() + 1, 0);
  for (size_t i = 0; i < b.new_tokens.size(); ++i) off[i + 1] = off[i] + b.new_tokens[i];
  return off;
}

std::vector<ScoreGroup> make_score_groups(const std::vector<ScoreRow>& rows) {
  std::vector<ScoreGroup> groups;
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const ScoreRow& r = rows[static_cast<size_t>(i)];
    if (groups.empty() || groups.back().seq != r.seq || groups.back().kv_head != r.kv_head ||
        groups.back().n_rows >= kMaxScoreGroupRows) {
      groups.push_back(ScoreGroup{i, 0, r.seq, r.kv_head, 0});
    }
    groups.back().n_rows += 1;
    groups.back().max_ne = std::max(groups.back().max_ne, r.n_e);
  }
  return groups;
}

namespace {

void check_batch(const StepBatch& b) {
  if (b.history.size() != b.new_tokens.size()) throw std::invalid_argument("history/new_tokens size");
  if (b.r < 1 || b.r > kMaxAttnRows) throw std::invalid_argument("r out of range");
  for (size_t i = 0; i < b.history.size(); ++i)
    if (b.history[i] < 0 || b.new_tokens[i] < 1) throw std::invalid_argument("bad lengths");
}

// Attention works for positions [pa, pb) of sequence `seq` reading one list, chunked to <= 128 rows.
void add_works(std::vector<AttnWork>& out, const StepBatch& b, const std::vector<int>& toff, int seq,
               int kvh, int pa, int pb, int list_src, int list_row, int n_unmasked, int mask_page0, int max_rows) {
  const int max_pos = std::max(1, std::min(max_rows, kMaxAttnRows) / b.r);
  for (int p = pa; p < pb; p += max_pos) {
    const int pe = std::min(pb, p + max_pos);
    AttnWork w;
    w.q_tok0 = toff[static_cast<size_t>(seq)] + p;
    w.n_pos = pe - p;
    w.kv_head = kvh;
    w.q_pos0 = b.history[static_cast<size_t>(seq)] + p;
    w.list_src = list_src;
    w.list_row = list_row;
    const int last_page = (b.history[static_cast<size_t>(seq)] + pe - 1) / kPageTokens;
    if (list_src == 0) {
      w.n_pages = last_page + 1;
      w.mask_from = w.q_pos0 / kPageTokens;
      w.mask_tok0 = w.mask_from * kPageTokens;
    } else {
      w.n_pages = n_unmasked + (last_page - mask_page0 + 1);
      w.mask_from = n_unmasked;
      w.mask_tok0 = mask_page0 * kPageTokens;
    }
    out.push_back(w);
  }
}

int rows_per_cta_for(const std::vector<AttnWork>& work, int r) {
  int m = 0;
  for (const auto& w : work) m = std::max(m, w.n_pos * r);
  return m <= 16 ? 16 : m <= 32 ? 32 : m <= 64 ? 64 : 128;
}

}  // namespace

int attention_rows_per_cta(const std::vector<AttnWork>& work, int r) { return rows_per_cta_for(work, r); }

CisaPlan plan_cisa_step(const StepBatch& b, const StepConfig& c) {
  check_batch(b);
  if (c.qshare_g < 1 || c.budget < 1 || c.window_pages < 0) throw std::invalid_argument("bad config");
  CisaPlan plan;
  plan.budget = c.budget;
  const auto toff = token_offsets(b);
  plan.total_tokens = toff.back();
  int max_tail = 0;
  // First pass: selections, in (seq, kv_head, group) order so score groups share representatives.
  struct Sel { int seq, kvh, pa, pb; bool sparse; int n_e, npage; };
  std::vector<Sel> sels;
  for (int s = 0; s < static_cast<int>(b.history.size()); ++s) {
    const int hist = b.history[static_cast<size_t>(s)];
    const int P = b.new_tokens[static_cast<size_t>(s)];
    for (int kvh = 0; kvh < b.kv_heads; ++kvh) {
      for (int g0 = 0; g0 < P; g0 += c.qshare_g) {
        const int g1 = std::min(P, g0 + c.qshare_g);
        auto ne_at = [&](int p) { return std::max(0, (hist + p) / kPageTokens - c.window_pages); };
        // first position of the group whose N_e exceeds K (dense prefix / sparse suffix split)
        int split = g1;
        for (int p = g0; p < g1; ++p)
          if (ne_at(p) > c.budget) { split = p; break; }
        if (split > g0) sels.push_back({s, kvh, g0, split, false, 0, 0});
        if (split < g1) {
          const int t0 = hist + split;
          sels.push_back({s, kvh, split, g1, true, ne_at(split), t0 / kPageTokens});
          const int tail = (hist + g1 - 1) / kPageTokens - t0 / kPageTokens + 1;
          max_tail = std::max(max_tail, tail);
        }
      }
    }
  }
  plan.sparse_stride = c.budget + c.window_pages + max_tail;
  for (const Sel& sl : sels) {
    if (!sl.sparse) {
      add_works(plan.work, b, toff, sl.seq, sl.kvh, sl.pa, sl.pb, 0, sl.seq, 0, 0, c.max_rows);
      continue;
    }
    const int row = static_cast<int>(plan.score_rows.size());
    const std::size_t first_work = plan.work.size();
    ScoreRow sr;
    sr.seq = sl.seq;
    sr.kv_head = sl.kvh;
    sr.q_tok0 = toff[static_cast<size_t>(sl.seq)] + sl.pa;
    sr.n_q = sl.pb - sl.pa;
    sr.n_e = sl.n_e;
    plan.score_rows.push_back(sr);
    const int last_page = (b.history[static_cast<size_t>(sl.seq)] + sl.pb - 1) / kPageTokens;
    plan.topk_rows.push_back(TopkRow{sl.seq, sl.n_e, last_page + 1});
    plan.score_stride = std::max(plan.score_stride, sl.n_e);
    add_works(plan.work, b, toff, sl.seq, sl.kvh, sl.pa, sl.pb, 1, row,
              c.budget + (sl.npage - sl.n_e), sl.npage, c.max_rows);
    // the window and tail pages the top-k appends (sparse row entries K.. = block table entries n_e..)
    for (std::size_t i = first_work; i < plan.work.size(); ++i) {
      AttnWork& w = plan.work[i];
      w.n_early = w.n_pages - c.budget;
      w.early_row = sl.seq;
      w.early_col = sl.n_e;
    }
  }
  plan.score_groups = make_score_groups(plan.score_rows);
  plan.rows_per_cta = rows_per_cta_for(plan.work, b.r);
  // round the score stride up to 16 entries: rows of 16-bit score keys start on a 32-byte sector
  // (at 8 entries, every other row started mid-sector and each 32-byte quad store of score_pages
  // touched two sectors: 1.5x the L2 write sectors, session 14)
  plan.score_stride = (plan.score_stride + 15) / 16 * 16;
  return plan;
}

CisaPlan plan_dense(const StepBatch& b, int max_rows) {
  check_batch(b);
  CisaPlan plan;
  const auto toff = token_offsets(b);
  plan.total_tokens = toff.back();
  for (int s = 0; s < static_cast<int>(b.history.size()); ++s)
    for (int kvh = 0; kvh < b.kv_heads; ++kvh)
      add_works(plan.work, b, toff, s, kvh, 0, b.new_tokens[static_cast<size_t>(s)], 0, s, 0, 0, max_rows);
  plan.rows_per_cta = rows_per_cta_for(plan.work, b.r);
  return plan;
}

AttnCost attention_cost(const std::vector<AttnWork>& work, int r, int /*kv_heads*/, int rows_per_cta,
                        int num_splits) {
  AttnCost c;
  const double row_bytes = kHeadDim * 2.0;
  for (const auto& w : work) {
    const double rows = static_cast<double>(w.n_pos) * r;
    // tokens actually visible (the causal tail counted by its visible keys for useful FLOPs)
    const double tokens_read = static_cast<double>(w.n_pages) * kPageTokens;
    const double kv = tokens_read * row_bytes * 2.0;
    c.kv_bytes += kv;
    c.bytes += kv + static_cast<double>(w.n_pages) * 4.0 + rows * row_bytes * 2.0;  // ids, Q, O
    double useful_tokens = 0;
    for (int p = 0; p < w.n_pos; ++p) {
      const double visible_masked =
          std::max(0.0, std::min(static_cast<double>(w.n_pages - w.mask_from) * kPageTokens,
                                 static_cast<double>(w.q_pos0 + p - w.mask_tok0 + 1)));
      useful_tokens += static_cast<double>(w.mask_from) * kPageTokens + visible_masked;
    }
    c.flops_useful += 4.0 * kHeadDim * useful_tokens * r;
    c.flops_issued += 4.0 * kHeadDim * tokens_read * rows_per_cta;
  }
  if (num_splits > 1) {
    // partial O (fp32) + lse written and read back by the combine
    double rows_total = 0;
    for (const auto& w : work) rows_total += static_cast<double>(w.n_pos) * r;
    c.bytes += 2.0 * rows_total * num_splits * (kHeadDim * 4.0 + 4.0);
  }
  return c;
}

}  // namespace cisa::kernels
