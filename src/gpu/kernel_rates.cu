// `calibrate`'s kernel-class rates: this project's kernels timed at reference shapes (attention
// MMA rate and page-visit time per tile class, per-class floors, setup copy, top-k and scoring
// rates), with the byte and row counts the model assigns to the same shapes.
#include "gpu/kernel_rates.hpp"
#include "gpu/synthetic.cuh"
#include "model/decode_attention_fit.hpp"
#include "model/roofline.hpp"
#include "model/scoring_fit.hpp"
#include "model/setup_fit.hpp"
#include "model/topk_fit.hpp"
#include "model/traffic.hpp"

namespace cisa::gpu {

namespace {

std::string fmt_scoring(double ms1, double r1, double w1, double ms2, double r2, double w2) {
  char buf[400];
  std::snprintf(
      buf, sizeof buf,
      "cisa_kernels scoring in the step: decode 64 x 1M, K=4,096 (%.3f ms; model DRAM "
      "read %.3g B, write %.3g B) and "
      "prefill 4 x (1M - 512 + 512), G=1 (%.3f ms; read %.3g B, write %.3g B); t - floor = "
      "R/read_bw + W/write_bw solved",
      ms1, r1, w1, ms2, r2, w2);
  return buf;
}

// One CISA step of B sequences (one KV head, r = 4) at `hist` cached tokens + P new positions,
// for the calibration's pipeline shapes: scoring then top-k, as in the step (no flush between).
struct PipelineShape {
  int B, P, G, K, W;
  std::int64_t hist;
  int r = 4;
  int kv = 1;  // KV heads (the world must hold as many)
};

struct PipelineTimes {
  double scoring_ms = 0, topk_ms = 0, attention_ms = 0, setup_ms = 0, other_ms = 0;
  int attention_launches = 0;
  double page_visits = 0, attention_ctas = 0;  // from the plan: sum of work items' page lists
  double setup_blob_bytes = 0;                 // the descriptor copy the kernels made
  ForwardCost model;  // the model's costs of this shape (bytes split, rows, elements)
};

// Every step's setup copy (its blob bytes and time) goes to `setups`: the setup latency is fitted
// over all of calibrate's step shapes.
PipelineTimes time_pipeline(const PipelineShape& ps, World& w, Timer& timer, int sms,
                            const KernelShape& model_shape, int reps,
                            std::vector<PipelineTimes>& setups) {
  const int r = ps.r, kv = ps.kv;
  if (w.kv.kv_heads != kv) throw std::logic_error("time_pipeline: the world holds another KV head count");
  const K::StepBatch b{std::vector<int>(ps.B, static_cast<int>(ps.hist)),
                       std::vector<int>(ps.B, ps.P), kv, r};
  const K::CisaPlan plan = K::plan_cisa_step(b, K::StepConfig{ps.W, ps.K, ps.G});
  K::CisaStep step(plan, kv, r, sms);
  Dev<K::bf16_bits> q(std::size_t(plan.total_tokens) * kv * r * 128), o(q.n),
      iq(std::size_t(plan.total_tokens) * kv * 128);
  fill(q.p, q.n, 41);
  fill(iq.p, iq.n, 43, 0.5f);
  // The index projection and representative update run before the step, as in a forward and in
  // --measure (the descriptor copy queues behind them).
  Point pt;
  pt.geo.q_heads = r * kv;
  pt.geo.kv_heads = kv;
  pt.geo.head_dim = 128;
  pt.geo.hidden = 4096;
  pt.cisa.window_pages = ps.W;
  pt.cisa.budget_chunks = ps.K;
  pt.cisa.qshare_g = ps.G;
  pt.work.phase = ps.P > 1 ? Phase::terminal_prefill : Phase::decode;
  pt.work.context_tokens = ps.hist + ps.P;
  pt.work.batch = ps.B;
  pt.work.prefill_tokens = ps.P;
  OtherWork other(pt, plan, w);
  auto run = [&](K::Instrument* ins) {
    other.run(w, ins);
    step.upload(nullptr,
                ins);  // setup: the descriptor copy, per step as in --measure and the model
    step.run(q.p, iq.p, o.p, w.kv, w.reps->p, w.bt, nullptr, ins);
  };
  PipelineTimes t;
  for (const auto& wk : plan.work) t.page_visits += wk.n_pages;
  t.attention_ctas = static_cast<double>(plan.work.size()) * step.num_splits();
  {
    K::Instrument ins;
    run(&ins);
    for (const auto& rec : ins.collect()) {
      if (rec.component == K::Component::attention) ++t.attention_launches;
      if (rec.component == K::Component::setup) t.setup_blob_bytes += rec.bytes;
    }
  }
  auto c = timer.components(run, reps);
  t.scoring_ms = c["scoring"];
  t.topk_ms = c["topk"];
  t.attention_ms = c["attention"];
  t.setup_ms = c["setup"];
  t.other_ms = c.count("other") ? c["other"] : 0.0;
  KernelShape shape = model_shape;
  shape.sms = sms;
  t.model = forward_cost(pt.geo, pt.cisa, ps.G, ps.hist, ps.P, ps.B, shape);
  setups.push_back(t);
  return t;
}

KernelShape shape_on(KernelShape s, int sms) {
  s.sms = sms;
  return s;
}

std::string fmt_us(const std::string& before, double ms, const std::string& after) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", ms * 1e3);
  return before + buf + after;
}

}  // namespace

namespace {
// The decode step's top-k on a grid of its own (its CTAs have an SM each and read scores the GEMV
// scoring left in L2, so the prefill fit's fixed and merge terms do not carry over: NOTES session
// 8): the three L2-rate shapes and nine more, one KV head, W = 128; rows 2 to 128, N_e 4K to 64K in
// 1 to 4 CTAs per row, K 512 to 4,096; floor + cluster waves x merge + key passes / rate solved
// with the prefill fit's CTA and ID terms (fit_topk_decode).
void fit_decode_topk(std::vector<PipelineTimes>& decs, Timer& timer, int sms,
                     const KernelShape& shape, KernelRates& out,
                     std::vector<PipelineTimes>& setups) {
  const struct {
    int B, K;
    std::int64_t hist;
  } grid[] = {{8, 2048, 131072},  {8, 2048, 262144},   {8, 2048, 524288},
              {8, 4096, 1048576}, {32, 4096, 1048576}, {2, 512, 65536},
              {24, 3072, 393216}, {2, 4096, 786432},   {48, 1024, 196608}};
  for (const auto& g : grid) {
    World w(g.B, g.hist + 1, 1,
            97 + static_cast<unsigned>(g.B) + static_cast<unsigned>(g.hist >> 16));
    decs.push_back(time_pipeline({g.B, 1, 1, g.K, 128, g.hist}, w, timer, sms, shape, 15, setups));
  }
  std::vector<TopkSample> samples;
  std::string shapes;
  for (const PipelineTimes& t : decs) {
    const TopkTerms k = topk_terms(topk_work(t.model, shape_on(shape, sms)), shape);
    samples.push_back(TopkSample{k.waves, k.cluster_waves, k.key_passes, k.row_ids, t.topk_ms * 1e-3});
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%.0f rows x %.0f keys: %.1f us", shapes.empty() ? "" : "; ",
                  t.model.topk_rows, t.model.eligible_chunks_sum / t.model.topk_rows,
                  t.topk_ms * 1e3);
    shapes += buf;
  }
  const double ids_per_s = out.topk_out_ids_per_ns_per_cta * 1e9;
  const TopkFit fit = fit_topk_decode(samples, out.topk_cta_us * 1e-6, ids_per_s);
  if (fit.ok) {
    out.topk_decode_floor_us = fit.floor_s * 1e6;
    out.topk_decode_cluster_us = fit.cluster_s * 1e6;
    out.topk_decode_keys_per_ns_per_sm = fit.key_passes_per_s / 1e9;
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "%zu shapes, rms residual %.1f %%; ", samples.size(),
                100.0 * fit.rms_rel);
  out.topk_decode_method =
      "cisa_kernels steps, decode, top-k after the GEMV scoring (scores in L2), one KV head, "
      "W=128: " +
      std::string(buf) + fit.note + "; median of 15 each: " + shapes;
}
// One floor-and-rate sample per decode step for its kernel `k` (the step's model) timed as
// component `ms`: the model's read bytes, and the time less the written bytes at `write_Bps`;
// `per_launch`: the floor counts once per launch, else once a step. `shapes` lists bytes and times.
std::vector<DecodeAttentionSample> floor_rate_samples(const std::vector<PipelineTimes>& decs,
                                                      KernelCost ForwardCost::*k,
                                                      double PipelineTimes::*ms, double write_Bps,
                                                      bool per_launch, std::string& shapes) {
  std::vector<DecodeAttentionSample> v;
  for (const PipelineTimes& t : decs) {
    const KernelCost& c = t.model.*k;
    const double reads = c.dram_bytes - c.dram_write_bytes;
    v.push_back(
        {reads, per_launch ? c.launches : 1.0, t.*ms * 1e-3 - c.dram_write_bytes / write_Bps});
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%.3g B in %.1f us", shapes.empty() ? "" : "; ", reads,
                  t.*ms * 1e3);
    shapes += buf;
  }
  return v;
}

// "rms residual R % (worst W %)", and why not when the fit did not solve: the floor-and-rate fits'
// method texts.
std::string floor_rate_residuals(const DecodeAttentionFit& f) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "rms residual %.1f %% (worst %.1f %%)", 100.0 * f.rms_rel, 100.0 * f.worst_rel);
  return std::string(buf) + (f.ok ? "" : "; not solved: " + f.note);
}

// floor per launch + read bytes / gather rate over `decs` (the model's bytes; the few bytes written
// at the card's write rate taken off first), relative least squares; the method text names `what`.
DecodeAttentionFit fit_decode_attention_over(const std::vector<PipelineTimes>& decs,
                                             const Rates& card, const std::string& what,
                                             std::string& method) {
  std::string shapes;
  const std::vector<DecodeAttentionSample> v =
      floor_rate_samples(decs, &ForwardCost::attention_cisa, &PipelineTimes::attention_ms,
                         card.write_bw_Bps, true, shapes);
  const DecodeAttentionFit f = fit_decode_attention(v);
  method = "cisa_kernels steps, decode, " + what +
           ", L2 flushed: CISA attention = launches x floor + the model's read bytes / rate, relative "
           "least squares, " +
           std::to_string(v.size()) + " decode steps, " + floor_rate_residuals(f) + "; median of 15 each: " + shapes;
  return f;
}

// The decode step's CISA attention over the decode steps timed for top-k (12 shapes: 2-128
// sequences, 64K-1M tokens, K 512-4,096, r = 4: 16-row tiles).
void fit_decode_attention_of(const std::vector<PipelineTimes>& decs, const Rates& card,
                             KernelRates& out) {
  const DecodeAttentionFit f = fit_decode_attention_over(
      decs, card, "one KV head, r=4, W=128 (the decode top-k shapes)", out.attention_decode_method);
  if (f.ok) {
    out.attention_decode_floor_us = f.floor_s * 1e6;
    out.attention_decode_gather_bw_tbs = f.read_Bps / 1e12;
  }
}

// The decode step's CISA attention with 32-row tiles (r = 32, one KV head, W = 128): the kernel of
// 17-32 q heads a KV head (two warps of rows, other occupancy and split counts than the 16-row
// kernel the grid above runs). Eight steps of its own: 2-32 sequences, 128K-1M tokens, K 768-4,096.
// Their setup copies stay out of the setup fit (its shapes unchanged).
void fit_decode_attention_m32(Timer& timer, int sms, const KernelShape& shape, const Rates& card,
                              KernelRates& out) {
  const struct {
    int B, K;
    std::int64_t hist;
  } grid[] = {{2, 768, 131072},  {2, 4096, 1048576}, {3, 2048, 655360},  {4, 1536, 393216},
              {6, 3072, 786432}, {8, 1024, 262144},  {16, 2560, 524288}, {32, 1024, 131072}};
  std::vector<PipelineTimes> decs, unused_setups;
  for (const auto& g : grid) {
    World w(g.B, g.hist + 1, 1,
            131 + static_cast<unsigned>(g.B) + static_cast<unsigned>(g.hist >> 16));
    PipelineShape ps{g.B, 1, 1, g.K, 128, g.hist};
    ps.r = 32;
    decs.push_back(time_pipeline(ps, w, timer, sms, shape, 15, unused_setups));
  }
  const DecodeAttentionFit f = fit_decode_attention_over(
      decs, card, "one KV head, r=32 (32-row tiles), W=128", out.attention_decode_m32_method);
  if (f.ok) {
    out.attention_decode_m32_floor_us = f.floor_s * 1e6;
    out.attention_decode_m32_gather_bw_tbs = f.read_Bps / 1e12;
  }
}

// Setup = latency + descriptor bytes / the card's host-to-device bandwidth (card.setup_Bps: the
// 256 MiB probe; a solve of the bandwidth from two step copies swung from 48 to 32 GB/s between
// sessions while the sweeps' copies kept 55). The latency by least absolute relative deviation
// (the copies jitter upwards: least squares sat below the median copy, NOTES session 15) over every
// step calibrate timed (prefill grid, decode grid, page-visit steps), each with the index
// projection in front of its copy as in a forward; copies of at most the profile's inline size
// take the card's small-copy latency and are left out. The band is the fit's rms: one step shape
// read a latency 10-20 % off the others' in the sweeps (NOTES session 13).
void fit_setup(const std::vector<PipelineTimes>& steps, const Rates& card, KernelRates& out) {
  std::vector<SetupSample> samples;
  double lo = INFINITY, hi = 0;
  int model_differs = 0;
  std::string list;  // bytes: us, in the order timed
  for (const PipelineTimes& t : steps) {
    samples.push_back({t.setup_blob_bytes, t.setup_ms * 1e-3});
    char item[48];
    std::snprintf(item, sizeof item, "%s%.0f B: %.1f us", list.empty() ? "" : "; ",
                  t.setup_blob_bytes, t.setup_ms * 1e3);
    list += item;
    lo = std::min(lo, t.setup_blob_bytes);
    hi = std::max(hi, t.setup_blob_bytes);
    if (t.model.setup_h2d_bytes != t.setup_blob_bytes) ++model_differs;
  }
  const double bw = card.setup_Bps > 0 ? card.setup_Bps : INFINITY;
  const SetupFit f = fit_setup_latency(samples, bw, card.setup_inline_bytes);
  if (f.ok) out.setup_floor_us = f.latency_s * 1e6;
  std::vector<char> buf(600 + list.size());
  std::snprintf(buf.data(), buf.size(),
                "cisa_kernels steps with the index projection before the descriptor copy: %d "
                "steps of calibrate (blobs %.0f-%.0f B; %d of at most %.0f B left out as small "
                "copies, %d above %.0fx the form as timing artefacts; the model's blob bytes "
                "differ from the kernels' in %d), t = latency + "
                "bytes / the card's host-to-device bandwidth (%.1f GB/s) by least absolute "
                "relative deviation (measured / predicted - 1): rms %.1f %%, median %.1f %%, "
                "worst %.1f %%%s%s; median of 5-31 each: %s; the band is the rms: residual "
                "spread %.1f%%",
                f.fitted, lo, hi, f.small, card.setup_inline_bytes, f.artefacts, kArtefactFactor,
                model_differs, bw / 1e9,
                100 * f.rms_rel, 100 * f.median_rel, 100 * f.worst_rel, f.ok ? "" : "; not solved: ",
                f.note.c_str(), list.c_str(), 200 * f.rms_rel);
  out.setup_method = buf.data();
}

}  // namespace

KernelRates measure_kernel_rates(int sms, const KernelShape& shape, const Rates& card) {
  using namespace cisa;
  KernelRates out;
  Timer timer;
  std::vector<PipelineTimes> setups;  // every step timed below, for the setup latency's fit
  const int passes = shape.topk_radix_passes;
  // Attention: dense prefill, 16 sequences x (1M history + 512 new positions), r = 4, one KV head
  // (the kernel benchmark's shape): 128-row tiles are full, the work is compute-bound (~18 TFLOP).
  // Dense decode at the same history streams ~8.6 GB: its read rate (after floors, below).
  struct DenseRun {
    double ms = 0, flops = 0, launches = 0, bytes = 0;
  };
  auto dense_run = [&](int B, int P, std::int64_t hist, unsigned seed, int reps) {
    const int r = 4;
    World w(B, hist + P, 1, seed);
    const K::StepBatch b{std::vector<int>(B, static_cast<int>(hist)), std::vector<int>(B, P), 1, r};
    const K::CisaPlan plan = K::plan_dense(b);
    K::CisaStep step(plan, 1, r, sms);
    Dev<K::bf16_bits> q(std::size_t(plan.total_tokens) * r * 128), o(q.n);
    fill(q.p, q.n, 5);
    step.upload(nullptr);
    DenseRun d;
    {
      K::Instrument ins;
      step.run_attention(q.p, o.p, w.kv, w.bt, nullptr, &ins);
      for (const auto& rec : ins.collect())
        if (rec.component == K::Component::attention) {
          d.flops += rec.flops_useful;
          d.launches += 1;
        }
    }
    d.ms = timer.components(
        [&](K::Instrument* ins) { step.run_attention(q.p, o.p, w.kv, w.bt, nullptr, ins); },
        reps)["attention"];
    Geometry geo;
    geo.q_heads = r;
    geo.kv_heads = 1;
    geo.head_dim = 128;
    CisaConfig cfg;
    KernelShape sh = shape;
    sh.sms = sms;
    d.bytes = dense_forward_cost(geo, cfg, 1, hist, P, B, sh).attention_dense.dram_bytes;
    return d;
  };
  {
    const DenseRun d = dense_run(16, 512, std::int64_t(1) << 20, 77, 5);
    out.attention_tflops = d.flops / (d.ms * 1e-3) / 1e12;
    out.attention_method =
        "cisa_kernels paged_attention, dense prefill B=16, history 1M + 512 new, r=4, 1 KV head, "
        "useful FLOPs / "
        "median of 5 (L2 flushed)";
  }
  // Floors: one selection (K = 64, W = 16) of one sequence with 2,048 cached tokens: every kernel
  // does almost no work, so its event time is its fixed cost per launch.
  PipelineTimes floor_shape;
  {
    World w(1, 2048 + 1, 1, 61);
    floor_shape = time_pipeline({1, 1, 1, 64, 16, 2048}, w, timer, sms, shape, 31, setups);
    const PipelineTimes& t = floor_shape;
    out.attention_floor_us = t.attention_ms * 1e3 / std::max(1, t.attention_launches);
    out.scoring_floor_us =
        t.scoring_ms * 1e3;  // the component (sum_index_queries + score_pages) as one

    out.topk_floor_us = t.topk_ms * 1e3;  // refined with the top-k fit below
    out.setup_floor_us = t.setup_ms * 1e3;
    // Scoring: the floor shape (N_e = 112) has one CTA walking 2 tiles of 64 representatives; a
    // selection with N_e = 257 has a CTA walking 4. t = base + steps x step solves for both.
    World w4(1, 4368 + 1, 1, 63);
    const PipelineTimes t4 = time_pipeline({1, 1, 1, 64, 16, 4368}, w4, timer, sms, shape, 31, setups);
    const double step_us = (t4.scoring_ms - t.scoring_ms) * 1e3 / 2.0;
    if (step_us > 0 && t.scoring_ms * 1e3 > 2.0 * step_us) {
      out.scoring_tile_us = step_us;
      out.scoring_floor_us = t.scoring_ms * 1e3 - 2.0 * step_us;
    }

    out.floor_method =
        "cisa_kernels step of one selection (K=64, W=16, 2,048 cached tokens, decode): CUDA-event "
        "time per "
        "launch, median of 31 (L2 flushed)";
  }
  const double scoring_floor_s = out.scoring_floor_us * 1e-6;
  // Page visits: 2 sequences x (32K cached + 512 new), G = 4, K = 1,024: the 34 MB of K/V stay in
  // L2 after their first read, so the time is the kernel's per-page work for the tile class the
  // rows select (r = 4/8/16/32 -> 16/32/64/128 rows).
  {
    World w(2, 32768 + 512, 1, 73);
    const int rs[4] = {4, 8, 16, 32};
    for (int i = 0; i < 4; ++i) {
      const PipelineTimes t =
          time_pipeline({2, 512, 4, 1024, 128, 32768, rs[i]}, w, timer, sms, shape, 9, setups);
      const double waves = std::ceil(t.attention_ctas / sms);
      const double fill = t.attention_ctas / (waves * sms);
      const double busy_s =
          t.attention_ms * 1e-3 - t.attention_launches * out.attention_floor_us * 1e-6;
      out.attention_page_ns[i] = busy_s * sms * fill / t.page_visits * 1e9;
    }
    out.attention_page_method =
        "cisa_kernels step, 2 x (32K + 512), G=4, K=1,024, W=128, r=4/8/16/32 (tiles of "
        "16/32/64/128 "
        "rows), pages L2-resident: (attention time - floors) x SMs x wave fill / page visits, "
        "median of 9";
  }
  {
    const DenseRun d = dense_run(16, 1, std::int64_t(1) << 20, 81, 9);
    out.attention_read_bw_tbs =
        d.bytes / (d.ms * 1e-3 - d.launches * out.attention_floor_us * 1e-6) / 1e12;
    out.attention_read_method =
        "cisa_kernels paged_attention, dense decode B=16, history 1M, r=4, 1 KV head: the model's "
        "DRAM bytes / "
        "(median of 9 - floors), L2 flushed";
  }
  // Top-k: the model's form (topk_work / topk_terms: floor + waves x CTA time + cluster waves x
  // merge time + key passes / key rate + IDs / ID rate on the busiest SM), solved by least squares
  // of relative residuals over the floor shape and a grid of prefill shapes with scores from DRAM
  // (scenarios/calib_topk_grid.yaml, r = 4, W = 128, P = 512): N_e from 2K to 64K, K from 512 to
  // 4,096, 16 to 16,384 rows, so every launch plan (16K slices in clusters of 1-4, 32K slices in
  // clusters of 1-2, one or several waves) is in the fit. Three decode shapes (one wave each,
  // scores left in L2 by the scoring kernel) then give the L2 key rate.
  struct GridShape {
    int B, G, K;
    std::int64_t context;
  };
  const GridShape grid[] = {
      {4, 8, 4096, 131584}, {1, 8, 1024, 524800},   {1, 1, 512, 131584},    {4, 32, 4096, 1048576},
      {2, 1, 3072, 393728}, {4, 1, 4096, 1048576},  {4, 1, 1024, 1048576},  {16, 1, 4096, 131584},
      {32, 1, 512, 33280},  {16, 1, 4096, 524800},  {8, 1, 2048, 262656},   {1, 16, 4096, 1048576},
      {2, 8, 2048, 524800}, {8, 32, 2048, 1048576}, {1, 4, 1024, 262656},   {8, 2, 1024, 66048},
      {4, 4, 3072, 786944}, {8, 16, 512, 393728},   {16, 64, 4096, 1048576}};
  // Three forms of the output pass (TopkTerms): per CTA, a row's whole list per wave (installed);
  // per SM, IDs / cluster (the form before session 25); per SM, each CTA's whole row list (the
  // kernel bench's per-SM dependence, NOTES "Session 25"): the other two fitted for comparison.
  enum class Ids { per_cta, per_sm, row_per_sm };
  auto sample = [&](const PipelineTimes& t, double ms, Ids form = Ids::per_cta) {
    const TopkWork w = topk_work(t.model, shape_on(shape, sms));
    const TopkTerms k = topk_terms(w, shape);
    const double ids = form == Ids::per_cta ? k.row_ids : form == Ids::per_sm ? k.ids : k.ids * w.cluster;
    return TopkSample{k.waves, k.cluster_waves, k.key_passes, ids, ms * 1e-3};
  };
  std::vector<TopkSample> per_sm_samples, row_per_sm_samples;
  PipelineTimes pre;  // 4 x 1M at G = 1, K = 4,096: scoring uses it below
  {
    std::vector<TopkSample> samples = {sample(floor_shape, floor_shape.topk_ms)};
    per_sm_samples.push_back(sample(floor_shape, floor_shape.topk_ms, Ids::per_sm));
    row_per_sm_samples.push_back(sample(floor_shape, floor_shape.topk_ms, Ids::row_per_sm));
    std::vector<ScoringSample> scoring;  // the same steps' scoring component (prefill kernels)
    std::string shapes, scoring_shapes;
    unsigned seed = 71;
    for (const GridShape& g : grid) {
      World w(g.B, g.context, 1, seed += 2);
      const PipelineTimes t =
          time_pipeline({g.B, 512, g.G, g.K, 128, g.context - 512}, w, timer, sms, shape, 5, setups);
      if (g.G == 1 && g.K == 4096 && g.B == 4 && g.context == 1048576) pre = t;
      samples.push_back(sample(t, t.topk_ms));
      per_sm_samples.push_back(sample(t, t.topk_ms, Ids::per_sm));
      row_per_sm_samples.push_back(sample(t, t.topk_ms, Ids::row_per_sm));
      const KernelCost& sc = t.model.scoring;
      scoring.push_back({sc.dram_bytes - sc.dram_write_bytes, sc.dram_write_bytes, sc.summed_queries,
                         sc.serial_steps * out.scoring_tile_us * 1e-6, t.scoring_ms * 1e-3,
                         sc.flops_issued});
      char sbuf[96];
      std::snprintf(sbuf, sizeof sbuf, "%s%d x %lld G %d: %.1f us", scoring_shapes.empty() ? "" : "; ", g.B,
                    static_cast<long long>(g.context), g.G, t.scoring_ms * 1e3);
      scoring_shapes += sbuf;
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%d x %lld G %d K %d: %.1f us", shapes.empty() ? "" : "; ",
                    g.B, static_cast<long long>(g.context), g.G, g.K, t.topk_ms * 1e3);
      shapes += buf;
    }
    // Scoring shapes of partly filled groups (issued FLOPs 1.4-1.7x the useful ones: a group's
    // warpgroups compute 64 rows each), long contexts, so the MMA term has shapes it binds.
    // Shapes of several KV heads: a page's representatives of all heads are adjacent, and the
    // selections of every (sequence, KV head) pair stream their own prefix, so these read many more
    // representative bytes per key written than one head's shapes (reads and writes of one size).
    const struct {
      int B, P, G, K, kv;
      std::int64_t context;
    } partial[] = {{4, 320, 1, 4096, 1, 1048576},  {4, 512, 3, 4096, 1, 1048576},  {8, 512, 6, 2048, 1, 524800},
                   {8, 512, 7, 2048, 1, 1048576},  {8, 512, 12, 1024, 1, 524800},  {2, 1088, 4, 4096, 1, 1048576},
                   {4, 512, 4, 2048, 2, 524800},   {2, 512, 8, 4096, 4, 1048576},  {8, 512, 2, 1024, 4, 131584},
                   {1, 1024, 16, 2048, 8, 1048576}, {16, 512, 32, 1024, 2, 262656}, {2, 512, 1, 512, 8, 66048},
                   {3, 768, 12, 3072, 3, 786944},  {1, 2048, 64, 4096, 6, 1048576}};
    for (const auto& g : partial) {
      World w(g.B, g.context, g.kv, seed += 2);
      PipelineShape ps{g.B, g.P, g.G, g.K, 128, g.context - g.P};
      ps.kv = g.kv;
      const PipelineTimes t = time_pipeline(ps, w, timer, sms, shape, 5, setups);
      const KernelCost& sc = t.model.scoring;
      scoring.push_back({sc.dram_bytes - sc.dram_write_bytes, sc.dram_write_bytes, sc.summed_queries,
                         sc.serial_steps * out.scoring_tile_us * 1e-6, t.scoring_ms * 1e-3,
                         sc.flops_issued});
      char sbuf[112];
      std::snprintf(sbuf, sizeof sbuf, "; %d x %lld P %d G %d%s: %.1f us", g.B,
                    static_cast<long long>(g.context), g.P, g.G,
                    g.kv > 1 ? (" kv " + std::to_string(g.kv)).c_str() : "", t.scoring_ms * 1e3);
      scoring_shapes += sbuf;
    }
    // Every sample's terms, for fits of other forms offline (NOTES: the prefill scoring form).
    for (const ScoringSample& x : scoring)
      std::fprintf(stderr, "scoring sample: read_bytes %.6g write_bytes %.6g queries %g fixed_us %.4g t_us %.4g issued_flops %.6g\n",
                   x.read_bytes, x.write_bytes, x.summed_queries, x.fixed_s * 1e6, x.t_s * 1e6, x.issued_flops);
    const ScoringStreams other = out.scoring_prefill_streams == ScoringStreams::shared ? ScoringStreams::overlapped
                                                                                      : ScoringStreams::shared;
    const ScoringFit sf = fit_scoring_prefill(scoring, out.scoring_prefill_streams),
                     sf_other = fit_scoring_prefill(scoring, other);
    if (sf.ok) {
      out.scoring_prefill_mma_tflops = sf.mma_flops / 1e12;
      out.scoring_prefill_floor_us = sf.floor_s * 1e6;
      out.scoring_prefill_query_us = sf.query_s * 1e6;
      out.scoring_prefill_read_bw_tbs = sf.read_Bps / 1e12;
      out.scoring_prefill_write_bw_tbs = sf.write_Bps / 1e12;
    }
    char sb[512];
    std::snprintf(sb, sizeof sb,
                  "cisa_kernels step, prefill P=512, W=128 (the top-k grid, scenarios/calib_topk_grid.yaml, "
                  "and 14 shapes of partly filled groups and of 2-8 KV heads): scoring component = floor + G x "
                  "query + max(bytes, issued FLOPs / MMA rate) + load steps x step, bytes = R / read + W / write "
                  "(streams shared) or max(R / read, W / write) (overlapped): %s, %zu shapes, rms residual "
                  "%.1f %% (%s: %.1f %%)%s%s%s; median of 5 each: ",
                  to_string(out.scoring_prefill_streams).c_str(), scoring.size(), 100.0 * sf.rms_rel,
                  to_string(other).c_str(), 100.0 * sf_other.rms_rel,
                  sf.ok && sf.mma_flops <= 0 ? "; no MMA term (no shape bound by it)" : "",
                  sf.ok ? "" : "; not solved: ", sf.note.c_str());
    out.scoring_prefill_method =
        sb + scoring_shapes +
        (sf.ok && !sf.writes_bind ? "; the key writes bind at no shape (the MMAs of full tiles are slower)"
                                  : "") +
        (sf.ok && !sf.reads_bind ? "; the representative reads bind at no shape (the MMAs are slower)" : "");
    const TopkFit fit = fit_topk(samples), fit_sm = fit_topk(per_sm_samples),
                  fit_row_sm = fit_topk(row_per_sm_samples);
    if (fit.ok) {
      out.topk_floor_us = fit.floor_s * 1e6;
      out.topk_cta_us = fit.cta_s * 1e6;
      out.topk_cluster_us = fit.cluster_s * 1e6;
      out.topk_elem_passes_per_ns_per_sm = fit.key_passes_per_s / 1e9;
      out.topk_out_ids_per_ns_per_cta = fit.ids_per_s / 1e9;
    }
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "floor shape (%.1f us) and %zu grid shapes, rms residual %.1f %% (IDs per CTA, a row's "
                  "whole list per wave; the per-SM form of IDs / cluster: rms %.1f %%, %.3f IDs/ns/SM; "
                  "per SM of each CTA's whole row list: rms %.1f %%, %.3f IDs/ns/SM); ",
                  floor_shape.topk_ms * 1e3, sizeof grid / sizeof grid[0], 100.0 * fit.rms_rel,
                  100.0 * fit_sm.rms_rel, fit_sm.ids_per_s / 1e9, 100.0 * fit_row_sm.rms_rel,
                  fit_row_sm.ids_per_s / 1e9);
    out.topk_method =
        "cisa_kernels step, prefill P=512, W=128, scores from DRAM "
        "(scenarios/calib_topk_grid.yaml): " +
        std::string(buf) + fit.note + " (" + std::to_string(passes) +
        " radix passes per key), median of 5 each: " + shapes;
  }
  const double topk_floor_s = out.topk_floor_us * 1e-6;
  PipelineTimes dec;
  std::vector<PipelineTimes> decode_grid;  // every decode step timed below (r = 4, one KV head)
  {
    World w(64, (std::int64_t(1) << 20) + 1, 1, 67);
    dec = time_pipeline({64, 1, 1, 4096, 128, std::int64_t(1) << 20}, w, timer, sms, shape, 15, setups);
    // The same step's attention gathers 64 x (4,096 + 128) random pages: the page-gather read rate.
    out.attention_gather_bw_tbs =
        dec.model.attention_cisa.dram_bytes /
        (dec.attention_ms * 1e-3 - dec.attention_launches * out.attention_floor_us * 1e-6) / 1e12;
    out.attention_gather_method =
        "cisa_kernels step, decode, 64 x 1M cached tokens, K=4,096, W=128, random selections: the "
        "model's CISA "
        "attention DRAM bytes / (median of 15 - floors), L2 flushed";
    // The L2 key rate: relative least squares over three decode shapes (one wave each; 64 x 1M in
    // 2-CTA clusters, 16 x 256K and 128 x 512K one CTA per row), every other term at its fit.
    const struct {
      int B, K;
      std::int64_t hist;
    } more[] = {{16, 2048, 262144}, {128, 1024, 524288}};
    std::vector<PipelineTimes> decs = {dec};
    for (const auto& d : more) {
      World wd(d.B, d.hist + 1, 1, 89 + static_cast<unsigned>(d.B));
      decs.push_back(time_pipeline({d.B, 1, 1, d.K, 128, d.hist}, wd, timer, sms, shape, 15, setups));
    }
    double num = 0, den = 0;
    std::string shapes;
    for (const PipelineTimes& t : decs) {
      const TopkTerms k = topk_terms(topk_work(t.model, shape_on(shape, sms)), shape);
      const double sec = t.topk_ms * 1e-3;
      const double rest =
          topk_floor_s + k.waves * out.topk_cta_us * 1e-6 +
          k.cluster_waves * out.topk_cluster_us * 1e-6 +
          (out.topk_out_ids_per_ns_per_cta > 0 ? k.row_ids / (out.topk_out_ids_per_ns_per_cta * 1e9)
                                               : 0.0);
      num += (k.key_passes / sec) *
             (1.0 - rest / sec);  // minimises sum ((rest + key_passes x u) / sec - 1)^2
      den += (k.key_passes / sec) * (k.key_passes / sec);
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%.1f us", shapes.empty() ? "" : ", ", sec * 1e6);
      shapes += buf;
    }
    if (num > 0 && den > 0) out.topk_l2_elem_passes_per_ns_per_sm = den / num / 1e9;
    out.topk_l2_method =
        "cisa_kernels steps, decode, 64 x 1M (K=4,096), 16 x 256K (K=2,048), 128 x 512K (K=1,024): "
        "top-k after scoring "
        "(scores in L2; " +
        shapes +
        ", median of 15 each); the key rate by relative least squares, the floor, wave, "
        "cluster and output terms at the prefill fit";
    fit_decode_topk(decs, timer, sms, shape, out, setups);
    fit_decode_attention_of(decs, card, out);
    decode_grid = std::move(decs);
    fit_decode_attention_m32(timer, sms, shape, card, out);
  }
  // Other: the index projection (cuBLAS) of the decode step at 1M + 1 tokens, where no chunk
  // completes; its fixed cost = time - its roofline at the card's rates. The representative update:
  // the same step at 1M tokens completes one chunk per sequence (a second kernel); its fixed cost =
  // the difference in time - the update's roofline.
  auto roof = [&](const KernelCost& k) {
    return std::max((k.dram_bytes - k.dram_write_bytes) / card.read_bw_Bps +
                        k.dram_write_bytes / card.write_bw_Bps,
                    k.flops_issued / card.gemm_flops);
  };
  {
    const KernelCost& k = dec.model.other;
    if (k.launches > 0 && dec.other_ms * 1e-3 > roof(k))
      out.other_floor_us = (dec.other_ms * 1e-3 - roof(k)) / k.launches * 1e6;
    out.other_method =
        fmt_us("cisa_kernels step, decode, 64 x (1M + 1): other component (", dec.other_ms,
               " us, the index projection) less its bytes and FLOPs at the card's rates");
  }
  {
    World w(64, std::int64_t(1) << 20, 1, 71);
    const PipelineTimes fill =
        time_pipeline({64, 1, 1, 4096, 128, (std::int64_t(1) << 20) - 1}, w, timer, sms, shape, 15, setups);
    const KernelCost& k = fill.model.rep_update;
    const double t = (fill.other_ms - dec.other_ms) * 1e-3 - roof(k);
    if (k.launches > 0 && t > 0) out.rep_update_floor_us = t / k.launches * 1e6;
    out.rep_update_method =
        fmt_us(
            "cisa_kernels step, decode, 64 x 1M (one chunk per sequence completes): other "
            "component (",
            fill.other_ms, " us) less the 64 x (1M + 1) step's (") +
        fmt_us("", dec.other_ms, " us) and the update's bytes at the card's rates");
  }
  // Scoring: t - floor = R / read_bw + W / write_bw at both shapes (R, W: the model's DRAM bytes).
  {
    const double r1 = dec.model.scoring.dram_bytes - dec.model.scoring.dram_write_bytes,
                 w1 = dec.model.scoring.dram_write_bytes;
    const double r2 = pre.model.scoring.dram_bytes - pre.model.scoring.dram_write_bytes,
                 w2 = pre.model.scoring.dram_write_bytes;
    // Less the fixed cost and one CTA's chain of load steps (fill and drain), as the model adds.
    const double step_s = out.scoring_tile_us * 1e-6;
    const double t1 = dec.scoring_ms * 1e-3 - scoring_floor_s -
                      dec.model.scoring.serial_steps * step_s,
                 t2 = pre.scoring_ms * 1e-3 - scoring_floor_s -
                      pre.model.scoring.serial_steps * step_s;
    const double det = r1 * w2 - r2 * w1;
    const double inv_r = (t1 * w2 - t2 * w1) / det, inv_w = (r1 * t2 - r2 * t1) / det;
    if (det != 0 && inv_r > 0 && inv_w > 0) {
      out.scoring_read_bw_tbs = 1.0 / inv_r / 1e12;
      out.scoring_write_bw_tbs = 1.0 / inv_w / 1e12;
    }
    out.scoring_method = fmt_scoring(dec.scoring_ms, r1, w1, pre.scoring_ms, r2, w2);
  }
  // The decode step's scoring kernel (one GEMV launch): t = floor + R / read + W / write (W, the
  // 16-bit keys, at the scoring write rate above), by relative least squares over every decode step
  // calibrate times (the 12 of the decode grid and 8 x 128K): its time is not monotonic in bytes
  // across batch and N_e (a two-shape solve from 64 x 1M and 8 x 128K priced held-out steps of 2-10
  // sequences 11-29 % slow, NOTES session 23). (The one-selection floor shape reads a shorter fixed
  // cost than a GEMV over many rows pays: session 5's re-measured sweeps, NOTES.)
  {
    World w(8, 131072 + 1, 1, 89);
    decode_grid.push_back(
        time_pipeline({8, 1, 1, 4096, 128, 131072}, w, timer, sms, shape, 15, setups));
    // The decode attention's form, one launch a step; without a scoring write rate the keys written
    // are not taken off.
    const double write_Bps =
        out.scoring_write_bw_tbs > 0 ? out.scoring_write_bw_tbs * 1e12 : INFINITY;
    std::string shapes;
    const std::vector<DecodeAttentionSample> v = floor_rate_samples(
        decode_grid, &ForwardCost::scoring, &PipelineTimes::scoring_ms, write_Bps, false, shapes);
    const DecodeAttentionFit f = fit_decode_attention(v);
    if (f.ok) {
      out.scoring_decode_read_bw_tbs = f.read_Bps / 1e12;
      out.scoring_decode_floor_us = f.floor_s * 1e6;
    }
    out.scoring_decode_method =
        "cisa_kernels scoring in the decode step: floor + read bytes / rate by relative least squares over " +
        std::to_string(v.size()) +
        " decode steps (one KV head, r=4, 2-128 sequences, 64K-1M tokens), less the keys written at the scoring "
        "write rate, " +
        floor_rate_residuals(f) + "; median of 15 each: " + shapes;
  }
  fit_setup(setups, card, out);
  return out;
}

}  // namespace cisa::gpu
