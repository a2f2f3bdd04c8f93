// The CISA step on the device: scoring, top-k, attention. The descriptors (score rows and groups,
// top-k rows, attention work items) depend only on the plan: they are uploaded once, when the step
// is constructed, and no longer copied in every step (upload() re-copies them, component setup).
// Pipelined runs (set_pipeline(n > 1), uninstrumented; off by default: measured no faster, see
// NOTES.md session 6): the batch's sequences are cut into n parts of about equal eligible pages.
// Scoring runs part after part on the caller's stream; each part's top-k
// (latency-bound, few CTAs) runs on a top-k stream of the greatest priority as soon as its scores are
// written, beside the next part's scoring; each part's attention on its own stream, beside the next
// part's top-k. With `reserve`, the kernels that run beside a top-k leave it room: the next part's
// scoring launches as many fewer CTAs as the top-k has, and the attention of a part picks its split
// count for as many fewer SMs as the next part's top-k takes. Instrumented runs are serial.
#include <cstring>

#include "cisa_kernels/cisa_step.hpp"
#include "common.cuh"

namespace cisa::kernels {

namespace {
std::size_t align256(std::size_t x) { return (x + 255) / 256 * 256; }
constexpr int kMaxParts = 4;
}  // namespace

// A piece of the plan: rows [r0, r1) (score and top-k), groups [g0, g1), work items [w0, w1), with
// host copies of its descriptors and its own split-KV scratch.
struct StepPart {
  int r0 = 0, r1 = 0, g0 = 0, g1 = 0, w0 = 0, w1 = 0;
  std::vector<ScoreRow> rows;
  std::vector<ScoreGroup> groups;
  std::vector<TopkRow> topk;
  std::vector<AttnWork> work;
  int splits = 1;
  int topk_ctas = 0;      // CTAs of the part's top-k launch
  int score_reserve = 0;  // CTA slots its scoring leaves free (the previous part's top-k)
  float* scratch = nullptr;
  std::int64_t scratch_floats = 0;
};

struct CisaStep::Impl {
  void* host_blob = nullptr;  // pinned
  void* dev_blob = nullptr;
  std::size_t blob_bytes = 0;
  std::size_t off_rows = 0, off_groups = 0, off_topk = 0, off_work = 0;
  bf16_bits* qsum = nullptr;
  std::uint16_t* keys = nullptr;  // 16-bit score keys
  int* sparse = nullptr;
  float* scratch = nullptr;
  std::int64_t scratch_floats = 0;
  // serial run: the attention reads its early part (window and tail pages) while the top-k runs
  // (attention_early: decode-like plans), and the top-k lets it start at its own start
  bool early = false;
  // pipelined run: parts (more than one when it pipelines), side streams and events
  std::vector<StepPart> parts;
  int parts_wanted = 0;
  cudaStream_t st_topk = nullptr;              // greatest priority
  cudaStream_t st_attn[kMaxParts] = {};        // one below
  cudaEvent_t ev_fork = nullptr, ev_score[kMaxParts] = {}, ev_topk[kMaxParts] = {}, ev_join[kMaxParts] = {};
};

namespace {

// Sequence of a work item (its block-table row, or its selection's).
int work_seq(const CisaPlan& plan, const AttnWork& w) {
  return w.list_src == 0 ? w.list_row : plan.score_rows[static_cast<std::size_t>(w.list_row)].seq;
}

// Cuts the plan into n parts at sequence boundaries, about equal eligible pages each. Empty when the
// plan cannot be cut (rows, groups and work not in sequence order, or fewer sequences with
// selections than parts).
std::vector<StepPart> cut_plan(const CisaPlan& plan, int n) {
  const auto& rows = plan.score_rows;
  if (n < 2 || rows.empty()) return {};
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i].seq < rows[i - 1].seq) return {};
  for (std::size_t i = 1; i < plan.work.size(); ++i)
    if (work_seq(plan, plan.work[i]) < work_seq(plan, plan.work[i - 1])) return {};
  if (plan.topk_rows.size() != rows.size()) return {};
  // sequence boundaries among the rows: cut after the row where the running eligible pages pass
  // total * (p + 1) / n
  double total = 0;
  for (const auto& r : rows) total += r.n_e;
  std::vector<int> cut_rows;  // r1 of each part
  double run = 0;
  int p = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    run += rows[i].n_e;
    const bool seq_end = i + 1 == rows.size() || rows[i + 1].seq != rows[i].seq;
    if (seq_end && p < n - 1 && run >= total * (p + 1) / n) {
      cut_rows.push_back(static_cast<int>(i + 1));
      ++p;
    }
  }
  if (cut_rows.empty() || cut_rows.back() != static_cast<int>(rows.size()))
    cut_rows.push_back(static_cast<int>(rows.size()));
  if (static_cast<int>(cut_rows.size()) != n) return {};
  std::vector<StepPart> parts(static_cast<std::size_t>(n));
  int r0 = 0, g = 0, w = 0;
  const int n_groups = static_cast<int>(plan.score_groups.size());
  const int n_work = static_cast<int>(plan.work.size());
  for (int k = 0; k < n; ++k) {
    StepPart& pt = parts[static_cast<std::size_t>(k)];
    pt.r0 = r0;
    pt.r1 = cut_rows[static_cast<std::size_t>(k)];
    if (pt.r1 <= pt.r0) return {};
    pt.g0 = g;
    while (g < n_groups && plan.score_groups[static_cast<std::size_t>(g)].row0 < pt.r1) ++g;
    pt.g1 = g;
    // work items up to the last sequence of the part (the last part takes the rest)
    const int last_seq = rows[static_cast<std::size_t>(pt.r1 - 1)].seq;
    pt.w0 = w;
    while (w < n_work && (k == n - 1 || work_seq(plan, plan.work[static_cast<std::size_t>(w)]) <= last_seq)) ++w;
    pt.w1 = w;
    pt.rows.assign(rows.begin() + pt.r0, rows.begin() + pt.r1);
    pt.topk.assign(plan.topk_rows.begin() + pt.r0, plan.topk_rows.begin() + pt.r1);
    pt.groups.assign(plan.score_groups.begin() + pt.g0, plan.score_groups.begin() + pt.g1);
    pt.work.assign(plan.work.begin() + pt.w0, plan.work.begin() + pt.w1);
    r0 = pt.r1;
  }
  if (g != n_groups) return {};
  return parts;
}

}  // namespace

CisaStep::CisaStep(const CisaPlan& plan, int kv_heads, int r, int num_sms)
    : impl_(std::make_unique<Impl>()), plan_(plan), kv_heads_(kv_heads), r_(r), num_sms_(num_sms) {
  auto& m = *impl_;
  std::size_t off = 0;
  m.off_rows = off;
  off = align256(off + plan_.score_rows.size() * sizeof(ScoreRow));
  m.off_groups = off;
  off = align256(off + plan_.score_groups.size() * sizeof(ScoreGroup));
  m.off_topk = off;
  off = align256(off + plan_.topk_rows.size() * sizeof(TopkRow));
  m.off_work = off;
  off = align256(off + plan_.work.size() * sizeof(AttnWork));
  m.blob_bytes = std::max<std::size_t>(off, 256);
  CISA_CUDA(cudaMallocHost(&m.host_blob, m.blob_bytes));
  CISA_CUDA(cudaMalloc(&m.dev_blob, m.blob_bytes));
  auto* hb = static_cast<unsigned char*>(m.host_blob);
  std::memset(hb, 0, m.blob_bytes);
  std::memcpy(hb + m.off_rows, plan_.score_rows.data(), plan_.score_rows.size() * sizeof(ScoreRow));
  std::memcpy(hb + m.off_groups, plan_.score_groups.data(), plan_.score_groups.size() * sizeof(ScoreGroup));
  std::memcpy(hb + m.off_topk, plan_.topk_rows.data(), plan_.topk_rows.size() * sizeof(TopkRow));
  std::memcpy(hb + m.off_work, plan_.work.data(), plan_.work.size() * sizeof(AttnWork));
  // the descriptors depend only on the plan: copied once here, not in every step
  CISA_CUDA(cudaMemcpy(m.dev_blob, m.host_blob, m.blob_bytes, cudaMemcpyHostToDevice));
  const std::size_t nrows = plan_.score_rows.size();
  if (nrows > 0) {
    CISA_CUDA(cudaMalloc(&m.qsum, nrows * kHeadDim * sizeof(bf16_bits)));
    CISA_CUDA(cudaMalloc(&m.keys, nrows * static_cast<std::size_t>(plan_.score_stride) * sizeof(std::uint16_t)));
    CISA_CUDA(cudaMalloc(&m.sparse, nrows * static_cast<std::size_t>(plan_.sparse_stride) * sizeof(int)));
  }
  AttnArgs a;
  a.r = r_;
  a.work_host = &plan_.work;
  splits_ = attention_num_splits(a, num_sms);
  m.scratch_floats = attention_scratch_floats(static_cast<int>(plan_.work.size()), splits_, plan_.rows_per_cta);
  a.num_splits = splits_;
  a.early = !plan_.score_rows.empty();  // an early part exists only beside a top-k
  m.early = attention_early(a);
  if (m.scratch_floats > 0) CISA_CUDA(cudaMalloc(&m.scratch, static_cast<std::size_t>(m.scratch_floats) * sizeof(float)));
  set_pipeline(1);
}

CisaStep::~CisaStep() {
  auto& m = *impl_;
  for (auto& p : m.parts) cudaFree(p.scratch);
  if (m.st_topk != nullptr) {
    for (int k = 0; k < kMaxParts; ++k) {
      cudaEventDestroy(m.ev_score[k]);
      cudaEventDestroy(m.ev_topk[k]);
      cudaEventDestroy(m.ev_join[k]);
      cudaStreamDestroy(m.st_attn[k]);
    }
    cudaStreamDestroy(m.st_topk);
    cudaEventDestroy(m.ev_fork);
  }
  cudaFreeHost(m.host_blob);
  cudaFree(m.dev_blob);
  cudaFree(m.qsum);
  cudaFree(m.keys);
  cudaFree(m.sparse);
  cudaFree(m.scratch);
}

void CisaStep::set_pipeline(int parts, bool reserve) {
  auto& m = *impl_;
  for (auto& p : m.parts) cudaFree(p.scratch);
  m.parts.clear();
  m.parts_wanted = std::max(1, std::min(parts, kMaxParts));
  if (m.parts_wanted < 2) return;
  m.parts = cut_plan(plan_, m.parts_wanted);
  if (!m.parts.empty() && m.st_topk == nullptr) {  // streams and events, made on first use
    CISA_CUDA(cudaEventCreateWithFlags(&m.ev_fork, cudaEventDisableTiming));
    int least = 0, greatest = 0;
    CISA_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CISA_CUDA(cudaStreamCreateWithPriority(&m.st_topk, cudaStreamNonBlocking, greatest));
    for (int k = 0; k < kMaxParts; ++k) {
      CISA_CUDA(cudaEventCreateWithFlags(&m.ev_score[k], cudaEventDisableTiming));
      CISA_CUDA(cudaEventCreateWithFlags(&m.ev_topk[k], cudaEventDisableTiming));
      CISA_CUDA(cudaEventCreateWithFlags(&m.ev_join[k], cudaEventDisableTiming));
      CISA_CUDA(cudaStreamCreateWithPriority(&m.st_attn[k], cudaStreamNonBlocking, std::min(least, greatest + 1)));
    }
  }
  for (auto& p : m.parts) {
    int max_ne = 0;
    for (const auto& t : p.topk) max_ne = std::max(max_ne, t.n_e);
    p.topk_ctas = topk_plan(max_ne, static_cast<int>(p.topk.size()), true).cluster * static_cast<int>(p.topk.size());
  }
  const int n = static_cast<int>(m.parts.size());
  for (int k = 0; k < n; ++k) {
    StepPart& p = m.parts[static_cast<std::size_t>(k)];
    p.score_reserve = reserve && k > 0 ? m.parts[static_cast<std::size_t>(k - 1)].topk_ctas : 0;
    const int next_topk = reserve && k + 1 < n ? m.parts[static_cast<std::size_t>(k + 1)].topk_ctas : 0;
    AttnArgs a;
    a.r = r_;
    a.work_host = &p.work;
    p.splits = attention_num_splits(a, std::max(1, num_sms_ - next_topk));
    p.scratch_floats = attention_scratch_floats(static_cast<int>(p.work.size()), p.splits,
                                                attention_rows_per_cta(p.work, r_));
    if (p.scratch_floats > 0)
      CISA_CUDA(cudaMalloc(&p.scratch, static_cast<std::size_t>(p.scratch_floats) * sizeof(float)));
  }
}

int CisaStep::pipeline_parts() const { return std::max<int>(1, static_cast<int>(impl_->parts.size())); }

const int* CisaStep::sparse_table() const { return impl_->sparse; }
const std::uint16_t* CisaStep::score_keys() const { return impl_->keys; }

void CisaStep::upload(Stream s, Instrument* ins) {
  auto& m = *impl_;
  ScopedLaunch sl(ins, Component::setup, "upload_descriptors", static_cast<double>(m.blob_bytes), 0, 0, s);
  CISA_CUDA(cudaMemcpyAsync(m.dev_blob, m.host_blob, m.blob_bytes, cudaMemcpyHostToDevice, s));
}

namespace {

struct DevDesc {
  const ScoreRow* rows;
  const ScoreGroup* groups;
  const TopkRow* topk;
  const AttnWork* work;
};

void score_range(const DevDesc& d, const CisaPlan& plan, bf16_bits* qsum, std::uint16_t* keys,
                 const std::vector<ScoreRow>& rows, const std::vector<ScoreGroup>& groups, int r0, int g0,
                 const bf16_bits* iq, const bf16_bits* reps, const BlockTable& table, const BlockTable& rep_table,
                 int kv_heads, Stream s, Instrument* ins, int reserve = 0) {
  if (rows.empty()) return;
  ScoreArgs a;
  a.iq = iq;
  a.reps = reps;
  a.table = table;
  a.rep_table = rep_table;
  a.rows = d.rows;
  a.groups = d.groups + g0;
  a.qsum = qsum;
  a.score_keys = keys;
  a.score_stride = plan.score_stride;
  a.kv_heads = kv_heads;
  a.rows_host = &rows;
  a.groups_host = &groups;
  a.row_begin = r0;
  a.reserve_ctas = reserve;
  score_pages(a, s, ins);
}

void topk_range(const DevDesc& d, const CisaPlan& plan, const std::uint16_t* keys, int* sparse,
                const std::vector<TopkRow>& rows, int r0, const BlockTable& table, bool early, Stream s,
                Instrument* ins) {
  if (rows.empty()) return;
  TopkArgs a;
  a.score_keys = keys + static_cast<std::int64_t>(r0) * plan.score_stride;
  a.score_stride = plan.score_stride;
  a.rows = d.topk + r0;
  a.table = table;
  a.out = sparse + static_cast<std::int64_t>(r0) * plan.sparse_stride;
  a.out_stride = plan.sparse_stride;
  a.k = plan.budget;
  // the attention after it reads its early part (window and tail pages) meanwhile
  a.trigger_dependents = early;
  a.rows_host = &rows;
  topk_select(a, s, ins);
}

void attention_range(const DevDesc& d, const CisaPlan& plan, const int* sparse, const std::vector<AttnWork>& work,
                     int w0, int splits, float* scratch, std::int64_t scratch_floats, int kv_heads, int r,
                     const bf16_bits* q, bf16_bits* o, const PagedKV& kv, const BlockTable& table, bool early,
                     Stream s, Instrument* ins) {
  AttnArgs a;
  a.q = q;
  a.o = o;
  a.kv = kv;
  a.table = table;
  a.sparse = BlockTable{sparse, plan.sparse_stride};
  a.work = d.work + w0;
  a.n_work = static_cast<int>(work.size());
  a.h_q = kv_heads * r;
  a.r = r;
  a.scratch = scratch;
  a.scratch_floats = scratch_floats;
  a.num_splits = splits;
  a.work_host = &work;
  // the window and tail pages (block table) are read while the top-k runs: Q, the block table and
  // the pages are inputs of the step, which the top-k does not write
  a.early = early;
  paged_attention(a, s, ins);
}

DevDesc dev_desc(void* blob, std::size_t off_rows, std::size_t off_groups, std::size_t off_topk, std::size_t off_work) {
  auto* db = static_cast<unsigned char*>(blob);
  return DevDesc{reinterpret_cast<const ScoreRow*>(db + off_rows), reinterpret_cast<const ScoreGroup*>(db + off_groups),
                 reinterpret_cast<const TopkRow*>(db + off_topk), reinterpret_cast<const AttnWork*>(db + off_work)};
}

}  // namespace

void CisaStep::run_scoring(const bf16_bits* iq, const bf16_bits* reps, const BlockTable& table, int kv_heads,
                           Stream s, Instrument* ins, const BlockTable& rep_table) {
  auto& m = *impl_;
  const DevDesc d = dev_desc(m.dev_blob, m.off_rows, m.off_groups, m.off_topk, m.off_work);
  score_range(d, plan_, m.qsum, m.keys, plan_.score_rows, plan_.score_groups, 0, 0, iq, reps, table, rep_table, kv_heads,
              s, ins);
}

void CisaStep::run_topk(const BlockTable& table, Stream s, Instrument* ins) {
  auto& m = *impl_;
  const DevDesc d = dev_desc(m.dev_blob, m.off_rows, m.off_groups, m.off_topk, m.off_work);
  topk_range(d, plan_, m.keys, m.sparse, plan_.topk_rows, 0, table, m.early, s, ins);
}

void CisaStep::run_attention(const bf16_bits* q, bf16_bits* o, const PagedKV& kv, const BlockTable& table, Stream s,
                             Instrument* ins) {
  auto& m = *impl_;
  const DevDesc d = dev_desc(m.dev_blob, m.off_rows, m.off_groups, m.off_topk, m.off_work);
  attention_range(d, plan_, m.sparse, plan_.work, 0, splits_, m.scratch, m.scratch_floats, kv_heads_, r_, q, o, kv,
                  table, m.early, s, ins);
}

void CisaStep::run(const bf16_bits* q, const bf16_bits* iq, bf16_bits* o, const PagedKV& kv, const bf16_bits* reps,
                   const BlockTable& table, Stream s, Instrument* ins, const BlockTable& rep_table) {
  auto& m = *impl_;
  const int n = static_cast<int>(m.parts.size());
  if (ins != nullptr || n < 2) {
    run_scoring(iq, reps, table, kv.kv_heads, s, ins, rep_table);
    run_topk(table, s, ins);
    run_attention(q, o, kv, table, s, ins);
    return;
  }
  // pipelined: scoring part after part on s, top-k on st_topk, attention of part k on st_attn[k]
  const DevDesc d = dev_desc(m.dev_blob, m.off_rows, m.off_groups, m.off_topk, m.off_work);
  CISA_CUDA(cudaEventRecord(m.ev_fork, s));
  CISA_CUDA(cudaStreamWaitEvent(m.st_topk, m.ev_fork, 0));
  for (int k = 0; k < n; ++k) CISA_CUDA(cudaStreamWaitEvent(m.st_attn[k], m.ev_fork, 0));
  for (int k = 0; k < n; ++k) {
    const StepPart& p = m.parts[static_cast<std::size_t>(k)];
    score_range(d, plan_, m.qsum, m.keys, p.rows, p.groups, p.r0, p.g0, iq, reps, table, rep_table, kv.kv_heads, s, nullptr,
                p.score_reserve);
    CISA_CUDA(cudaEventRecord(m.ev_score[k], s));
  }
  for (int k = 0; k < n; ++k) {
    const StepPart& p = m.parts[static_cast<std::size_t>(k)];
    CISA_CUDA(cudaStreamWaitEvent(m.st_topk, m.ev_score[k], 0));
    topk_range(d, plan_, m.keys, m.sparse, p.topk, p.r0, table, false, m.st_topk, nullptr);
    CISA_CUDA(cudaEventRecord(m.ev_topk[k], m.st_topk));
  }
  for (int k = 0; k < n; ++k) {
    const StepPart& p = m.parts[static_cast<std::size_t>(k)];
    CISA_CUDA(cudaStreamWaitEvent(m.st_attn[k], m.ev_topk[k], 0));
    attention_range(d, plan_, m.sparse, p.work, p.w0, p.splits, p.scratch, p.scratch_floats, kv_heads_, r_, q, o, kv,
                    table, false, m.st_attn[k], nullptr);
    CISA_CUDA(cudaEventRecord(m.ev_join[k], m.st_attn[k]));
    CISA_CUDA(cudaStreamWaitEvent(s, m.ev_join[k], 0));
  }
  CISA_CUDA(cudaStreamWaitEvent(s, m.ev_topk[n - 1], 0));
}

}  // namespace cisa::kernels
