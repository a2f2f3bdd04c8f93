// Scoring: per selection (sequence, KV group, QShare group of positions) one summed index query
// (fp32 sum of the group's BF16 index queries, rounded to BF16) dotted with the representatives of the
// eligible pages: logical pages [0, n_e) of the sequence, read through its block table -> one 16-bit
// order-preserving key per score (the top half of the fp32 score's order-preserving uint32 key: the
// score truncated to BF16 precision; top-k keeps its order, ties among equal keys go to the lower page).
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "cisa_kernels/instrument.hpp"
#include "cisa_kernels/paged_kv.hpp"

namespace cisa::kernels {

struct ScoreRow {
  int seq = 0;      // batch index (block-table row)
  int kv_head = 0;
  int q_tok0 = 0;   // first token row of the group in IQ [T][kv_heads][128]
  int n_q = 1;      // positions summed
  int n_e = 0;      // eligible pages (scores written for logical pages [0, n_e))
};

// Consecutive score rows sharing (seq, kv_head): the representatives are streamed once for them.
struct ScoreGroup {
  int row0 = 0;
  int n_rows = 0;   // <= kMaxScoreGroupRows
  int seq = 0;
  int kv_head = 0;
  int max_ne = 0;
};
inline constexpr int kMaxScoreGroupRows = 128;

// fp32 score -> 16-bit key (order-preserving: a > b implies key(a) >= key(b)).
inline std::uint16_t score_key16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return static_cast<std::uint16_t>(u >> 16);
}
// 16-bit key -> an fp32 value with exactly the key's order (strictly increasing in the key).
inline float score_from_key16(std::uint16_t k) {
  std::uint32_t u = static_cast<std::uint32_t>(k) << 16;
  u = (u & 0x80000000u) ? (u & 0x7fffffffu) : ~u;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Builds groups from rows that are already ordered by (seq, kv_head).
std::vector<ScoreGroup> make_score_groups(const std::vector<ScoreRow>& rows);

struct ScoreArgs {
  // device
  const bf16_bits* iq = nullptr;       // [T][kv_heads][128]
  const bf16_bits* reps = nullptr;     // [num_pages][kv_heads][128], or logical order (rep_table)
  BlockTable table;
  // the representatives' rep table (paged_kv.hpp): when set, reps are in logical order and read
  // through it (contiguous 16 KB blocks of 64 pages); ids == nullptr: through `table`
  BlockTable rep_table;
  const ScoreRow* rows = nullptr;      // [n_rows]
  const ScoreGroup* groups = nullptr;  // [n_groups]
  bf16_bits* qsum = nullptr;           // scratch [n_rows][128]
  std::uint16_t* score_keys = nullptr;  // [n_rows][score_stride], score_stride % 8 == 0
  int score_stride = 0;
  int kv_heads = 1;
  // host copies (grid sizes, byte/FLOP accounting): rows_host holds the device rows
  // [row_begin, row_begin + rows_host->size()) (groups' row0 index the whole device array), groups_host
  // the groups that `groups` points to
  const std::vector<ScoreRow>* rows_host = nullptr;
  const std::vector<ScoreGroup>* groups_host = nullptr;
  int row_begin = 0;
  // one-row path (decode): CTA slots of the card to leave free for a kernel running beside it
  int reserve_ctas = 0;
};

// Two launches: sum_index_queries and score_pages (component scoring); one launch,
// score_pages_gemv, when every group has one row of at most 4 summed positions (decode).
void score_pages(const ScoreArgs& a, Stream s, Instrument* ins = nullptr);

}  // namespace cisa::kernels
