// The CISA step on the device: one descriptor upload (setup), scoring, top-k, attention.
#include <cstring>

#include "cisa_kernels/cisa_step.hpp"
#include "common.cuh"

namespace cisa::kernels {

namespace {
std::size_t align256(std::size_t x) { return (x + 255) / 256 * 256; }
}  // namespace

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
};

CisaStep::CisaStep(const CisaPlan& plan, int kv_heads, int r, int num_sms)
    : impl_(std::make_unique<Impl>()), plan_(plan), kv_heads_(kv_heads), r_(r) {
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
  std::memcpy(hb + m.off_rows, plan_.score_rows.data(), plan_.score_rows.size() * sizeof(ScoreRow));
  std::memcpy(hb + m.off_groups, plan_.score_groups.data(), plan_.score_groups.size() * sizeof(ScoreGroup));
  std::memcpy(hb + m.off_topk, plan_.topk_rows.data(), plan_.topk_rows.size() * sizeof(TopkRow));
  std::memcpy(hb + m.off_work, plan_.work.data(), plan_.work.size() * sizeof(AttnWork));
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
  if (m.scratch_floats > 0) CISA_CUDA(cudaMalloc(&m.scratch, static_cast<std::size_t>(m.scratch_floats) * sizeof(float)));
}

CisaStep::~CisaStep() {
  auto& m = *impl_;
  cudaFreeHost(m.host_blob);
  cudaFree(m.dev_blob);
  cudaFree(m.qsum);
  cudaFree(m.keys);
  cudaFree(m.sparse);
  cudaFree(m.scratch);
}

const int* CisaStep::sparse_table() const { return impl_->sparse; }
const std::uint16_t* CisaStep::score_keys() const { return impl_->keys; }

void CisaStep::upload(Stream s, Instrument* ins) {
  auto& m = *impl_;
  ScopedLaunch sl(ins, Component::setup, "upload_descriptors", static_cast<double>(m.blob_bytes), 0, 0, s);
  CISA_CUDA(cudaMemcpyAsync(m.dev_blob, m.host_blob, m.blob_bytes, cudaMemcpyHostToDevice, s));
}

void CisaStep::run_scoring(const bf16_bits* iq, const bf16_bits* reps, const BlockTable& table, int kv_heads,
                           Stream s, Instrument* ins) {
  if (plan_.score_rows.empty()) return;
  auto& m = *impl_;
  auto* db = static_cast<unsigned char*>(m.dev_blob);
  ScoreArgs a;
  a.iq = iq;
  a.reps = reps;
  a.table = table;
  a.rows = reinterpret_cast<const ScoreRow*>(db + m.off_rows);
  a.groups = reinterpret_cast<const ScoreGroup*>(db + m.off_groups);
  a.qsum = m.qsum;
  a.score_keys = m.keys;
  a.score_stride = plan_.score_stride;
  a.kv_heads = kv_heads;
  a.rows_host = &plan_.score_rows;
  a.groups_host = &plan_.score_groups;
  score_pages(a, s, ins);
}

void CisaStep::run_topk(const BlockTable& table, Stream s, Instrument* ins) {
  if (plan_.topk_rows.empty()) return;
  auto& m = *impl_;
  auto* db = static_cast<unsigned char*>(m.dev_blob);
  TopkArgs a;
  a.score_keys = m.keys;
  a.score_stride = plan_.score_stride;
  a.rows = reinterpret_cast<const TopkRow*>(db + m.off_topk);
  a.table = table;
  a.out = m.sparse;
  a.out_stride = plan_.sparse_stride;
  a.k = plan_.budget;
  a.rows_host = &plan_.topk_rows;
  topk_select(a, s, ins);
}

void CisaStep::run_attention(const bf16_bits* q, bf16_bits* o, const PagedKV& kv, const BlockTable& table, Stream s,
                             Instrument* ins) {
  auto& m = *impl_;
  auto* db = static_cast<unsigned char*>(m.dev_blob);
  AttnArgs a;
  a.q = q;
  a.o = o;
  a.kv = kv;
  a.table = table;
  a.sparse = BlockTable{m.sparse, plan_.sparse_stride};
  a.work = reinterpret_cast<const AttnWork*>(db + m.off_work);
  a.n_work = static_cast<int>(plan_.work.size());
  a.h_q = kv_heads_ * r_;
  a.r = r_;
  a.scratch = m.scratch;
  a.scratch_floats = m.scratch_floats;
  a.num_splits = splits_;
  a.work_host = &plan_.work;
  paged_attention(a, s, ins);
}

void CisaStep::run(const bf16_bits* q, const bf16_bits* iq, bf16_bits* o, const PagedKV& kv, const bf16_bits* reps,
                   const BlockTable& table, Stream s, Instrument* ins) {
  upload(s, ins);
  run_scoring(iq, reps, table, kv.kv_heads, s, ins);
  run_topk(table, s, ins);
  run_attention(q, o, kv, table, s, ins);
}

}  // namespace cisa::kernels
