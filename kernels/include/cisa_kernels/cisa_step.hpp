// The CISA step: scoring -> top-k -> attention for a batch, planned on the host.
// Selection unit: (sequence, KV head, QShare group of G consecutive new positions). For a group
// starting at logical position t0: N = floor(t0/16) full pages, window = the W pages before page N,
// tail = pages N .. floor(t_last/16) (causally masked), N_e = max(0, N - W) eligible pages.
// N_e <= K: dense path (the block table itself, no scoring, no top-k). A group that crosses the point
// where N_e first exceeds K is split into a dense prefix and a sparse suffix.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "cisa_kernels/attention.hpp"
#include "cisa_kernels/instrument.hpp"
#include "cisa_kernels/paged_kv.hpp"
#include "cisa_kernels/scoring.hpp"
#include "cisa_kernels/topk.hpp"

namespace cisa::kernels {

struct StepConfig {
  int window_pages = 128;  // W
  int budget = 4096;       // K
  int qshare_g = 4;        // G
  int max_rows = kMaxAttnRows;  // rows per attention work item (64 or 128; a group with more is split)
};

struct StepBatch {
  std::vector<int> history;     // tokens cached before this forward, per sequence
  std::vector<int> new_tokens;  // positions of this forward per sequence (already written to the cache)
  int kv_heads = 1;
  int r = 4;                    // query heads per KV head
};

struct CisaPlan {
  std::vector<ScoreRow> score_rows;     // one per sparse selection
  std::vector<ScoreGroup> score_groups;
  std::vector<TopkRow> topk_rows;       // same order as score_rows; sparse table row = index
  std::vector<AttnWork> work;
  int sparse_stride = 0;                // K + W + max tail pages
  int score_stride = 0;                 // max n_e
  int budget = 0;
  int rows_per_cta = 16;
  std::int64_t total_tokens = 0;        // T
};

// Query token rows of sequence b start at sum of new_tokens[0..b).
std::vector<int> token_offsets(const StepBatch& b);
CisaPlan plan_cisa_step(const StepBatch& b, const StepConfig& c);
// Dense baseline: the same attention kernel over the full block table, tiles of floor(128/r) positions.
CisaPlan plan_dense(const StepBatch& b, int max_rows = kMaxAttnRows);

// Device side of a plan: descriptor buffers, scratch, the sparse block table.
class CisaStep {
 public:
  CisaStep(const CisaPlan& plan, int kv_heads, int r, int num_sms);
  ~CisaStep();
  CisaStep(const CisaStep&) = delete;
  CisaStep& operator=(const CisaStep&) = delete;

  // Scoring, top-k, attention. The descriptors were uploaded once by the constructor (they depend
  // only on the plan): no per-step copy. With ins == nullptr and pipeline_parts() > 1 the batch runs
  // as pipelined parts on parallel streams (forked from and joined back into s; capturable in a CUDA
  // graph); with an Instrument the launches run in series on s (component times).
  // rep_table: the representatives' rep table when reps are in logical order (paged_kv.hpp; the
  // scoring then streams them), ids == nullptr: reps indexed by physical page.
  void run(const bf16_bits* q, const bf16_bits* iq, bf16_bits* o, const PagedKV& kv,
           const bf16_bits* reps, const BlockTable& table, Stream s, Instrument* ins = nullptr,
           const BlockTable& rep_table = BlockTable{});
  // Parts of the pipelined run: the plan's sequences cut into `parts` pieces of about equal
  // eligible pages (at most 4; 1 = serial, the default: on the H200 2 parts ran as fast as serial
  // and 3-4 slower, NOTES.md session 6). Falls back to serial when the plan cannot be cut.
  // reserve: the kernels that run beside a top-k launch leave it room (see cisa_step.cu). The
  // parts' split-KV scratch is reallocated: a graph captured before the call must not be replayed.
  // Instrumented runs are serial whatever the parts.
  void set_pipeline(int parts, bool reserve = true);
  int pipeline_parts() const;
  // Pieces, for benchmarks that time one component. upload() copies the descriptors again
  // (component setup; run() does not call it).
  void upload(Stream s, Instrument* ins = nullptr);
  void run_scoring(const bf16_bits* iq, const bf16_bits* reps, const BlockTable& table, int kv_heads,
                   Stream s, Instrument* ins = nullptr, const BlockTable& rep_table = BlockTable{});
  void run_topk(const BlockTable& table, Stream s, Instrument* ins = nullptr);
  void run_attention(const bf16_bits* q, bf16_bits* o, const PagedKV& kv, const BlockTable& table,
                     Stream s, Instrument* ins = nullptr);

  const int* sparse_table() const;  // device [n_sparse][sparse_stride]
  const std::uint16_t* score_keys() const;  // device [n_score_rows][score_stride] 16-bit score keys
  int num_splits() const { return splits_; }
  const CisaPlan& plan() const { return plan_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  CisaPlan plan_;
  int kv_heads_, r_, num_sms_, splits_ = 1;
};

}  // namespace cisa::kernels
