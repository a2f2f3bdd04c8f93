#include "design/design_eval.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "cisa/errors.hpp"
#include "model/pricing.hpp"
#include "cisa/scenario.hpp"

namespace cisa::design {

namespace {

struct Columns {
  explicit Columns(Table& t)
      : run(t.add_text("run", "run scenario supplying the point")),
        model(t.add_text("model", "model preset")),
        hardware(t.add_text("hardware", "GPU preset")),
        impl(t.add_text("cisa_impl", "implementation profile pricing the design's kernels")),
        dense_impl(t.add_text("dense_impl",
                              "implementation profile of the dense baseline (fastest candidate)")),
        phase(t.add_text("phase", "workload phase")),
        design(t.add_text("design", "design name (models/design/)")),
        plan_scope(t.add_text("plan_scope", "one plan per query head or per KV group")),
        heads(t.add_i64("heads_per_group", "heads", "r: query heads per KV group")),
        context(t.add_i64("context_tokens", "tokens", "L: history length")),
        batch(t.add_i64("batch", "sequences", "sequences per forward")),
        budget_chunks(t.add_i64("budget_chunks", "chunks",
                                "scenario K (equal budgets: K x c tokens per design)")),
        unit(t.add_i64("unit_tokens", "tokens", "selection granularity")),
        plan_positions(
            t.add_i64("plan_positions", "positions", "consecutive positions sharing one plan")),
        budget_tokens(t.add_i64("budget_tokens", "tokens",
                                "selected tokens per plan beyond the fixed parts")),
        plans(t.add_f64("plans", "plans", "selections on the sparse path, whole batch")),
        b_sel(t.add_f64("bytes_kv_selected", "B", "time view: selected units' K and V")),
        b_fix(
            t.add_f64("bytes_kv_fixed", "B", "time view: window, sink, tail, dense-path K and V")),
        b_ir(t.add_f64("bytes_index_read", "B", "time view: representatives / index keys scanned")),
        b_iw(t.add_f64("bytes_index_write", "B",
                       "time view: representatives, index-key cache, compressed K/V written")),
        b_sc(t.add_f64("bytes_scores", "B", "time view: scores written and read by top-k")),
        b_ids(
            t.add_f64("bytes_ids", "B", "time view: selected IDs written and read; block tables")),
        b_qo(t.add_f64("bytes_qo", "B", "time view: Q read, O written")),
        b_br(t.add_f64("bytes_branch", "B", "time view: compressed-branch K/V read")),
        b_part(t.add_f64("bytes_partials", "B", "time view: split-KV partials written and read")),
        b_oth(t.add_f64("bytes_other", "B", "time view: index projection weights and activations")),
        b_tot(t.add_f64("bytes_total", "B", "time view: sum of the categories")),
        b_dense(t.add_f64("bytes_dense_total", "B", "time view: the dense baseline's bytes")),
        f_att(t.add_f64("flops_attention", "FLOP", "useful attention FLOPs (with branches)")),
        f_sc(t.add_f64("flops_scoring", "FLOP", "indexer dot products")),
        f_oth(t.add_f64("flops_other", "FLOP", "index projection")),
        f_dense(t.add_f64("flops_dense", "FLOP", "useful dense attention FLOPs")),
        ms_att(t.add_f64("pred_ms_attention", "ms",
                         "design attention (+ branches, split-KV combine)")),
        ms_sc(t.add_f64("pred_ms_scoring", "ms", "indexer / scoring")),
        ms_tk(t.add_f64("pred_ms_topk", "ms", "top-k")),
        ms_setup(t.add_f64("pred_ms_setup", "ms", "setup: descriptors host -> device")),
        ms_oth(t.add_f64("pred_ms_other", "ms", "index projection and index writes")),
        ms_busy(t.add_f64("pred_ms_busy", "ms", "sum of the design's components")),
        ms_busy_lo(
            t.add_f64("pred_ms_busy_lo", "ms", "busy at the fast end of every figure's band")),
        ms_busy_hi(
            t.add_f64("pred_ms_busy_hi", "ms", "busy at the slow end of every figure's band")),
        ms_dense(t.add_f64("pred_ms_dense", "ms", "dense attention of the baseline")),
        sp(t.add_f64("pred_speedup_busy", "x", "dense attention / design busy")),
        sp_lo(t.add_f64("pred_speedup_busy_lo", "x", "fast dense end / slow design end")),
        sp_hi(t.add_f64("pred_speedup_busy_hi", "x", "slow dense end / fast design end")),
        ceil_ideal(t.add_f64("ceiling_ideal", "x",
                             "ceiling view: 2L / (h 2B + h (L/u) v b_i/(d b_kv) / Gp + 2L/s)")),
        ceil_fixed(t.add_f64("ceiling_fixed", "x",
                             "ceiling view: the same with the fixed parts F added to B")) {}
  std::vector<std::string>&run, &model, &hardware, &impl, &dense_impl, &phase, &design, &plan_scope;
  std::vector<std::int64_t>&heads, &context, &batch, &budget_chunks, &unit, &plan_positions,
      &budget_tokens;
  std::vector<double>&plans, &b_sel, &b_fix, &b_ir, &b_iw, &b_sc, &b_ids, &b_qo, &b_br, &b_part,
      &b_oth, &b_tot, &b_dense, &f_att, &f_sc, &f_oth, &f_dense, &ms_att, &ms_sc, &ms_tk, &ms_setup,
      &ms_oth, &ms_busy, &ms_busy_lo, &ms_busy_hi, &ms_dense, &sp, &sp_lo, &sp_hi, &ceil_ideal,
      &ceil_fixed;
};

// The fastest dense candidate at bound b, and its time.
double best_dense(const PointPricing& pr, const DesignCost& c, int b, std::string* name) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& cand : pr.dense) {
    const double t = dense_attention_time(c.forward, cand[b].rates);
    if (t < best) {
      best = t;
      if (name) *name = cand[b].impl;
    }
  }
  return best;
}

void add_row(Columns& col, const std::string& run, const Point& p, const PointPricing& pr,
             const Design& d, bool equal_budget) {
  PricedDesign pd;
  try {
    pd = price_design(p, pr, d, equal_budget);
  } catch (const std::invalid_argument& e) {
    throw InputError("design '" + d.name + "' at run " + run + ": " + e.what());
  }
  const Resolved& r = pd.r;
  const DesignCost* cost = pd.cost;
  double busy[3], dense[3];
  std::string dense_name;
  for (int b = 0; b < 3; ++b) {
    busy[b] = pd.times[b].busy();
    dense[b] = best_dense(pr, cost[b], b, b == 1 ? &dense_name : nullptr);
  }
  const DesignCost& c = cost[1];
  const ComponentTimes& t = pd.times[1];
  col.run.push_back(run);
  col.model.push_back(p.model);
  col.hardware.push_back(p.hardware);
  col.impl.push_back(pr.cisa[1].impl);
  col.dense_impl.push_back(dense_name);
  col.phase.push_back(to_string(p.work.phase));
  col.design.push_back(d.name);
  col.plan_scope.push_back(to_string(d.plan_scope));
  col.heads.push_back(p.geo.heads_per_group());
  col.context.push_back(p.work.context_tokens);
  col.batch.push_back(p.work.batch);
  col.budget_chunks.push_back(p.cisa.budget_chunks);
  col.unit.push_back(r.unit);
  col.plan_positions.push_back(r.plan_positions);
  col.budget_tokens.push_back(r.d.budget_tokens);
  col.plans.push_back(c.plans);
  const DesignBytes& y = c.bytes;
  col.b_sel.push_back(y.kv_selected);
  col.b_fix.push_back(y.kv_fixed);
  col.b_ir.push_back(y.index_read);
  col.b_iw.push_back(y.index_write);
  col.b_sc.push_back(y.scores);
  col.b_ids.push_back(y.ids);
  col.b_qo.push_back(y.qo);
  col.b_br.push_back(y.branch);
  col.b_part.push_back(y.partials);
  col.b_oth.push_back(y.other);
  col.b_tot.push_back(y.total());
  col.b_dense.push_back(c.dense_bytes.total());
  col.f_att.push_back(c.flops_attention);
  col.f_sc.push_back(c.flops_scoring);
  col.f_oth.push_back(c.flops_other);
  col.f_dense.push_back(c.flops_dense);
  col.ms_att.push_back(1e3 * t.attention);
  col.ms_sc.push_back(1e3 * t.scoring);
  col.ms_tk.push_back(1e3 * t.topk);
  col.ms_setup.push_back(1e3 * t.setup);
  col.ms_oth.push_back(1e3 * t.other);
  col.ms_busy.push_back(1e3 * busy[1]);
  col.ms_busy_lo.push_back(1e3 * busy[0]);
  col.ms_busy_hi.push_back(1e3 * busy[2]);
  col.ms_dense.push_back(1e3 * dense[1]);
  col.sp.push_back(dense[1] / busy[1]);
  col.sp_lo.push_back(dense[0] / busy[2]);
  col.sp_hi.push_back(dense[2] / busy[0]);
  col.ceil_ideal.push_back(
      design_ceiling(r, p.geo, p.cisa, p.work.context_tokens, r.plan_positions, true));
  col.ceil_fixed.push_back(
      design_ceiling(r, p.geo, p.cisa, p.work.context_tokens, r.plan_positions, false));
}

}  // namespace

PricedDesign price_design(const Point& p, const PointPricing& pr, const Design& d, bool equal_budget) {
  PricedDesign out;
  out.r = resolve(d, p.geo, p.cisa, effective_qshare(p.cisa, p.work), equal_budget);
  for (int b = 0; b < 3; ++b) {
    const Pricing& pc = pr.cisa[b];
    out.r.unit_visits = b == 2;  // a token gather: one page visit per token at the slow end (EST)
    out.cost[b] = design_cost(out.r, p.geo, p.cisa, p.work, pc.shape);
    out.times[b] = cisa_times(out.cost[b].forward, pc.shape, pc.rates);
  }
  out.r.unit_visits = false;
  return out;
}

Prediction predict_design(const Point& p, const PointPricing& pr, const Design& d, bool equal_budget) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  Prediction out = predict(p, pr);  // the dense side; the CISA side is replaced below
  const PricedDesign pd = price_design(p, pr, d, equal_budget);
  const DesignCost& c = pd.cost[1];
  const ForwardCost& g = c.forward;
  ForwardCost& f = out.cost;
  out.design = d.name;
  f.attention_cisa = g.attention_cisa;
  f.scoring = g.scoring;
  f.topk = g.topk;
  f.setup = g.setup;
  f.other = g.other;
  const DesignBytes& y = c.bytes;
  f.bytes_cisa.kv = y.kv_selected + y.kv_fixed + y.branch;  // every K/V read, the branch's too
  f.bytes_cisa.rep = y.index_read;
  f.bytes_cisa.meta = y.scores + y.ids;
  f.bytes_cisa.qo = y.qo;
  f.bytes_cisa.partials = y.partials;
  f.bytes_cisa.other = y.index_write + y.other;
  f.l2_kv_cisa = f.l2_rep = kNaN;
  f.selections = c.plans;
  f.topk_rows = g.topk_rows;
  f.eligible_chunks_sum = g.eligible_chunks_sum;  // in the design's units
  f.splits_cisa = kNaN;
  f.sparse_positions = f.dense_positions = kNaN;
  f.setup_h2d_bytes = g.setup_h2d_bytes;
  f.cisa_dense_prefix_bytes = g.cisa_dense_prefix_bytes;
  out.cisa = pd.times[1];
  out.cisa_lo = pd.times[0];
  out.cisa_hi = pd.times[2];
  // Ceilings: the design's closed forms (design_ceiling) where one exists.
  const Resolved& r = pd.r;
  const std::int64_t L = p.work.context_tokens;
  Ceilings& ce = out.ceilings;
  ce.nominal_compression = static_cast<double>(L) / static_cast<double>(r.d.budget_tokens);
  ce.ceiling_near_end_prefill = design_ceiling(r, p.geo, p.cisa, L, r.plan_positions, true);
  ce.ceiling_full_prefill = kNaN;
  ce.ceiling_decode = design_ceiling(r, p.geo, p.cisa, L, 1, true);
  ce.window_kv_only = kNaN;
  ce.window_near_end_prefill = design_ceiling(r, p.geo, p.cisa, L, r.plan_positions, false);
  ce.window_decode = design_ceiling(r, p.geo, p.cisa, L, 1, false);
  return out;
}

Table evaluate_designs(const DesignScenario& sc) {
  Table t;
  Columns col(t);
  for (const auto& run : sc.runs) {
    const Scenario s = load_scenario(run.scenario, run.sets);
    Pricer pricer(s.cards, s.impls, s.basis);
    for (const Point& p : s.points) {
      const PointPricing& pr = pricer.for_point(p);
      for (const Design& d : sc.designs) add_row(col, s.name, p, pr, d, sc.equal_budget);
    }
  }
  return t;
}

}  // namespace cisa::design
