// measure_points with the instrumented CUDA kernels (kernels/): for each scenario point that the
// kernels support and the card holds, build a paged KV cache of the point's geometry (random, or
// with planted high-score pages), run the dense baseline and the CISA step, and record median
// CUDA-event times per component.
#include <fstream>
#include <functional>

#include "cisa/errors.hpp"
#include "cisa/measure.hpp"
#include "cisa/results.hpp"
#include "design/design.hpp"
#include "gpu/synthetic.cuh"

namespace cisa {

namespace {

std::string unsupported(const Point& p) {
  if (p.geo.head_dim != K::kHeadDim) return "kernels support head_dim 128 only";
  if (p.cisa.chunk_tokens != K::kPageTokens) return "kernels support 16-token pages only";
  if (p.cisa.kv_dtype != Dtype::bf16 || p.cisa.rep_dtype != Dtype::bf16)
    return "kernels support BF16 K/V and representatives only";
  if (p.cisa.rep_kind != RepKind::mean) return "kernels implement mean representatives only";
  if (p.cisa.rep_dim != 0 && p.cisa.rep_dim != K::kHeadDim)
    return "kernels need rep_dim = head_dim";
  if (p.cisa.score_agg != ScoreAgg::sum) return "kernels implement the summed index query only";
  if (p.work.phase == Phase::full_prefill)
    return "full_prefill (a whole prompt) is not measured; measure terminal_prefill";
  if (p.cisa.budget_chunks > 65536) return "budget beyond the top-k kernel's range";
  // One top-k row covers at most 65,536 eligible pages (a 2-CTA cluster of 32,768 keys each).
  if (p.work.context_tokens / p.cisa.chunk_tokens > 65536)
    return "more than 65,536 pages of history (" + std::to_string(p.work.context_tokens) +
           " tokens): beyond the top-k kernel's row length";
  return "";
}

// Why a point priced for one card is not measured on another: its errors would compare cards.
std::string card_mismatch(const Scenario& sc, const Point& p, const std::string& device) {
  const auto it = sc.gpus.find(p.hardware);
  if (it == sc.gpus.end()) return "";
  if (is_card(it->second, device)) return "";
  return "priced for " + p.hardware + " (" + it->second.display_name + "), measured card is " +
         device;
}

struct Measured {
  double attention_dense = NAN, attention_cisa = NAN, scoring = NAN, topk = NAN, setup = NAN,
         other = NAN;
  double other_projection = NAN;  // the index projection's share of `other` (its own median)
  double selection_overlap = NAN;
};

// How a point's design (issue 15) runs on the kernels. cisa: the CISA step (also a kv_group design
// of 16-token pages, with its own window, budget and G). block: b = block_pages consecutive pages
// per unit: block representatives scored and top-k'd by the unchanged scoring and top-k kernels
// (a block-level plan), each chosen block expanded into its b page IDs, the unchanged attention
// over the CISA plan's sparse rows (K = blocks x b pages + window + tail). per_head: one plan per
// query head, each head's own query as its index query, planned as a model of r single-head KV
// groups and then mapped onto the point's cache by a head -> row mapping: head h of position t
// becomes query row t r + h of a one-head layout (the same memory as Q [T][H_q][128]) against
// its real KV head, so the r plans of a group share the KV head's representatives (stacked in
// one scoring tile, read once) and its pages in L2, as Quest does. CISA_MEASURE_HEAD_COPIES=1
// instead gives each plan its own copy of the KV head (a cache of q_heads KV heads): no sharing
// between plans, the design model's first-order assumption.
enum class DesignMode { cisa, block, per_head };
bool head_copies() {
  const char* e = std::getenv("CISA_MEASURE_HEAD_COPIES");
  return e && std::string(e) == "1";
}
struct DesignRun {
  DesignMode mode = DesignMode::cisa;
  int block_pages = 1, window_pages = 0, budget_pages = 0, g = 1;
  bool projection = true;
  bool copies = false;  // per_head: r copies of each KV head in the cache
  int world_heads(const Point& p) const { return copies ? p.geo.q_heads : p.geo.kv_heads; }
};

// "" when the design runs on the kernels (filling `out`), else why not.
std::string design_run(const Scenario& sc, const Point& p, DesignRun& out) {
  out.window_pages = p.cisa.window_pages;
  out.budget_pages = static_cast<int>(p.cisa.budget_chunks);
  out.g = effective_qshare(p.cisa, p.work);
  if (p.design == "cisa") return "";
  const design::Design& d = sc.designs.at(p.design);
  const design::Resolved r =
      design::resolve(d, p.geo, p.cisa, out.g, sc.design_equal_budget);
  const std::string name = "design " + d.name + ": ";
  if (r.d.indexer != design::IndexerKind::representatives)
    return name + "the kernels score unit representatives only (no index-key cache, no branch scores)";
  if (r.d.compressed_stride > 0) return name + "no compressed-branch kernel";
  if (r.d.sink_tokens > 0) return name + "the kernels' plans have no sink tokens";
  if (!r.d.tail) return name + "the kernels always read the tail";
  if (r.unit % K::kPageTokens != 0 || r.d.window_tokens % K::kPageTokens != 0)
    return name + "units and window must be whole 16-token pages";
  if (r.d.index_dim != K::kHeadDim || r.d.index_elem_bytes != 2 || r.d.index_scale_bytes != 0 ||
      r.d.index_vectors != 1)
    return name + "the scoring kernel reads one BF16 head_dim vector per unit (measure a "
                  "one-vector variant of a min/max design)";
  out.block_pages = r.unit / K::kPageTokens;
  out.window_pages = static_cast<int>(r.d.window_tokens / K::kPageTokens);
  out.budget_pages = static_cast<int>(r.d.budget_tokens / K::kPageTokens);
  out.g = r.plan_positions;
  out.projection = r.d.projection_dims > 0;
  if (d.plan_scope == design::PlanScope::head) {
    if (out.block_pages != 1 || out.g != 1)
      return name + "per-head plans are measured for one position and 16-token pages only";
    out.mode = DesignMode::per_head;
    out.copies = head_copies() && p.geo.heads_per_group() > 1;
    return "";
  }
  out.mode = out.block_pages == 1 ? DesignMode::cisa : DesignMode::block;
  return "";
}

// Sparse row i of the CISA plan: the first kb x bp entries are the pages of the chosen blocks
// (block IDs seq * nb + j from the block-level top-k), then its window and tail pages.
__global__ void expand_blocks(const int* blocks, int kb, int bp, int nb, const K::TopkRow* rows,
                              const int* page_ids, int pages_per_seq, int* sparse, int stride,
                              int n_rows) {
  const int row = blockIdx.x;
  if (row >= n_rows) return;
  const K::TopkRow tr = rows[row];
  const int* tab = page_ids + static_cast<std::int64_t>(tr.seq) * pages_per_seq;
  const int* chosen = blocks + static_cast<std::int64_t>(row) * kb;
  int* out = sparse + static_cast<std::int64_t>(row) * stride;
  const int k = kb * bp;
  for (int j = threadIdx.x; j < k; j += blockDim.x)
    out[j] = tab[(chosen[j / bp] - tr.seq * nb) * bp + j % bp];
  for (int e = threadIdx.x; e < tr.list_end - tr.n_e; e += blockDim.x) out[k + e] = tab[tr.n_e + e];
}

// Environment switches for analysis/ncu_points.py: CISA_MEASURE_ONLY=3,7 measures only those
// point indices; CISA_MEASURE_PROFILE=1 runs each measured point's dense baseline and CISA step
// exactly once between ncu_boundary_kernel launches (no repetitions, no L2 flush).
struct Switches {
  std::set<std::int64_t> only;
  bool profile = false;
  // Diagnostics of `other` (session 12): the GPU idle for settle_ms before each repetition, or
  // only the `other` kernels timed (no step after them).
  double settle_ms = 0, queue_us = Timer::kQueueUs;
  bool other_only = false;
  // CISA_MEASURE_CTA_TIMES=DIR: after each measured point's CISA step, the progress of its CISA
  // attention CTAs (last repetition; kernels attention_cta_times) in
  // DIR/point_<index>_attn_ctas.csv
  std::string cta_times_dir;
};
Switches read_switches() {
  Switches sw;
  if (const char* o = std::getenv("CISA_MEASURE_ONLY")) {
    std::stringstream ss(o);
    std::string item;
    while (std::getline(ss, item, ','))
      if (!item.empty()) sw.only.insert(std::stoll(item));
  }
  if (const char* pr = std::getenv("CISA_MEASURE_PROFILE")) sw.profile = std::string(pr) == "1";
  if (const char* st = std::getenv("CISA_MEASURE_SETTLE_MS")) sw.settle_ms = std::atof(st);
  if (const char* oo = std::getenv("CISA_MEASURE_OTHER_ONLY")) sw.other_only = std::string(oo) == "1";
  if (const char* qu = std::getenv("CISA_MEASURE_QUEUE_US")) sw.queue_us = std::atof(qu);
  if (const char* ct = std::getenv("CISA_MEASURE_CTA_TIMES")) sw.cta_times_dir = ct;
  return sw;
}

int reps_for(double first_ms) {
  return std::clamp(static_cast<int>(1500.0 / std::max(first_ms, 0.01)), 3, 15);
}

// The CISA attention CTAs' progress of the last launch (the CTAs that started since the reset), as
// CSV: CTA (linear block id), SM, work index, tiles, then ns from the launch's first start to the
// CTA's start, 1/4, 1/2, 3/4 of its tiles (-1: fewer than 4 tiles) and end.
void write_cta_times(const std::string& dir, std::int64_t index) {
  const auto t = K::attention_cta_times(1 << 14);
  std::uint64_t t0 = ~0ull;
  for (const auto& c : t)
    if (c.ns[0] != 0) t0 = std::min(t0, c.ns[0]);
  const std::string path = dir + "/point_" + std::to_string(index) + "_attn_ctas.csv";
  std::ofstream f(path);
  f << "cta,sm,work,tiles,start_ns,q1_ns,q2_ns,q3_ns,end_ns\n";
  for (std::size_t b = 0; b < t.size(); ++b) {
    const auto& c = t[b];
    if (c.ns[0] == 0) continue;
    f << b << ',' << c.sm << ',' << c.work << ',' << c.tiles;
    for (int i = 0; i < 5; ++i)
      f << ',' << (c.ns[i] == 0 ? -1LL : static_cast<long long>(c.ns[i] - t0));
    f << '\n';
  }
  if (!f) throw std::runtime_error("CISA_MEASURE_CTA_TIMES: cannot write " + path);
}

// The dense baseline depends only on (batch, context, positions, heads): time it once.
using DenseKey = std::tuple<int, std::int64_t, int, int, int>;

// Share of a selection's K pages also chosen by the previous group, over up to 64 consecutive
// selections of sequence 0, KV head 0 (the sparse table's first K entries are the selected IDs).
double selection_overlap(const K::CisaStep& step, int k) {
  const auto& rows = step.plan().score_rows;
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < rows.size() && mine.size() < 64; ++i)
    if (rows[i].seq == 0 && rows[i].kv_head == 0) mine.push_back(i);
  if (mine.size() < 2) return NAN;
  const int stride = step.plan().sparse_stride;
  std::vector<int> host(std::size_t(mine.back() - mine.front() + 1) * stride);
  ck(cudaMemcpy(host.data(), step.sparse_table() + mine.front() * stride, host.size() * sizeof(int),
                cudaMemcpyDeviceToHost),
     "selection copy");
  double sum = 0;
  for (std::size_t j = 1; j < mine.size(); ++j) {
    const int* a = host.data() + (mine[j - 1] - mine.front()) * stride;
    const int* b = host.data() + (mine[j] - mine.front()) * stride;
    std::set<int> prev(a, a + k);
    int shared = 0;
    for (int i = 0; i < k; ++i) shared += prev.count(b[i]) ? 1 : 0;
    sum += static_cast<double>(shared) / k;
  }
  return sum / static_cast<double>(mine.size() - 1);
}

Measured measure_one(const Point& p, std::int64_t index, World& w, Timer& timer, int sms,
                     std::map<DenseKey, double>& dense_cache, const Switches& sw, bool planted,
                     const DesignRun& dr) {
  Measured m;
  const int r = p.geo.heads_per_group(), kvh = p.geo.kv_heads, B = p.work.batch;
  const int P = positions_per_forward(p.work);
  const K::StepBatch b{std::vector<int>(B, static_cast<int>(p.work.context_tokens - P)),
                       std::vector<int>(B, P), kvh, r};
  // Dense baseline: the same kernel family over the full block table. A per-head design's cache
  // holds r copies of each KV head: its dense baseline comes from the point's own cache (timed
  // for an earlier point of the same shape), else it stays unmeasured.
  const DenseKey dk{B, p.work.context_tokens, P, kvh, r};
  if (dense_cache.count(dk) && !sw.profile) {
    m.attention_dense = dense_cache[dk];
  } else if (!dr.copies) {
    const K::CisaPlan plan = K::plan_dense(b);
    K::CisaStep step(plan, kvh, r, sms);
    Dev<K::bf16_bits> q(std::size_t(plan.total_tokens) * kvh * r * 128), o(q.n);
    fill(q.p, q.n, 17);
    step.upload(nullptr);
    auto run = [&](K::Instrument* ins) { step.run_attention(q.p, o.p, w.kv, w.bt, nullptr, ins); };
    if (sw.profile) {
      ck(cudaDeviceSynchronize(), "profile");
      run(nullptr);
    } else {
      const double first = timer.components(run, 1)["attention"];
      m.attention_dense = timer.components(run, reps_for(first))["attention"];
      dense_cache[dk] = m.attention_dense;
    }
  }
  if (sw.profile) ncu_boundary_kernel<<<1, 32>>>(static_cast<int>(index));
  // The sparse step: setup (descriptor upload: the kernels' step no longer copies them itself, a
  // serving loop does once its plan changes), scoring, top-k, attention; then the other component.
  std::map<std::string, double> c;
  auto time = [&](const std::function<void(K::Instrument*)>& run) {
    if (sw.profile) {
      run(nullptr);
      ncu_boundary_kernel<<<1, 32>>>(static_cast<int>(index));
      ck(cudaDeviceSynchronize(), "profile");
      return false;
    }
    auto first = timer.components(run, 1);
    double total = 0;
    for (const auto& [k, ms] : first) total += ms;
    c = timer.components(run, reps_for(total));
    return true;
  };
  const K::StepConfig cfg{dr.window_pages, dr.budget_pages, dr.g};
  if (dr.mode == DesignMode::per_head) {
    // Planned as kv_heads x r KV heads of one query head each; the head's own query scores.
    const int heads = kvh * r;
    const K::StepBatch bh{b.history, b.new_tokens, heads, 1};
    K::CisaPlan plan = K::plan_cisa_step(bh, cfg);
    int step_heads = heads;
    if (!dr.copies && r > 1) {
      // Head h of KV group g at token t: query row t r + h of a [T r][kv_heads][128] layout (the
      // same memory as Q [T][H_q][128]; the values are random, so only distinctness matters)
      // against KV head g. The index query is the head's query (the same buffer).
      auto remap = [&](int& tok, int& head) {
        tok = tok * r + head % r;
        head /= r;
      };
      using Key = std::tuple<int, int, int>;  // (seq, KV head, query row) after the mapping
      std::vector<K::ScoreRow> rows;
      std::vector<Key> old_keys;
      for (K::ScoreRow row : plan.score_rows) {
        if (row.n_q != 1) throw std::runtime_error("per-head plans: one position per plan");
        remap(row.q_tok0, row.kv_head);
        old_keys.push_back(Key{row.seq, row.kv_head, row.q_tok0});
        rows.push_back(row);
      }
      // Rows of one (sequence, KV head) consecutive, so they stack in scoring tiles.
      std::stable_sort(rows.begin(), rows.end(), [](const K::ScoreRow& a, const K::ScoreRow& b) {
        return a.seq != b.seq ? a.seq < b.seq : a.kv_head < b.kv_head;
      });
      std::map<Key, int> new_index;
      for (std::size_t i = 0; i < rows.size(); ++i)
        new_index[Key{rows[i].seq, rows[i].kv_head, rows[i].q_tok0}] = static_cast<int>(i);
      std::vector<K::TopkRow> topk(rows.size());
      for (std::size_t i = 0; i < old_keys.size(); ++i) topk[new_index.at(old_keys[i])] = plan.topk_rows[i];
      for (K::AttnWork& wk : plan.work) {
        if (wk.n_pos != 1) throw std::runtime_error("per-head plans: one position per work item");
        if (wk.list_src == 1) wk.list_row = new_index.at(old_keys[static_cast<std::size_t>(wk.list_row)]);
        remap(wk.q_tok0, wk.kv_head);
      }
      plan.score_rows = rows;
      plan.topk_rows = topk;
      plan.score_groups = K::make_score_groups(plan.score_rows);
      step_heads = kvh;
    }
    // The cache: the point's own (KV heads shared by the plans), or r copies of each.
    K::CisaStep step(plan, step_heads, 1, sms);
    Dev<K::bf16_bits> q(std::size_t(plan.total_tokens) * heads * 128), o(q.n);
    fill(q.p, q.n, 19);
    OtherWork other(p, plan, w, dr.projection);
    if (!sw.cta_times_dir.empty()) K::attention_cta_times_reset();
    if (!time([&](K::Instrument* ins) {
          other.run(w, ins);
          step.upload(nullptr, ins);  // setup: the step's descriptors, copied per step as the model prices them
          step.run(q.p, q.p, o.p, w.kv, w.reps->p, w.bt, nullptr, ins);
        }))
      return m;
    if (!sw.cta_times_dir.empty()) write_cta_times(sw.cta_times_dir, index);
    m.selection_overlap = selection_overlap(step, dr.budget_pages);
  } else if (dr.mode == DesignMode::block) {
    // The CISA plan at K = kb x bp pages runs the attention; a block-level plan (one block
    // representative per bp pages, N_e / bp blocks, top kb) runs scoring and top-k.
    const int bp = dr.block_pages, kb = dr.budget_pages / bp, nb = w.pages_per_seq / bp;
    const K::CisaPlan plan = K::plan_cisa_step(b, cfg);
    K::CisaPlan bplan;
    int max_ne = 0;
    for (K::ScoreRow row : plan.score_rows) {
      row.n_e /= bp;
      max_ne = std::max(max_ne, row.n_e);
      bplan.score_rows.push_back(row);
    }
    for (const K::TopkRow& tr : plan.topk_rows) {
      if (tr.n_e / bp <= kb)
        throw std::runtime_error("block top-k: a selection has no more eligible blocks than its budget");
      bplan.topk_rows.push_back(K::TopkRow{tr.seq, tr.n_e / bp, tr.n_e / bp});
    }
    bplan.score_groups = K::make_score_groups(bplan.score_rows);
    bplan.work = plan.work;  // never run: sizes the (unused) attention scratch like the CISA plan
    bplan.rows_per_cta = plan.rows_per_cta;
    bplan.sparse_stride = kb;
    bplan.score_stride = (max_ne + 15) / 16 * 16;  // key rows on 32-byte sectors, as plan_cisa_step
    bplan.budget = kb;
    bplan.total_tokens = plan.total_tokens;
    K::CisaStep step(plan, kvh, r, sms), bstep(bplan, kvh, r, sms);
    // Block representatives (random: the timing does not depend on their values) and a block
    // table mapping block j of sequence s to representative s * nb + j.
    Dev<K::bf16_bits> breps(std::size_t(B) * nb * kvh * 128);
    fill(breps.p, breps.n, 41);
    std::vector<int> bids(std::size_t(B) * nb);
    std::iota(bids.begin(), bids.end(), 0);
    Dev<int> btab(bids);
    const K::BlockTable bt{btab.p, nb};
    Dev<K::TopkRow> rows(plan.topk_rows);
    const int n_rows = static_cast<int>(plan.topk_rows.size());
    Dev<K::bf16_bits> q(std::size_t(plan.total_tokens) * kvh * r * 128), o(q.n),
        iq(std::size_t(plan.total_tokens) * kvh * 128);
    fill(q.p, q.n, 19);
    fill(iq.p, iq.n, 23, 0.5f);
    OtherWork other(p, plan, w, dr.projection);
    const double expand_bytes = n_rows * (4.0 * kb + 8.0 * kb * bp + 12.0);
    if (!time([&](K::Instrument* ins) {
          other.run(w, ins);
          bstep.upload(nullptr, ins);
          step.upload(nullptr, ins);
          bstep.run_scoring(iq.p, breps.p, bt, kvh, nullptr, ins);
          bstep.run_topk(bt, nullptr, ins);
          if (n_rows > 0) {
            K::ScopedLaunch sl(ins, K::Component::topk, "expand_blocks", expand_bytes, 0, 0, nullptr);
            expand_blocks<<<n_rows, 256>>>(bstep.sparse_table(), kb, bp, nb, rows.p, w.table->p,
                                           w.pages_per_seq, const_cast<int*>(step.sparse_table()),
                                           plan.sparse_stride, n_rows);
            ck(cudaGetLastError(), "expand_blocks");
          }
          step.run_attention(q.p, o.p, w.kv, w.bt, nullptr, ins);
        }))
      return m;
  } else {
    const K::CisaPlan plan = K::plan_cisa_step(b, cfg);
    if (planted) {
      int eligible = std::numeric_limits<int>::max();
      for (const auto& row : plan.topk_rows) eligible = std::min(eligible, row.n_e);
      if (plan.topk_rows.empty()) eligible = 0;
      const int hot = static_cast<int>(
          std::lround(p.cisa.selection_overlap * static_cast<double>(p.cisa.budget_chunks)));
      w.plant(B, std::min(hot, eligible), eligible, 4242 + static_cast<unsigned long long>(index));
    }
    K::CisaStep step(plan, kvh, r, sms);
    Dev<K::bf16_bits> q(std::size_t(plan.total_tokens) * kvh * r * 128), o(q.n),
        iq(std::size_t(plan.total_tokens) * kvh * 128);
    fill(q.p, q.n, 19);
    fill(iq.p, iq.n, 23, 0.5f);
    if (planted) add_direction<<<1024, 256>>>(iq.p, iq.n, World::kPlantAlpha);
    OtherWork other(p, plan, w, dr.projection);
    if (!sw.cta_times_dir.empty()) K::attention_cta_times_reset();
    if (!time([&](K::Instrument* ins) {
          other.run(w, ins);
          if (sw.other_only) return;
          step.upload(nullptr, ins);  // setup: the step's descriptors, copied per step as the model prices them
          step.run(q.p, iq.p, o.p, w.kv, w.reps->p, w.bt, nullptr, ins);
        }))
      return m;
    if (!sw.cta_times_dir.empty()) write_cta_times(sw.cta_times_dir, index);
    m.selection_overlap = selection_overlap(step, dr.budget_pages);
  }
  auto get = [&](const char* k) { return c.count(k) ? c[k] : 0.0; };
  m.attention_cisa = get("attention");
  m.scoring = get("scoring");
  m.topk = get("topk");
  m.setup = get("setup");
  m.other = get("other");
  m.other_projection = get("other:index_projection");
  return m;
}

std::vector<double>& col(Table& t, const std::string& name) {
  return std::get<std::vector<double>>(const_cast<Column*>(t.find(name))->data);
}

}  // namespace

void measure_points(const Scenario& sc, Table& t, Attributes& attrs, bool required) {
  const gpu::DeviceInfo dev = gpu::query_device();
  if (!dev.available) {
    if (required)
      throw InputError({"command line", 0, "--measure"},
                       dev.reason + "; use --measure auto to skip measurement without a GPU");
    attrs["measurement"] = "skipped: " + dev.reason;
    std::cerr << "cisa-sim: --measure auto: not measuring: " << dev.reason << "\n";
    return;
  }
  const auto& index = std::get<std::vector<std::int64_t>>(t.find("point_index")->data);
  auto &att_d = col(t, "meas_ms_attention_dense"), &att_c = col(t, "meas_ms_attention_cisa"),
       &sc_ms = col(t, "meas_ms_scoring"), &tk = col(t, "meas_ms_topk"),
       &su = col(t, "meas_ms_setup"), &busy_d = col(t, "meas_ms_busy_dense"),
       &busy_c = col(t, "meas_ms_busy_cisa"), &ot = col(t, "meas_ms_other"),
       &ov = col(t, "meas_selection_overlap");
  // `other` split into its two kernels (diagnostics; the comparison uses meas_ms_other).
  auto& ot_proj = t.add_f64("meas_ms_other_projection", "ms",
                            "measured index projection (cuBLAS GEMM) of `other`: median CUDA-event "
                            "time, L2 flushed before the step (the projection runs first)");
  auto& ot_rep = t.add_f64("meas_ms_other_rep_update", "ms",
                           "measured `other` less its index projection (the representative update)");
  ot_proj.assign(index.size(), NAN);
  ot_rep.assign(index.size(), NAN);
  const Switches sw = read_switches();
  const bool planted = sc.measure_inputs == "planted";
  // Group rows by the cache they need so each cache is built once.
  // Worlds in (batch, context, KV heads) order: a per-head design's world (q_heads heads) comes
  // after its point's own world, whose dense baseline it reuses.
  std::map<std::tuple<int, std::int64_t, int>, std::vector<std::size_t>> by_world;
  std::map<std::size_t, DesignRun> runs;
  std::string skipped;
  std::size_t n_skipped = 0, n_other_card = 0;
  std::size_t free_b = 0, total_b = 0;
  ck(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  for (std::size_t row = 0; row < index.size(); ++row) {
    const Point& p = sc.points[static_cast<std::size_t>(index[row])];
    if (!sw.only.empty() && !sw.only.count(index[row])) continue;  // CISA_MEASURE_ONLY
    std::string why = unsupported(p);
    if (why.empty()) {
      why = card_mismatch(sc, p, dev.name);
      if (!why.empty()) ++n_other_card;
    }
    DesignRun dr;
    if (why.empty()) why = design_run(sc, p, dr);
    if (why.empty() && planted && p.design != "cisa")
      why = "planted inputs are measured for design cisa only";
    const double need =
        World::bytes(p.work.batch, p.work.context_tokens, dr.world_heads(p)) +
        4.0 * p.work.batch * positions_per_forward(p.work) * p.geo.q_heads * 128 * 2 + (256 << 20);
    if (why.empty() && need > 0.8 * static_cast<double>(free_b))
      why = "needs ~" + std::to_string(static_cast<long long>(need / 1e9)) + " GB, the card has " +
            std::to_string(static_cast<long long>(free_b / 1e9)) + " GB free";
    if (!why.empty()) {
      ++n_skipped;
      skipped += "point " + std::to_string(index[row]) + ": " + why + "\n";
      continue;
    }
    runs[row] = dr;
    by_world[{p.work.batch, p.work.context_tokens, dr.world_heads(p)}].push_back(row);
  }
  std::size_t todo = 0, done = 0;
  for (const auto& [k, rows] : by_world) todo += rows.size();
  if (required && todo == 0 && n_other_card > 0)
    throw InputError({sc.file.empty() ? "scenario" : sc.file, 0, "hardware"},
                     "every point is priced for another card than this GPU (" + dev.name +
                         "): set `hardware:` (or --set hardware=NAME) to this card's preset so "
                         "measured and predicted times are of one card");
  std::cerr << "measuring " << todo << " points on " << dev.name << " (" << n_skipped
            << " skipped)\n";
  Timer timer;
  timer.settle_ms = sw.settle_ms;
  timer.queue_us = sw.queue_us;
  if (sw.settle_ms > 0 || sw.other_only || sw.queue_us != Timer::kQueueUs)
    attrs["measurement_diagnostic"] =
        "CISA_MEASURE_SETTLE_MS=" + std::to_string(sw.settle_ms) +
        ", CISA_MEASURE_QUEUE_US=" + std::to_string(sw.queue_us) +
        (sw.other_only ? ", CISA_MEASURE_OTHER_ONLY=1 (the step not run: only `other` timed)" : "");
  std::map<DenseKey, double> dense_cache;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& [key, rows] : by_world) {
    World w(std::get<0>(key), std::get<1>(key), std::get<2>(key),
            1000 + std::get<1>(key) % 997 + std::get<0>(key));
    for (std::size_t row : rows) {
      const Point& p = sc.points[static_cast<std::size_t>(index[row])];
      const Measured m =
          measure_one(p, index[row], w, timer, dev.sms, dense_cache, sw, planted, runs.at(row));
      att_d[row] = m.attention_dense;
      att_c[row] = m.attention_cisa;
      sc_ms[row] = m.scoring;
      tk[row] = m.topk;
      su[row] = m.setup;
      ot[row] = m.other;
      ot_proj[row] = m.other_projection;
      ot_rep[row] = m.other - m.other_projection;
      ov[row] = m.selection_overlap;
      busy_d[row] = m.attention_dense;
      busy_c[row] = m.attention_cisa + m.scoring + m.topk + m.setup + m.other;
      ++done;
      const double el =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "  %zu/%zu points, %.0f s, ETA %.0f s\n", done, todo, el,
                   el / done * (todo - done));
    }
  }
  fill_errors(t);
  const std::string inputs =
      planted ? "planted inputs (round(selection_overlap x K) pages per sequence with keys along "
                "one direction that every "
                "index query shares, so neighbouring selections choose them; the rest random)"
              : "random BF16 K/V/Q";
  attrs["measurement"] =
      std::string(sw.profile
                      ? "PROFILE MODE (one run per point for Nsight Compute; times not measured): "
                      : "") +
      "measured " + std::to_string(done) + " points on " + dev.name +
      " with the cisa_kernels library; " + inputs +
      ", pages scattered over the pool; median CUDA-event time per component, L2 flushed before "
      "each repetition of the whole step (not between its components), the repetition queued "
      "behind a " + std::to_string(static_cast<int>(sw.queue_us)) +
      " us spin kernel after the flush (the host's submission not timed); other = index projection "
      "(cuBLAS BF16 GEMM) + representative update of the pages the forward completes" +
      (sc.design_column
           ? std::string("; designs (issue 15): block top-k = block representatives (random values) "
                         "scored and top-k'd by the unchanged kernels over a block-level plan, chosen "
                         "blocks expanded into their consecutive page IDs (expand_blocks, counted as "
                         "top-k), the unchanged attention over the pages; per-head plans = one query "
                         "head per plan, scored with the head's own query, no index projection, " +
                         std::string(head_copies()
                                         ? "each plan against its own copy of the KV head (the cache "
                                           "holds q_heads KV heads: no sharing between plans)"
                                         : "mapped as one-head query rows onto the shared KV head "
                                           "(representatives and pages shared by the r plans)"))
           : std::string());
  attrs["measure_inputs"] = sc.measure_inputs;
  attrs["measurement_skipped"] = skipped;
  attrs["measurement_device"] = dev.name;
}

}  // namespace cisa
