#include "design/design.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cisa::design {

PlanScope parse_plan_scope(const std::string& s) {
  if (s == "head") return PlanScope::head;
  if (s == "kv_group") return PlanScope::kv_group;
  throw std::invalid_argument("'" + s + "' is not a plan scope (head, kv_group)");
}

IndexerKind parse_indexer_kind(const std::string& s) {
  if (s == "representatives") return IndexerKind::representatives;
  if (s == "index_keys") return IndexerKind::index_keys;
  if (s == "branch_scores") return IndexerKind::branch_scores;
  throw std::invalid_argument("'" + s +
                              "' is not an indexer (representatives, index_keys, branch_scores)");
}

std::string to_string(PlanScope s) {
  return s == PlanScope::head ? "head" : "kv_group";
}

std::string to_string(IndexerKind k) {
  switch (k) {
    case IndexerKind::representatives:
      return "representatives";
    case IndexerKind::index_keys:
      return "index_keys";
    case IndexerKind::branch_scores:
      return "branch_scores";
  }
  return "?";
}

double DesignBytes::total() const {
  return kv_selected + kv_fixed + index_read + index_write + scores + ids + qo + branch + partials +
         other;
}

Resolved resolve(const Design& d, const Geometry& geo, const CisaConfig& cfg, int qshare_g,
                 bool equal_budget) {
  Resolved r;
  r.d = d;
  r.unit = d.unit_tokens > 0 ? d.unit_tokens : cfg.chunk_tokens;
  r.plan_positions = d.plan_positions > 0 ? d.plan_positions : std::max(1, qshare_g);
  r.d.index_dim = d.index_dim > 0 ? d.index_dim : geo.head_dim;
  if (d.window_tokens < 0)
    r.d.window_tokens = static_cast<std::int64_t>(cfg.window_pages) * cfg.chunk_tokens;
  const std::int64_t budget = (equal_budget || d.budget_tokens <= 0)
                                  ? cfg.budget_chunks * cfg.chunk_tokens
                                  : d.budget_tokens;
  if (budget % r.unit != 0)
    throw std::invalid_argument("budget_tokens: " + std::to_string(budget) +
                                " is not a multiple of unit_tokens " + std::to_string(r.unit));
  r.budget_units = budget / r.unit;
  r.d.budget_tokens = budget;
  const std::int64_t fixed = r.d.window_tokens + d.sink_tokens;
  r.fixed_units = (fixed + r.unit - 1) / r.unit;
  const int heads = geo.heads_per_group();
  r.heads_per_plan = d.plan_scope == PlanScope::head ? 1 : heads;
  r.plans_per_step = d.plan_scope == PlanScope::head ? heads : 1;
  return r;
}

namespace {

double ceil_div(double a, double b) {
  return std::ceil(a / b);
}

// Work items of `rows` rows streaming `tokens` tokens each into kernel `k`.
void add_attention(KernelCost& k, double rows, double tokens, int head_dim, double chunk,
                   const KernelShape& sh) {
  const double items = ceil_div(rows, sh.attention_tile_rows);
  const int tile =
      attention_tile_for(static_cast<int>(std::min<double>(rows, sh.attention_tile_rows)), sh);
  k.flops_issued += 4.0 * head_dim * tokens * tile * items;
  k.flops_useful += 4.0 * head_dim * tokens * rows;
  k.ctas += items;
  k.page_visits += items * ceil_div(tokens, chunk);
  k.tile_rows = std::max(k.tile_rows, tile);
}

// Split-KV when the grid is short of SMs: pieces of >= split_min_tokens, fp32 partials + LSE
// written and read back. Returns the partial bytes of one sequence-group (already in `k`'s scale).
double split_kv(KernelCost& k, double mult, double rows, double tokens_per_item, int head_dim,
                const KernelShape& sh) {
  const double grid = k.ctas * mult;
  if (grid <= 0 || grid >= 0.8 * sh.sms) return 0.0;
  const double most = std::max(1.0, std::floor(tokens_per_item / sh.split_min_tokens));
  const double splits = std::min(most, std::ceil(0.8 * sh.sms / grid));
  if (splits <= 1) return 0.0;
  const double bytes = k.ctas * splits * rows * (head_dim + 1) * 4.0 * 2.0;
  k.ctas *= splits;
  k.launches += 1;  // combine
  return bytes;
}

struct Step {
  DesignBytes bytes, dense_bytes;
  KernelCost attention, dense, scoring, topk, other;
  double plans = 0, scored = 0, items = 0, scan_ctas = 0, dense_path_bytes = 0, flops_scoring = 0,
         flops_other = 0;
};

// The dense kernel over positions [start, start + positions): work items of M/r positions x r
// heads, each streaming `tokens(last position)` tokens. Returns the K/V bytes; adds to `k`.
template <typename Tokens>
double dense_pass(KernelCost& k, double& table_bytes, const Geometry& geo, double vec, double chunk,
                  std::int64_t start, std::int64_t positions, const KernelShape& sh,
                  Tokens tokens) {
  const int heads = geo.heads_per_group();
  const std::int64_t per_item = std::max(1, sh.attention_tile_rows / std::max(1, heads));
  double bytes = 0;
  for (std::int64_t first = start; first < start + positions; first += per_item) {
    const std::int64_t last = std::min(start + positions, first + per_item) - 1;
    const double n = tokens(last);
    const double rows = static_cast<double>(last - first + 1) * heads;
    bytes += vec * n * ceil_div(rows, sh.attention_tile_rows);
    table_bytes += 4.0 * ceil_div(n, chunk);
    add_attention(k, rows, n, geo.head_dim, chunk, sh);
  }
  return bytes;
}

// One forward of `positions` positions from `start`, for one (sequence, KV group).
Step step_cost(const Resolved& r, const Geometry& geo, const CisaConfig& cfg, std::int64_t start,
               std::int64_t positions, const KernelShape& sh) {
  Step s;
  const Design& d = r.d;
  const int hd = geo.head_dim, heads = geo.heads_per_group();
  const double vec = 2.0 * hd * dtype_bytes(cfg.kv_dtype);  // K + V of one token
  const double ib = d.index_dim * d.index_elem_bytes + d.index_scale_bytes;
  const double c = cfg.chunk_tokens, u = r.unit;
  const auto history = [](std::int64_t last) { return static_cast<double>(last + 1); };
  const auto eligible_at = [&](std::int64_t last) {
    return std::max<std::int64_t>(0, (last + 1) / r.unit - r.fixed_units);
  };
  // The dense baseline.
  s.dense_bytes.kv_fixed =
      dense_pass(s.dense, s.dense_bytes.ids, geo, vec, c, start, positions, sh, history);
  s.dense_bytes.qo = 2.0 * heads * static_cast<double>(positions) * hd * 2.0;
  s.bytes.qo = s.dense_bytes.qo;
  if (eligible_at(start + positions - 1) <=
      r.budget_units) {  // the budget covers the history: dense
    s.attention = s.dense;
    s.bytes.kv_fixed = s.dense_bytes.kv_fixed;
    s.bytes.ids = s.dense_bytes.ids;
    s.dense_path_bytes = s.bytes.kv_fixed;
  } else {
    // Scoring stacks score_tile_rows plans of a sequence and group; a tile scans its longest index.
    const std::int64_t stack = std::max(1, sh.score_tile_rows);
    // A scoring CTA takes score_pages_per_tile units per step for score_tiles_per_cta steps.
    const double scan_per_cta =
        std::max(1, sh.score_pages_per_tile) * std::max(1, sh.score_tiles_per_cta);
    std::int64_t in_tile = 0;
    double tile_ne = 0;
    for (std::int64_t first = start; first < start + positions; first += r.plan_positions) {
      const std::int64_t last = std::min(start + positions, first + r.plan_positions) - 1;
      const double npos = static_cast<double>(last - first + 1), n = history(last);
      const std::int64_t eligible = eligible_at(last);
      if (eligible <=
          r.budget_units) {  // an early plan group: one read of its history for every head
        s.bytes.kv_fixed += vec * n;
        s.dense_path_bytes += vec * n;
        s.bytes.ids += 4.0 * ceil_div(n, c);
        add_attention(s.attention, npos * heads, n, hd, c, sh);
        continue;
      }
      const double full = static_cast<double>((last + 1) / r.unit) * u;
      const double sel = static_cast<double>(r.budget_units) * u;
      const double fixed = static_cast<double>(r.fixed_units) * u + (d.tail ? n - full : 0.0);
      const double ne = static_cast<double>(eligible);
      for (int p = 0; p < r.plans_per_step; ++p) {
        s.bytes.kv_selected += vec * sel;
        s.bytes.kv_fixed += vec * fixed;
        if (d.indexer != IndexerKind::branch_scores)
          s.flops_scoring += 2.0 * d.index_dim * d.index_vectors * ne * d.index_query_heads;
        tile_ne = std::max(tile_ne, ne);
        if (++in_tile == stack) {
          s.bytes.index_read += tile_ne * d.index_vectors * ib;
          s.scan_ctas += ceil_div(tile_ne, scan_per_cta);
          in_tile = 0;
          tile_ne = 0;
        }
        s.bytes.scores += 2.0 * sh.score_bytes * ne;
        s.bytes.ids += 8.0 * static_cast<double>(r.budget_units) +
                       4.0 * (static_cast<double>(r.fixed_units) + 1.0);
        add_attention(s.attention, npos * r.heads_per_plan, sel + fixed, hd, c, sh);
        if (r.unit_visits && r.unit < c)  // one visit per selected unit instead of per c tokens
          s.attention.page_visits += ceil_div(npos * r.heads_per_plan, sh.attention_tile_rows) *
                                     (static_cast<double>(r.budget_units) - ceil_div(sel, c));
        s.plans += 1;
        s.scored += ne;
      }
    }
    if (in_tile > 0) {
      s.bytes.index_read += tile_ne * d.index_vectors * ib;
      s.scan_ctas += ceil_div(tile_ne, scan_per_cta);
    }
    if (d.indexer == IndexerKind::branch_scores) s.bytes.index_read = 0;
    // The compressed branch: a dense attention over the compressed K/V, tiled like the dense
    // kernel.
    if (d.compressed_stride > 0) {
      const auto compressed = [&](std::int64_t last) {
        return std::floor(history(last) / d.compressed_stride);
      };
      double tables = 0;
      s.bytes.branch =
          dense_pass(s.attention, tables, geo, vec, c, start, positions, sh, compressed);
    }
  }
  s.items = s.attention.ctas;
  // Index maintenance for what this forward adds, and the index projection.
  const double end = static_cast<double>(start + positions), beg = static_cast<double>(start);
  if (d.indexer == IndexerKind::representatives)
    s.bytes.index_write += (std::floor(end / u) - std::floor(beg / u)) * d.index_vectors * ib;
  if (d.indexer == IndexerKind::index_keys)
    s.bytes.index_write += static_cast<double>(positions) * d.index_vectors * ib;
  if (d.compressed_stride > 0)
    s.bytes.index_write +=
        (std::floor(end / d.compressed_stride) - std::floor(beg / d.compressed_stride)) * vec;
  if (d.projection_dims > 0) {
    s.bytes.other +=
        2.0 * geo.hidden * static_cast<double>(positions);  // x_t read (weights: add_forward)
    s.flops_other += 2.0 * geo.hidden * d.projection_dims * static_cast<double>(positions);
  }
  return s;
}

void scale(KernelCost& k, double m) {
  k.dram_bytes *= m;
  k.dram_write_bytes *= m;
  k.l2_bytes *= m;
  k.flops_issued *= m;
  k.flops_useful *= m;
  k.ctas *= m;
  k.page_visits *= m;
}

void add_bytes(DesignBytes& a, const DesignBytes& b, double m) {
  a.kv_selected += m * b.kv_selected;
  a.kv_fixed += m * b.kv_fixed;
  a.index_read += m * b.index_read;
  a.index_write += m * b.index_write;
  a.scores += m * b.scores;
  a.ids += m * b.ids;
  a.qo += m * b.qo;
  a.branch += m * b.branch;
  a.partials += m * b.partials;
  a.other += m * b.other;
}

// One forward for the whole batch and every KV group: kernel classes in the roofline's shape.
void add_forward(DesignCost& out, const Resolved& r, const Geometry& geo, const CisaConfig& cfg,
                 std::int64_t start, std::int64_t positions, int batch, const KernelShape& sh) {
  Step s = step_cost(r, geo, cfg, start, positions, sh);
  const double m = static_cast<double>(batch) * geo.kv_heads;
  const double vec = 2.0 * geo.head_dim * dtype_bytes(cfg.kv_dtype);
  const double dense_rows = std::min<double>(sh.attention_tile_rows, geo.heads_per_group());
  const double dense_tok = s.dense.ctas > 0 ? s.dense_bytes.kv_fixed / vec / s.dense.ctas : 0;
  const bool sparse = s.plans > 0;
  const double rows =
      sparse ? static_cast<double>(r.plan_positions) * r.heads_per_plan : dense_rows;
  const double tok = !sparse       ? dense_tok
                     : s.items > 0 ? (s.bytes.kv_selected + s.bytes.kv_fixed) / vec / s.items
                                   : 0;
  s.bytes.partials = split_kv(s.attention, m, rows, tok, geo.head_dim, sh);
  s.dense_bytes.partials = split_kv(s.dense, m, dense_rows, dense_tok, geo.head_dim, sh);
  // The index projection's weights (one per KV group) are read once per forward, not per sequence.
  s.bytes.other += 2.0 * geo.hidden * r.d.projection_dims / static_cast<double>(batch);
  const DesignBytes& b = s.bytes;
  KernelCost& a = s.attention;
  const double ids_out =
      4.0 * static_cast<double>(r.budget_units) * s.plans;  // top-k writes, attention reads
  a.dram_bytes = b.kv_selected + b.kv_fixed + b.branch + b.qo + b.partials + (b.ids - ids_out);
  a.dram_write_bytes = 0.5 * b.qo + 0.5 * b.partials;
  // Reads at the dense streaming rate: the dense path's K/V, or everything when no plan is sparse.
  const double dense_reads = s.plans > 0 ? s.dense_path_bytes : a.dram_bytes - a.dram_write_bytes;
  a.launches += 1 + (r.d.compressed_stride > 0 && sparse ? 1 : 0);
  KernelCost& dn = s.dense;
  dn.dram_bytes =
      s.dense_bytes.kv_fixed + s.dense_bytes.qo + s.dense_bytes.partials + s.dense_bytes.ids;
  dn.dram_write_bytes = 0.5 * s.dense_bytes.qo + 0.5 * s.dense_bytes.partials;
  dn.launches += 1;
  KernelCost sc, tk, st, ot;
  if (sparse) {
    sc.dram_bytes = b.index_read + 0.5 * b.scores;
    sc.dram_write_bytes = 0.5 * b.scores;
    sc.flops_issued = sc.flops_useful = s.flops_scoring;
    sc.ctas = std::max(s.scan_ctas, s.plans);
    sc.launches = 1;
    tk.dram_bytes = 0.5 * b.scores + ids_out;
    tk.dram_write_bytes = ids_out;
    tk.ctas = s.plans;
    tk.launches = 1;
    st.launches = 1;
  }
  ot.dram_bytes = b.index_write + b.other;
  ot.dram_write_bytes = b.index_write;
  ot.flops_issued = ot.flops_useful = s.flops_other;
  ot.ctas = sh.sms;  // a projection GEMM and a streaming write fill the GPU
  ot.launches = (b.index_write + b.other) > 0 ? 1 : 0;
  for (KernelCost* k : {&a, &dn, &sc, &tk, &ot}) {
    const double launches = k->launches;
    scale(*k, m);
    k->launches = launches;
  }
  ForwardCost& f = out.forward;
  f.attention_cisa.add(a);
  f.attention_dense.add(dn);
  f.scoring.add(sc);
  f.topk.add(tk);
  f.setup.add(st);
  f.other.add(ot);
  f.topk_rows += m * s.plans;
  f.eligible_chunks_sum += m * s.scored;
  f.setup_h2d_bytes +=
      sparse ? descriptor_blob_bytes(m * s.plans, m * std::ceil(static_cast<double>(s.plans) / 128.0), m * s.items) : 0.0;
  f.cisa_dense_prefix_bytes += m * dense_reads;
  add_bytes(out.bytes, b, m);
  add_bytes(out.dense_bytes, s.dense_bytes, m);
  out.plans += m * s.plans;
  out.scored_units += m * s.scored;
  out.flops_attention += a.flops_useful;  // a is scaled above
  out.flops_scoring += m * s.flops_scoring;
  out.flops_other += m * s.flops_other;
  out.flops_dense += dn.flops_useful;
}

}  // namespace

DesignCost design_cost(const Resolved& r, const Geometry& geo, const CisaConfig& cfg,
                       const Workload& work, const KernelShape& sh) {
  DesignCost out;
  const std::int64_t L = work.context_tokens;
  switch (work.phase) {
    case Phase::decode:
      add_forward(out, r, geo, cfg, L - 1, 1, work.batch, sh);
      out.forward.cisa_decode_kernel = true;  // one position per sequence: the decode kernels, as CISA's
      break;
    case Phase::mtp:
      add_forward(out, r, geo, cfg, L - work.mtp_tokens, work.mtp_tokens, work.batch, sh);
      break;
    case Phase::terminal_prefill: {
      const std::int64_t p = std::min<std::int64_t>(work.prefill_tokens, L);
      add_forward(out, r, geo, cfg, L - p, p, work.batch, sh);
      break;
    }
    case Phase::full_prefill:
      for (std::int64_t s = 0; s < L; s += work.prefill_tokens)
        add_forward(out, r, geo, cfg, s, std::min<std::int64_t>(work.prefill_tokens, L - s),
                    work.batch, sh);
      break;
  }
  return out;
}

DesignTimes design_times(const DesignCost& c, const KernelShape& sh, const Rates& design_rates,
                         const Rates& dense_rates) {
  DesignTimes t;
  t.design = cisa_times(c.forward, sh, design_rates);
  t.dense = dense_attention_time(c.forward, dense_rates);
  return t;
}

double design_ceiling(const Resolved& r, const Geometry& geo, const CisaConfig& cfg,
                      std::int64_t context_tokens, int plan_positions, bool ideal) {
  const double L = static_cast<double>(context_tokens);
  const double h = r.plans_per_step;
  const double B = static_cast<double>(r.budget_units) * r.unit;
  const double F = ideal ? 0.0 : static_cast<double>(r.fixed_units) * r.unit;
  if (B + F >= L) return 1.0;  // the budget covers the history: the dense path
  const double vecb = geo.head_dim * dtype_bytes(cfg.kv_dtype);
  const double ib = r.d.index_dim * r.d.index_elem_bytes + r.d.index_scale_bytes;
  const double index = r.d.indexer == IndexerKind::branch_scores
                           ? 0.0
                           : h * (L / r.unit) * r.d.index_vectors * ib / vecb / plan_positions;
  const double branch = r.d.compressed_stride > 0 ? 2.0 * L / r.d.compressed_stride : 0.0;
  return 2.0 * L / (h * 2.0 * (B + F) + index + branch);
}

}  // namespace cisa::design
