#include "cisa/point.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cisa {

namespace {
[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw std::invalid_argument(field + ": " + what);
}
}  // namespace

void validate_point(const Point& p) {
  const Geometry& g = p.geo;
  const CisaConfig& c = p.cisa;
  const Workload& w = p.work;
  if (g.q_heads < 1) bad("geometry.q_heads", "must be >= 1");
  if (g.kv_heads < 1) bad("geometry.kv_heads", "must be >= 1");
  if (g.q_heads % g.kv_heads != 0)
    bad("geometry.q_heads", "must be a multiple of kv_heads (" + std::to_string(g.q_heads) + " % " +
                                std::to_string(g.kv_heads) + " != 0): GQA groups hold whole heads");
  if (g.head_dim < 8 || g.head_dim > 1024 || g.head_dim % 8 != 0)
    bad("geometry.head_dim", "must be a multiple of 8 in [8, 1024], got " + std::to_string(g.head_dim));
  if (g.hidden < 1) bad("geometry.hidden", "must be >= 1");
  if (c.chunk_tokens < 1 || c.chunk_tokens > 4096)
    bad("cisa.chunk", "must be in [1, 4096] tokens, got " + std::to_string(c.chunk_tokens));
  if (c.window_pages < 0) bad("cisa.window", "must be >= 0 pages");
  if (c.budget_chunks < 1) bad("cisa.budget", "must be >= 1 chunk, got " + std::to_string(c.budget_chunks));
  if (c.rep_dim < 0 || c.rep_dim > 4096) bad("cisa.rep_dim", "must be in [0, 4096] (0 = head_dim)");
  if (!(c.selection_overlap >= 0.0 && c.selection_overlap <= 1.0))
    bad("cisa.selection_overlap", "must be in [0, 1]");
  if (w.context_tokens < 1 || w.context_tokens > (std::int64_t{1} << 31))
    bad("workload.context", "must be in [1, 2^31] tokens, got " + std::to_string(w.context_tokens));
  if (w.batch < 1 || w.batch > 65536) bad("workload.batch", "must be in [1, 65536]");
  const int P = positions_per_forward(w);
  if (w.phase == Phase::terminal_prefill || w.phase == Phase::full_prefill) {
    if (w.prefill_tokens < 1) bad("workload.prefill_tokens", "must be >= 1");
    if (w.phase == Phase::terminal_prefill && w.prefill_tokens > w.context_tokens)
      bad("workload.prefill_tokens", "P = " + std::to_string(w.prefill_tokens) +
                                         " exceeds the context of " + std::to_string(w.context_tokens));
    if (w.phase == Phase::full_prefill && w.context_tokens / w.prefill_tokens > 4'000'000)
      bad("workload.prefill_tokens", "too many forwards (context / P > 4e6)");
    if (c.qshare_g < 1 || c.qshare_g > w.prefill_tokens)
      bad("cisa.G", "QShare G must be in [1, P = " + std::to_string(w.prefill_tokens) + "], got " +
                        std::to_string(c.qshare_g));
  }
  if (w.phase == Phase::mtp) {
    if (w.mtp_tokens < 1 || w.mtp_tokens > 64) bad("workload.mtp_tokens", "must be in [1, 64]");
    if (w.mtp_tokens > w.context_tokens) bad("workload.mtp_tokens", "exceeds the context");
  }
  if (P < 1) bad("workload", "no positions per forward");
}

KernelShape kernel_shape(const Hardware& hw, const Rates& rates) {
  KernelShape s;
  s.attention_tile_rows = hw.attention_tile_rows;
  s.score_tile_rows = hw.score_tile_rows;
  s.score_pages_per_tile = hw.score_pages_per_tile;
  s.score_tiles_per_cta = hw.score_tiles_per_cta;
  s.topk_radix_passes = hw.topk_radix_passes;
  s.sms = rates.sms;
  s.l2_reuse = rates.l2_reuse;
  s.l2_bytes = rates.l2_bytes;
  return s;
}

Prediction predict(const Point& p, const KernelShape& shape, const Rates& rates, int radix_passes) {
  Prediction out;
  const Workload& w = p.work;
  out.qshare_g = effective_qshare(p.cisa, w);
  const std::int64_t L = w.context_tokens;
  auto run = [&](std::int64_t start, std::int64_t n) {
    const ForwardCost f = forward_cost(p.geo, p.cisa, out.qshare_g, start, n, w.batch, shape);
    const ForwardTimes t = forward_times(f, radix_passes, rates);
    if (out.forwards == 0) {  // single-forward phases: no summing
      out.cost = f;
      out.dense = t.dense;
      out.cisa = t.cisa;
      out.dense_peer_attention = t.dense_peer_attention;
    } else {
      out.cost.add(f);
      out.dense.add(t.dense);
      out.cisa.add(t.cisa);
      out.dense_peer_attention += t.dense_peer_attention;
    }
    out.forwards += 1;
  };
  switch (w.phase) {
    case Phase::terminal_prefill: run(L - w.prefill_tokens, w.prefill_tokens); break;
    case Phase::decode: run(L - 1, 1); break;
    case Phase::mtp: run(L - w.mtp_tokens, w.mtp_tokens); break;
    case Phase::full_prefill:
      for (std::int64_t s = 0; s < L; s += w.prefill_tokens) run(s, std::min<std::int64_t>(w.prefill_tokens, L - s));
      break;
  }
  CeilingInput ci{L, p.cisa.budget_chunks, p.cisa.qshare_g, p.cisa.chunk_tokens, p.cisa.window_pages};
  out.ceilings = compute_ceilings(ci);
  return out;
}

}  // namespace cisa
