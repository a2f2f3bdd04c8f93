// The vocabulary of the model: geometry, CISA settings, workload. Plain data; validation lives in
// validate.cpp, parsing in scenario.cpp. One name per concept (see README glossary).
#pragma once

#include <cstdint>
#include <string>

namespace cisa {

enum class Dtype { bf16, fp8 };
enum class RepKind { mean, minmax };       // mean of the page's keys; Quest-style per-channel bounds
enum class ScoreAgg { sum, max, last };    // how a QShare group's positions combine into one score
enum class Phase { terminal_prefill, full_prefill, decode, mtp };

double dtype_bytes(Dtype d);
std::string to_string(Dtype d);
std::string to_string(RepKind k);
std::string to_string(ScoreAgg a);
std::string to_string(Phase p);
// Parsers throw std::invalid_argument listing the accepted values.
Dtype parse_dtype(const std::string& s);
RepKind parse_rep_kind(const std::string& s);
ScoreAgg parse_score_agg(const std::string& s);
Phase parse_phase(const std::string& s);

// Attention geometry of one global-attention layer on one tensor-parallel rank.
struct Geometry {
  int q_heads = 32;   // per rank
  int kv_heads = 1;   // per rank (one indexer per KV group)
  int head_dim = 128;
  int hidden = 4096;  // model hidden size: the index projection reads x_t of this width
  int heads_per_group() const { return q_heads / kv_heads; }  // r
};

struct CisaConfig {
  int chunk_tokens = 16;           // c: chunk = KV page size
  int window_pages = 128;          // W: recent full pages always read
  std::int64_t budget_chunks = 4096;  // K: remote chunks selected per selection
  int qshare_g = 4;                // G: adjacent positions sharing one selection
  Dtype kv_dtype = Dtype::bf16;
  Dtype rep_dtype = Dtype::bf16;
  int rep_dim = 0;                 // d_r; 0 means "= head_dim"
  RepKind rep_kind = RepKind::mean;
  ScoreAgg score_agg = ScoreAgg::sum;
  double selection_overlap = 0.0;  // share of a selection's pages also chosen by the previous group
};

struct Workload {
  Phase phase = Phase::terminal_prefill;
  std::int64_t context_tokens = 1 << 20;  // L: tokens in each sequence after this forward
  int batch = 16;                         // sequences per forward
  int prefill_tokens = 512;               // P: positions per sequence per prefill forward
  int mtp_tokens = 4;                     // k: draft positions sharing one selection (phase mtp)
};

// Effective G of a phase: decode has one position, MTP shares one selection over k drafts.
int effective_qshare(const CisaConfig& cfg, const Workload& w);
// Positions per sequence per forward.
int positions_per_forward(const Workload& w);

// The attention tile classes of per-class figures (16 / 32 / 64 / 128 rows): the index of a tile of
// `rows` rows, and the class's name in profiles ("m16" ... "m128").
inline int tile_class_index(int rows) {
  return rows <= 16 ? 0 : rows <= 32 ? 1 : rows <= 64 ? 2 : 3;
}
inline constexpr const char* kTileClassNames[4] = {"m16", "m32", "m64", "m128"};

// How an attention implementation splits the KV length of a short grid into pieces:
//   always: prefill and decode, enough pieces to fill 80 % of the SMs (this project's kernels);
//   decode: the same, in decode only (cuDNN, Flex: a prefill grid is query tiles x heads x batch);
//   fa2: FlashAttention-2's num_splits_heuristic (PyTorch flash_api.cpp), in both phases.
// How an attention kernel splits the KV length: `always` (prefill and decode, when the grid is
// short), `decode` (decode only), `fa2` (FlashAttention-2's heuristic), `waves` (always, and a grid
// of many equal works also splits to fill its last wave: this project's kernels since session 6).
enum class SplitKv { always, decode, fa2, waves };

}  // namespace cisa
