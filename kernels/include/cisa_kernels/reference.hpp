// CPU references (Eigen, fp32/fp64) for every kernel and for the whole CISA step. Host pointers.
#pragma once
#include <cstdint>
#include <vector>

#include "cisa_kernels/attention.hpp"
#include "cisa_kernels/cisa_step.hpp"
#include "cisa_kernels/paged_kv.hpp"
#include "cisa_kernels/scoring.hpp"
#include "cisa_kernels/topk.hpp"

namespace cisa::kernels::ref {

// fp32 mean of each page's keys: [num_pages][kv_heads][128].
std::vector<float> representatives(const PagedKV& kv);

// Summed index query of a row, fp32 sum rounded to BF16 (what the kernel dots with).
std::vector<float> summed_query(const bf16_bits* iq, int kv_heads, const ScoreRow& row);

// Scores [rows][stride] (fp64 dot products of the BF16 values); entries >= n_e are NaN.
std::vector<float> scores(const bf16_bits* iq, const bf16_bits* reps, int kv_heads, const BlockTable& t,
                          const std::vector<ScoreRow>& rows, int stride);

// K highest of scores[0, n_e) (ties -> lower index), ascending logical page indices.
std::vector<int> topk(const float* scores, int n_e, int k);

// Full sparse table row: K selected (physical, ascending logical) + logical [n_e, list_end) physical.
std::vector<int> sparse_row(const float* scores, const TopkRow& row, int k, const BlockTable& t);

// Attention of the listed works into o ([T][h_q][128], fp32); rows not covered are left untouched.
void attention(const bf16_bits* q, const PagedKV& kv, const BlockTable& table, const BlockTable& sparse,
               const std::vector<AttnWork>& work, int h_q, int r, float scale, std::vector<float>& o);

// The whole step: representatives from the cache, scoring, top-k, sparse table, attention.
struct StepResult {
  std::vector<float> o;          // [T][h_q][128]
  std::vector<float> scores;     // [score rows][score_stride], at the 16-bit key precision the kernels use
  std::vector<int> sparse;       // [score rows][sparse_stride]
};
StepResult cisa_step(const CisaPlan& plan, const StepBatch& b, const bf16_bits* q, const bf16_bits* iq,
                     const PagedKV& kv, const BlockTable& table, float scale);

}  // namespace cisa::kernels::ref
