// cisa_route: routing diagnostics and indexer initialisation on attention activations
// (issue 7; method doc §2). CPU only. The heavy part (dense attention mass per page) is Eigen
// GEMMs over blocks of keys; everything else is cheap post-processing of that mass.
//
// This header is deliberately free of Eigen types: the library may be compiled with
// -march=native (see src/route/CMakeLists.txt) and must not share Eigen objects with
// translation units compiled differently.
//
// Definitions (see src/route/README.md for the long form):
//   * A query at absolute position t sees tokens 0..t. Page (chunk) of token i = i / c.
//   * N(t) = floor(t / c) full pages lie strictly before the current page t / c.
//   * Window: pages [N - W, N) (clamped at 0); eligible remote pages: [0, N_e), N_e = max(0, N - W).
//   * Tail: the current page(s), always read, causally masked.
//   * QShare group: G consecutive *analysed* positions p0..p0+G-1 (in the order of
//     `positions`). The group's geometry (N, N_e, window) is that of its first position, so
//     every selected page is visible to every member; member p also reads the tail pages
//     N(t_p0) .. t_p / c.
//   * Selection: if N_e <= K every eligible page; else the top K by score (ties: lower page
//     first). Score of page j for the group: sum -> phi(sum_t iq_t) . psi_j, max -> max_t
//     phi(iq_t) . psi_j, last -> phi(iq_last) . psi_j; for mean representatives phi(q) = q and
//     psi_j = mean key; for minmax (Quest bound) phi(q) = [max(q,0), min(q,0)] and
//     psi_j = [per-channel max, per-channel min], so phi . psi = sum_i max(q_i min_i, q_i max_i).
//   * Recall of head h at position p: dense attention probability (softmax over tokens 0..t_p,
//     scale 1/sqrt(d)) inside the pages that position reads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace cisa::route {

// ---------------------------------------------------------------- activations (one layer)
struct LayerActivations {
  int layer = 0;
  std::int64_t tokens = 0;               // T: keys 0..T-1 are present
  int q_heads = 0, kv_heads = 0, head_dim = 0;
  std::vector<std::int64_t> positions;   // P analysed positions, strictly ascending, < T
  std::vector<float> q;                  // [P][q_heads][head_dim], as used by attention
  std::vector<float> k;                  // [T][kv_heads][head_dim]
  int hidden = 0;                        // 0 when x / w_q are absent
  std::vector<float> x;                  // optional [P][hidden] hidden states
  std::vector<float> w_q;                // optional [q_heads*head_dim][hidden], row h*d+i

  std::int64_t num_positions() const { return static_cast<std::int64_t>(positions.size()); }
  int heads_per_group() const { return kv_heads > 0 ? q_heads / kv_heads : 0; }
  const float* q_row(std::int64_t p, int h) const {
    return q.data() + (p * q_heads + h) * head_dim;
  }
  const float* k_row(std::int64_t t, int g) const {
    return k.data() + (t * kv_heads + g) * head_dim;
  }
  bool has_projection() const { return hidden > 0 && !x.empty() && !w_q.empty(); }
  // Throws cisa::InputError naming `source` (file) and the offending field.
  void validate(const std::string& source = "") const;
};

// HDF5 activations file (layout documented in src/route/README.md and activations.cpp).
struct ActivationsInfo {
  std::int64_t chunk_tokens = 16;  // file attribute "chunk_tokens" (default 16)
  std::vector<int> layers;         // indices of /layers/<i>, ascending
};
ActivationsInfo read_activations_info(const std::filesystem::path& path);
LayerActivations read_layer(const std::filesystem::path& path, int layer);
// Writes float32 datasets (atomically: <path>.tmp.<pid>, then rename).
void write_activations(const std::filesystem::path& path,
                       const std::vector<const LayerActivations*>& layers,
                       std::int64_t chunk_tokens);

// ---------------------------------------------------------------- synthetic generator
enum class HeadKind { local, retrieval, sink, diffuse };
std::string to_string(HeadKind k);
HeadKind parse_head_kind(const std::string& s);  // throws cisa::InputError

struct SyntheticConfig {
  std::int64_t tokens = 4096;
  std::int64_t positions = 64;  // analysed positions = the last `positions` tokens
  int q_heads = 8, kv_heads = 2, head_dim = 64;
  std::int64_t chunk_tokens = 16;
  std::vector<HeadKind> head_kinds = {HeadKind::retrieval, HeadKind::local, HeadKind::sink,
                                      HeadKind::diffuse};  // per head of a group, cycled
  int needles = 4;                   // planted needle pages per KV group
  std::int64_t needle_min_age = 16;  // needles lie >= this many pages before the first position
  double needle_logit = 6.0;         // logit boost of needle tokens for retrieval heads
  double sink_logit = 6.0;           // logit boost of sink tokens for sink heads
  double sink_logit_all = 2.0;       // ... and for every other head
  int sink_tokens = 4;
  double local_length = 32.0;        // tokens: e-folding length of local heads' attention
  double key_noise = 1.0;            // per-token key noise (std per channel)
  double chunk_coherence = 1.0;      // std of each page's shared key component per channel
  double query_noise = 1.0;          // std of the query's random part per channel
  double query_correlation = 0.9;    // AR(1) correlation of the random part between positions
  bool with_projection = true;       // also emit x and w_q with q = w_q x exactly
  std::uint64_t seed = 1;
  int layer = 0;
  int threads = 0;                   // 0: hardware concurrency
};
struct SyntheticTruth {
  std::vector<std::vector<std::int64_t>> needle_pages;  // [kv_group] sorted page indices
  std::vector<HeadKind> kinds;                          // [q_head]
};
LayerActivations make_synthetic(const SyntheticConfig& cfg, SyntheticTruth* truth = nullptr);

// ---------------------------------------------------------------- dense attention mass per page
struct ComputeOptions {
  int threads = 0;                // 0: hardware concurrency
  std::int64_t key_block = 1024;  // keys per GEMM block (rounded to a multiple of the chunk)
};
struct PageMass {
  std::int64_t positions = 0, pages = 0, chunk_tokens = 0;
  int q_heads = 0;
  std::vector<float> mass;  // [P][q_heads][pages]: softmax probability summed over each page
  const float* row(std::int64_t p, int h) const {
    return mass.data() + (p * q_heads + h) * pages;
  }
};
PageMass dense_page_mass(const LayerActivations& a, std::int64_t chunk_tokens,
                         const ComputeOptions& opt = {});
// Straightforward double-precision loops; for tests.
PageMass dense_page_mass_reference(const LayerActivations& a, std::int64_t chunk_tokens);

// ---------------------------------------------------------------- representatives and scoring
enum class RepRule { mean, minmax };
enum class Aggregation { sum, max, last };
std::string to_string(RepRule r);
std::string to_string(Aggregation a);
RepRule parse_rep_rule(const std::string& s);        // throws cisa::InputError
Aggregation parse_aggregation(const std::string& s);  // throws cisa::InputError

struct Representatives {
  RepRule rule = RepRule::mean;
  std::int64_t pages = 0;  // full pages only
  int kv_heads = 0, head_dim = 0, dim = 0;  // dim = head_dim (mean) or 2*head_dim (minmax)
  std::vector<float> psi;  // [kv_heads][pages][dim]
  const float* row(int g, std::int64_t j) const {
    return psi.data() + (static_cast<std::int64_t>(g) * pages + j) * dim;
  }
};
Representatives make_representatives(const LayerActivations& a, std::int64_t chunk_tokens,
                                     RepRule rule);
// phi(q): the scoring-side transform of an index query (see the header comment).
void score_query(RepRule rule, const float* iq, int head_dim, float* phi_out);

// Candidate c of KV group g: c < r -> the projection of query head g*r + c; c == r -> the
// row-wise mean of the group's projections. Index queries are linear in the projection, so
// iq = q of that head, or the mean of the group's q.
std::string candidate_label(int c, int r);
// iq[P][kv_heads][head_dim] from one candidate per group.
std::vector<float> index_queries(const LayerActivations& a, const std::vector<int>& candidate);

// ---------------------------------------------------------------- selection
struct SelectionGeometry {
  std::int64_t chunk_tokens = 16;
  std::int64_t qshare_g = 1;
  std::int64_t window_pages = 128;
  Aggregation aggregation = Aggregation::sum;
};
struct GroupSelection {  // one QShare group x one KV group
  std::int64_t p_begin = 0, p_end = 0;  // analysed positions [p_begin, p_end)
  int kv_group = 0;
  std::int64_t full_pages = 0;          // N at the group's first position
  std::int64_t eligible = 0;            // N_e
  std::int64_t window_begin = 0;        // window pages [window_begin, full_pages)
  std::vector<std::int64_t> ranked;     // eligible pages by descending score, min(N_e, k_max)
  // Selected remote pages at budget K: ranked[0 .. min(K, size)).
};
// All QShare groups x KV groups, ordered [qshare group][kv group]. k_max: longest ranking kept.
std::vector<GroupSelection> select_pages(const LayerActivations& a, const Representatives& reps,
                                         const std::vector<float>& iq,
                                         const SelectionGeometry& geo, std::int64_t k_max,
                                         int threads = 0);
// Attention probability of head h at analysed position p inside the pages it reads at budget K.
double recall(const PageMass& m, const LayerActivations& a, const GroupSelection& s,
              std::int64_t p, int h, std::int64_t budget);
// |A ∩ B| / min(|A|, |B|); 1 when the smaller set is empty.
double overlap(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b);  // sets, no duplicates

// ---------------------------------------------------------------- initialisation (§2)
struct InitResult {
  int layer = 0;
  int kv_heads = 0, candidates = 0;       // candidates = r + 1
  std::vector<double> kl;                 // [kv_heads][candidates], nats, mean over positions
  std::vector<int> chosen;                // [kv_heads]
  std::vector<std::int64_t> positions;    // [kv_heads] positions that entered the mean
};
// Mean over analysed positions with N(t) >= 2 of KL(dense || candidate), where dense = the
// group's head-averaged attention mass on the full pages 0..N(t)-1 (renormalised) and
// candidate = softmax_j(phi(iq_t) . psi_j / sqrt(head_dim)) over the same pages.
// iq_g: [P][head_dim] index queries of one candidate for group g.
double candidate_kl(const PageMass& m, const LayerActivations& a, const Representatives& reps,
                    int g, const float* iq_g, std::int64_t* positions_used = nullptr);
InitResult initialise_indexer(const PageMass& m, const LayerActivations& a,
                              const Representatives& reps, int threads = 0);
// W_idx[g] = the chosen candidate's projection: [kv_heads][head_dim][hidden] (needs w_q).
std::vector<float> index_projection(const LayerActivations& a, const std::vector<int>& chosen);

// ---------------------------------------------------------------- diagnostics
struct RouteConfig {
  std::int64_t chunk_tokens = 16;
  std::vector<std::int64_t> budgets = {1024};
  std::vector<std::int64_t> qshare_gs = {4};
  std::vector<std::int64_t> windows = {128};
  std::vector<std::int64_t> curve_budgets;  // recall vs budget (added to the curve table)
  std::vector<std::int64_t> lags = {1, 32};
  RepRule rep = RepRule::mean;
  Aggregation aggregation = Aggregation::sum;
  int indexer = -1;  // -1: initialisation's choice; 0..r-1: head; r: mean of the group
  int threads = 0;
  std::int64_t key_block = 1024;
};

struct RoutingRow {  // one (budget, G, window, head) — head = -1: mean over heads
  int layer = 0;
  std::int64_t budget = 0, qshare_g = 0, window = 0;
  int q_head = -1, kv_group = -1;
  std::int64_t positions = 0;
  double eligible_mean = 0;      // mean N_e over the analysed positions' groups
  double recall_mean = 0, recall_min = 0, recall_p10 = 0;
  double recall_no_window = 0;   // top-K over all full pages, no window (+ tail)
  double recall_more_chunks = 0; // top-(K+W) over all full pages, no window (+ tail)
  double qshare_overlap = 0;     // QShare selection vs per-position selection (top-K sets)
  std::vector<double> lag_overlap;  // per RouteConfig::lags; NaN when no pair exists
};
struct CurveRow {  // recall vs budget, mean over heads and positions
  int layer = 0;
  std::int64_t budget = 0, qshare_g = 0, window = 0;
  double recall_mean = 0, recall_min_head = 0;
};
struct LayerReport {
  int layer = 0;
  RepRule rep = RepRule::mean;               // the configuration this report was made with
  Aggregation aggregation = Aggregation::sum;
  std::int64_t tokens = 0, positions = 0;
  int q_heads = 0, kv_heads = 0, head_dim = 0;
  InitResult init;
  std::vector<int> indexer;  // candidate used for selection, per KV group
  std::vector<RoutingRow> rows;
  std::vector<CurveRow> curve;
  double seconds_page_mass = 0, seconds_init = 0, seconds_select = 0;
};
LayerReport analyse_layer(const LayerActivations& a, const RouteConfig& cfg);
// Same, from an already computed page mass (tests, benchmarks).
LayerReport analyse_layer(const LayerActivations& a, const PageMass& m, const RouteConfig& cfg);

// ---------------------------------------------------------------- utilities
int resolve_threads(int threads);
double cpu_fma_peak_gflops(std::string* how = nullptr);  // fp32; see bench for the method

}  // namespace cisa::route
