#include "cisa/results.hpp"

#include "cisa/same_text.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

namespace cisa {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
double ms(double s) { return s * 1e3; }
double ratio(double a, double b) { return b > 0 ? a / b : kNaN; }
// to_string of an enum, built once: assigning it reuses a cell's storage ("terminal_prefill" is
// longer than std::string's inline buffer, so a temporary would allocate for every row).
template <class E>
const std::string& name_of(E e) {
  static const std::array<std::string, 8> names = [] {
    std::array<std::string, 8> n;
    for (int k = 0; k < 8; ++k) n[static_cast<std::size_t>(k)] = to_string(static_cast<E>(k));
    return n;
  }();
  const auto k = static_cast<std::size_t>(e);
  return k < names.size() ? names[k] : names[0];
}
}  // namespace

const std::vector<std::string>& error_columns() {
  static const std::vector<std::string> names = {
      "err_attention_dense", "err_attention_cisa", "err_scoring",      "err_topk",
      "err_setup",           "err_other",          "err_busy_dense",   "err_busy_cisa",
      "err_speedup_attention", "err_speedup_busy"};
  return names;
}

const std::vector<std::string>& band_columns() {
  static const std::vector<std::string> names = {
      "pred_ms_attention_dense", "pred_ms_attention_cisa", "pred_ms_scoring", "pred_ms_topk",
      "pred_ms_setup", "pred_ms_other", "pred_ms_busy_dense", "pred_ms_busy_cisa",
      "pred_speedup_attention", "pred_speedup_busy", "pred_ms_attention_dense_own",
      "pred_speedup_attention_vs_own", "pred_speedup_busy_vs_own"};
  return names;
}

std::string predicted_twin(const std::string& meas) {
  // This project's kernels measure its own dense kernel: compare with the _own prediction.
  if (meas == "meas_ms_attention_dense") return "pred_ms_attention_dense_own";
  if (meas == "meas_ms_busy_dense") return "pred_ms_busy_dense_own";
  if (meas == "meas_speedup_attention") return "pred_speedup_attention_vs_own";
  if (meas == "meas_speedup_busy") return "pred_speedup_busy_vs_own";
  return "pred_" + meas.substr(5);
}

const std::vector<std::string>& dram_components() {
  static const std::vector<std::string> names = {"attention_dense", "attention_cisa", "scoring", "topk", "setup", "other"};
  return names;
}

const std::vector<std::string>& measured_columns() {
  static const std::vector<std::string> names = {
      "meas_ms_attention_dense", "meas_ms_attention_cisa", "meas_ms_scoring",
      "meas_ms_topk",            "meas_ms_setup",          "meas_ms_other",
      "meas_ms_busy_dense",      "meas_ms_busy_cisa",      "meas_speedup_attention",
      "meas_speedup_busy"};
  return names;
}

namespace {
// A text column's cells by blocks of kRows rows, for put_rows: a block whose cells already hold one
// value and whose new rows all have it is not touched. A reused chunk table's text cells mostly
// hold what the next chunk writes, and reading or writing them (10 columns, ~5 MB a 16,384-row
// chunk) cost ~0.15 s of CPU a 1M-point sweep; the rows' own values are in cache.
class TextBlocks {
 public:
  static constexpr std::size_t kRows = 64;
  // The column is n rows long now: cells past n were destroyed or are new (empty).
  void resized(std::size_t n) {
    blocks_.resize((n + kRows - 1) / kRows);
    for (std::size_t b = 0; b < blocks_.size(); ++b)
      blocks_[b].rows = std::min(blocks_[b].rows, n - b * kRows);
  }
  // Cells [i0, i0 + n) of `cells` = get(0 .. n - 1). Threads may put disjoint blocks at once.
  template <class Get>
  void put(std::vector<std::string>& cells, std::size_t i0, std::size_t n, const Get& get) {
    if (n == 0) return;
    if (i0 % kRows != 0 || n > kRows) {  // not one block: write and forget what the blocks held
      for (std::size_t k = 0; k < n; ++k) set_text(cells[i0 + k], get(k));
      for (std::size_t b = i0 / kRows; b <= (i0 + n - 1) / kRows; ++b)
        blocks_[b].rows = std::min(blocks_[b].rows, i0 > b * kRows ? i0 - b * kRows : 0);
      return;
    }
    Block& blk = blocks_[i0 / kRows];
    const std::string& v0 = get(0);
    bool uniform = true;
    for (std::size_t k = 1; k < n && uniform; ++k) uniform = same_text(get(k), v0);
    if (uniform && blk.rows >= n && same_text(blk.value, v0)) return;  // the cells hold it
    for (std::size_t k = 0; k < n; ++k) set_text(cells[i0 + k], get(k));
    blk.rows = uniform ? n : 0;
    if (uniform) set_text(blk.value, v0);
  }

 private:
  struct Block {
    std::size_t rows = 0;  // rows [0, rows) of the block hold `value`
    std::string value;
  };
  std::vector<Block> blocks_;
};
}  // namespace

struct PointsTableBuilder::Cols {
  // Per text column (its cells' vector): what put_rows knows its blocks hold. Built with the
  // columns; only its entries change later.
  std::map<const std::vector<std::string>*, TextBlocks> text;
  std::vector<std::string> *dense_impl, *cisa_impl, *design = nullptr;
  std::vector<std::vector<double>*> lo, hi;  // band ends of band_columns(), in order
  std::vector<std::string> *model, *hardware, *phase, *kv_dtype, *rep_dtype, *rep_kind, *score_agg,
      *pred_basis;
  std::vector<std::int64_t> *context, *budget, *g, *batch, *q_heads, *kv_heads, *head_dim, *chunk,
      *window, *prefill, *rep_dim, *hidden;
  std::vector<double> *overlap, *forwards;
  std::vector<double> *kv_dense, *kv_cisa, *rep, *meta, *meta_dense, *qo, *part_dense, *part_cisa,
      *other_bytes, *total_dense, *total_cisa, *l2_kv_dense, *l2_kv_cisa, *l2_rep, *kv_reduction,
      *bytes_reduction;
  std::vector<double> *fl_dense, *fl_cisa, *flu_dense, *flu_cisa, *fl_scoring, *selections,
      *eligible_mean, *splits_dense, *splits_cisa, *sparse_pos, *dense_pos, *visits_dense, *visits_cisa,
      *tile_dense, *tile_cisa;
  std::vector<double> *t_att_d, *t_att_c, *t_sc, *t_tk, *t_su, *t_ot, *t_busy_d, *t_busy_c, *sp_att,
      *sp_busy, *t_att_own, *t_busy_own, *sp_att_own, *sp_busy_own;
  std::vector<std::vector<double>*> meas, err;
  std::vector<double>* meas_overlap;
  std::vector<std::vector<double>*> dram, dram_w;  // per component, order of dram_components()
  std::vector<std::int64_t>* point_index;
  std::vector<double> *nominal, *c_near, *c_full, *c_dec, *w_kv, *w_near, *w_dec;
};

PointsTableBuilder::PointsTableBuilder(bool design_column) : c_(std::make_shared<Cols>()) {
  Cols& c = *c_;
  Table& t = t_;
  const std::string per = " (one layer, whole batch; summed over forwards for full_prefill)";
  c.point_index = &t.add_i64("point_index", "", "index of the point in the scenario's full sweep (stable across shards)");
  c.model = &t.add_text("model", "model preset (and tensor parallelism) the geometry came from");
  c.hardware = &t.add_text("hardware", "GPU preset name");
  c.dense_impl = &t.add_text("dense_impl", "implementation profile of the dense baseline (the fastest known on the card for \"best\"); every pred_*_dense and pred_speedup_* without _vs_own divides by it");
  c.cisa_impl = &t.add_text("cisa_impl", "implementation profile pricing CISA (attention; its selection kernels price scoring, top-k, setup)");
  if (design_column)
    c.design = &t.add_text("design", "sparse-attention design pricing the CISA-side columns: cisa (this model), or a "
                                     "models/design/ description priced by src/design's traffic model (issue 15)");
  c.phase = &t.add_text("phase", "terminal_prefill | full_prefill | decode | mtp");
  c.context = &t.add_i64("context_tokens", "tokens", "L: tokens per sequence after the forward");
  c.budget = &t.add_i64("budget_chunks", "chunks", "K: remote chunks selected per selection");
  c.g = &t.add_i64("qshare_g", "positions", "G: positions sharing one selection (1 in decode)");
  c.batch = &t.add_i64("batch", "sequences", "sequences per forward");
  c.q_heads = &t.add_i64("q_heads", "heads", "query heads per rank");
  c.kv_heads = &t.add_i64("kv_heads", "heads", "KV heads (= indexers) per rank");
  c.head_dim = &t.add_i64("head_dim", "elements", "d");
  c.hidden = &t.add_i64("hidden", "elements", "model hidden size (index projection input)");
  c.chunk = &t.add_i64("chunk_tokens", "tokens", "c: chunk = KV page size");
  c.window = &t.add_i64("window_pages", "pages", "W: recent pages always read");
  c.prefill = &t.add_i64("prefill_tokens", "positions", "positions per sequence per forward (1 in decode, k in mtp)");
  c.rep_dim = &t.add_i64("rep_dim", "elements", "d_r: representative / index dimension");
  c.kv_dtype = &t.add_text("kv_dtype", "K/V cache dtype");
  c.rep_dtype = &t.add_text("rep_dtype", "representative dtype");
  c.rep_kind = &t.add_text("rep_kind", "mean | minmax (two vectors per page)");
  c.score_agg = &t.add_text("score_agg", "sum | max | last over a QShare group's positions");
  c.overlap = &t.add_f64("selection_overlap", "fraction", "share of a selection's pages chosen by the previous group");
  c.forwards = &t.add_f64("forwards", "forwards", "forwards summed in this row");

  c.kv_dense = &t.add_f64("bytes_kv_dense", "bytes", "predicted DRAM bytes of K/V, dense" + per);
  c.kv_cisa = &t.add_f64("bytes_kv_cisa", "bytes", "predicted DRAM bytes of K/V, CISA (selected + window + tail, dense-path positions)" + per);
  c.rep = &t.add_f64("bytes_rep", "bytes", "predicted DRAM bytes of representatives read by scoring" + per);
  c.meta = &t.add_f64("bytes_meta", "bytes", "CISA metadata: block tables, index queries, scores written+read, page IDs written+read" + per);
  c.meta_dense = &t.add_f64("bytes_meta_dense", "bytes", "dense metadata: block table reads" + per);
  c.qo = &t.add_f64("bytes_qo", "bytes", "Q read + O written (same for both)" + per);
  c.part_dense = &t.add_f64("bytes_partials_dense", "bytes", "split-KV partials written + read, dense" + per);
  c.part_cisa = &t.add_f64("bytes_partials_cisa", "bytes", "split-KV partials written + read, CISA" + per);
  c.other_bytes = &t.add_f64("bytes_other", "bytes", "CISA other: index projection, representative update" + per);
  c.total_dense = &t.add_f64("bytes_total_dense", "bytes", "all predicted DRAM bytes, dense" + per);
  c.total_cisa = &t.add_f64("bytes_total_cisa", "bytes", "all predicted DRAM bytes, CISA" + per);
  c.l2_kv_dense = &t.add_f64("l2_bytes_kv_dense", "bytes", "K/V bytes requested by the dense kernel before L2 reuse");
  c.l2_kv_cisa = &t.add_f64("l2_bytes_kv_cisa", "bytes", "K/V bytes requested by the CISA kernel before L2 reuse");
  c.l2_rep = &t.add_f64("l2_bytes_rep", "bytes", "representative bytes requested by scoring before L2 reuse");
  c.kv_reduction = &t.add_f64("kv_reduction", "x", "bytes_kv_dense / bytes_kv_cisa (time view)");
  c.bytes_reduction = &t.add_f64("bytes_reduction", "x", "bytes_total_dense / bytes_total_cisa (time view)");

  c.fl_dense = &t.add_f64("flops_attention_dense", "FLOP", "issued attention FLOPs incl. tile padding, dense");
  c.fl_cisa = &t.add_f64("flops_attention_cisa", "FLOP", "issued attention FLOPs incl. tile padding, CISA");
  c.flu_dense = &t.add_f64("flops_useful_attention_dense", "FLOP", "useful attention FLOPs, dense");
  c.flu_cisa = &t.add_f64("flops_useful_attention_cisa", "FLOP", "useful attention FLOPs, CISA");
  c.fl_scoring = &t.add_f64("flops_scoring", "FLOP", "useful scoring FLOPs");
  c.selections = &t.add_f64("selections", "selections", "sparse selections (QShare groups with N_e > K), whole batch");
  c.eligible_mean = &t.add_f64("eligible_chunks_mean", "chunks", "mean N_e over sparse selections");
  c.splits_dense = &t.add_f64("splits_dense", "splits", "split-KV factor of the dense kernel (max over forwards)");
  c.splits_cisa = &t.add_f64("splits_cisa", "splits", "split-KV factor of the CISA attention kernel");
  c.visits_dense = &t.add_f64("page_visits_dense", "visits", "(work item, page) visits of the dense baseline's attention");
  c.visits_cisa = &t.add_f64("page_visits_cisa", "visits", "(work item, page) visits of CISA's attention");
  c.tile_dense = &t.add_f64("tile_rows_dense", "rows", "MMA tile rows of the dense baseline's attention (largest used)");
  c.tile_cisa = &t.add_f64("tile_rows_cisa", "rows", "MMA tile rows of CISA's attention (largest used)");
  c.sparse_pos = &t.add_f64("sparse_positions", "positions", "positions on the sparse path, whole batch");
  c.dense_pos = &t.add_f64("dense_path_positions", "positions", "positions on the dense path (N_e <= K) in the CISA run");

  c.t_att_d = &t.add_f64("pred_ms_attention_dense", "ms", "core attention (+ split-KV combine), dense, with the baseline dense_impl");
  c.t_att_c = &t.add_f64("pred_ms_attention_cisa", "ms", "core attention (+ combine), CISA, with cisa_impl");
  c.t_sc = &t.add_f64("pred_ms_scoring", "ms", "CISA scoring (summed index query . representatives)");
  c.t_tk = &t.add_f64("pred_ms_topk", "ms", "CISA top-k (radix select + page-ID translation)");
  c.t_su = &t.add_f64("pred_ms_setup", "ms", "CISA setup/metadata (the step's descriptors, window and tail page IDs)");
  c.t_ot = &t.add_f64("pred_ms_other", "ms", "CISA other (index projection, representative update)");
  c.t_busy_d = &t.add_f64("pred_ms_busy_dense", "ms", "GPU busy = sum of components, dense baseline (dense_impl)");
  c.t_busy_c = &t.add_f64("pred_ms_busy_cisa", "ms", "GPU busy = sum of components, CISA");
  c.sp_att = &t.add_f64("pred_speedup_attention", "x", "dense baseline (dense_impl) / CISA core attention time");
  c.sp_busy = &t.add_f64("pred_speedup_busy", "x", "dense baseline (dense_impl) / CISA GPU busy time");
  c.t_att_own = &t.add_f64("pred_ms_attention_dense_own", "ms", "dense core attention with cisa_impl's own dense kernel (NaN: it has none)");
  c.t_busy_own = &t.add_f64("pred_ms_busy_dense_own", "ms", "GPU busy, dense, with cisa_impl's own dense kernel");
  c.sp_att_own = &t.add_f64("pred_speedup_attention_vs_own", "x", "dense with cisa_impl's own kernel / CISA core attention time (like for like)");
  c.sp_busy_own = &t.add_f64("pred_speedup_busy_vs_own", "x", "dense with cisa_impl's own kernel / CISA GPU busy time (like for like)");
  for (const auto& name : band_columns()) {
    c.lo.push_back(&t.add_f64(name + "_lo", name.find("speedup") != std::string::npos ? "x" : "ms",
                              "fast end of " + name + "'s uncertainty band (file attribute `uncertainty`)"));
    c.hi.push_back(&t.add_f64(name + "_hi", name.find("speedup") != std::string::npos ? "x" : "ms",
                              "slow end of " + name + "'s uncertainty band"));
  }
  for (const auto& name : measured_columns())
    c.meas.push_back(&t.add_f64(name, name.find("speedup") != std::string::npos ? "x" : "ms",
                                "measured twin of " + predicted_twin(name) + " with this project's kernels (NaN until measured)"));
  c.meas_overlap = &t.add_f64("meas_selection_overlap", "fraction",
                              "measured share of a selection's K pages also chosen by the previous QShare group "
                              "(sequence 0, KV head 0; NaN until measured or with one selection per sequence)");
  for (const auto& comp : dram_components()) {
    c.dram.push_back(&t.add_f64("pred_dram_bytes_" + comp, "bytes",
                                "predicted DRAM bytes (read + written) of the " + comp + " kernels" + per));
    c.dram_w.push_back(&t.add_f64("pred_dram_write_bytes_" + comp, "bytes",
                                  "written part of pred_dram_bytes_" + comp + per));
  }
  for (const auto& name : error_columns())
    c.err.push_back(&t.add_f64(name, "fraction", "measured / predicted - 1 for " + name.substr(4) + " (NaN until measured; rows priced with this project's kernels, cisa_impl cisa_kernels*, only)"));

  c.nominal = &t.add_f64("nominal_compression", "x", "ceiling view: L / (K c)");
  c.c_near = &t.add_f64("ceiling_near_end_prefill", "x", "ceiling view: 2L / (2Kc + L/(cG))");
  c.c_full = &t.add_f64("ceiling_full_prefill", "x", "ceiling view: whole prompt, continuous limit");
  c.c_dec = &t.add_f64("ceiling_decode", "x", "ceiling view at G = 1");
  c.w_kv = &t.add_f64("window_kv_only", "x", "ceiling view with window and half-full tail, K/V only");
  c.w_near = &t.add_f64("window_near_end_prefill", "x", "ceiling view with window, tail and representative scan at G");
  c.w_dec = &t.add_f64("window_decode", "x", "ceiling view with window, tail and scan at G = 1");
  c.pred_basis = &t.add_text("pred_basis", "calibrated | speed_of_light (file attribute rates_source.<gpu> says where the rates came from)");
  for (const auto& col : t.columns())
    if (const auto* cells = std::get_if<std::vector<std::string>>(&col.data)) c.text[cells];
}

// Columns are sized ahead and written by index: a point costs stores, not 76 push_backs.
void PointsTableBuilder::grow() {
  capacity_ = std::max<std::size_t>(1024, capacity_ * 2);
  resize_all(capacity_);
}

void PointsTableBuilder::resize_all(std::size_t n) {
  nan_rows_ = std::min(nan_rows_, n);
  resize_columns(0, t_.columns().size(), n);
}

namespace {
// Maps the whole pages of [p, p + bytes) in one call (Linux): one fault a page was the cost of a
// builder's first sizing in a VM. Advisory: where it fails, the first writes fault them as before.
void prefault(const void* p, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)p, (void)bytes;
#endif
}
}  // namespace

void PointsTableBuilder::resize_columns(std::size_t first, std::size_t last, std::size_t n) {
  for (std::size_t k = first; k < last; ++k) {
    auto& mut = const_cast<Column&>(t_.columns()[k]);
    std::visit(
        [n](auto& v) {
          if (n > v.capacity()) {
            v.reserve(n);
            prefault(v.data() + v.size(), (n - v.size()) * sizeof(v[0]));
          }
          v.resize(n);
        },
        mut.data);
    if (const auto* cells = std::get_if<std::vector<std::string>>(&mut.data))
      c_->text.at(cells).resized(n);
  }
}

Table& PointsTableBuilder::table() {
  if (capacity_ != rows_) {
    resize_all(rows_);
    capacity_ = rows_;
  }
  return t_;
}

void PointsTableBuilder::reserve(std::size_t n) {
  if (n > capacity_) {
    capacity_ = n;
    resize_all(n);
  }
}

void PointsTableBuilder::set_rows(std::size_t n) {
  resize_all(n);
  rows_ = capacity_ = n;
  // A reused chunk table's measured columns are still NaN where an earlier set_rows made them so
  // (put_rows never writes them): ~30 columns' stores a chunk saved.
  fill_unmeasured(std::min(nan_rows_, n), n);
  nan_rows_ = n;
}

// The measured columns and their errors: NaN until --measure fills them (a column at a time).
void PointsTableBuilder::fill_unmeasured(std::size_t from, std::size_t to) {
  Cols& c = *c_;
  for (auto* m : c.meas) std::fill(m->begin() + static_cast<std::ptrdiff_t>(from), m->begin() + static_cast<std::ptrdiff_t>(to), kNaN);
  std::fill(c.meas_overlap->begin() + static_cast<std::ptrdiff_t>(from), c.meas_overlap->begin() + static_cast<std::ptrdiff_t>(to), kNaN);
  for (auto* m : c.err) std::fill(m->begin() + static_cast<std::ptrdiff_t>(from), m->begin() + static_cast<std::ptrdiff_t>(to), kNaN);
}

void PointsTableBuilder::add(std::int64_t index, const Point& p, const Prediction& r, const Rates& rates) {
  if (rows_ == capacity_) grow();
  put(rows_, index, p, r, rates);
  fill_unmeasured(rows_, rows_ + 1);
  ++rows_;
}

void PointsTableBuilder::put(std::size_t i, std::int64_t index, const Point& p, const Prediction& r, const Rates& rates) {
  const Rates* rp = &rates;
  put_rows(i, 1, &index, &p, &r, &rp);
}

// Column by column over a block of rows: each column is written as one run of consecutive cells.
// Row by row, a point touched ~140 columns' cache lines at once, more streams than the hardware
// prefetches, and the stores (and the text cells' loads) waited on memory.
void PointsTableBuilder::put_rows(std::size_t i0, std::size_t n, const std::int64_t* index, const Point* pts,
                                  const Prediction* preds, const Rates* const* rates) {
  Cols& c = *c_;
  // COL(column, expression of the row's p (Point), r (Prediction) and f (its ForwardCost))
// TXT(column, expression): a text column, by blocks (TextBlocks).
#define TXT(col, expr)                                                           \
  c.text.at(c.col).put(*c.col, i0, n, [&](std::size_t k) -> const std::string& { \
    [[maybe_unused]] const Point& p = pts[k];                                    \
    [[maybe_unused]] const Prediction& r = preds[k];                             \
    return (expr);                                                               \
  })
#define COL(col, expr)                                  \
  for (std::size_t k = 0; k < n; ++k) {                 \
    [[maybe_unused]] const Point& p = pts[k];           \
    [[maybe_unused]] const Prediction& r = preds[k];    \
    [[maybe_unused]] const ForwardCost& f = r.cost;     \
    (*c.col)[i0 + k] = (expr);                          \
  }
  TXT(model, p.model);
  TXT(hardware, p.hardware);
  TXT(dense_impl, r.dense_impl);
  TXT(cisa_impl, r.cisa_impl);
  if (c.design) TXT(design, r.design);
  TXT(phase, name_of(p.work.phase));
  COL(context, p.work.context_tokens);
  COL(budget, p.cisa.budget_chunks);
  COL(g, r.qshare_g);
  COL(batch, p.work.batch);
  COL(q_heads, p.geo.q_heads);
  COL(kv_heads, p.geo.kv_heads);
  COL(head_dim, p.geo.head_dim);
  COL(hidden, p.geo.hidden);
  COL(chunk, p.cisa.chunk_tokens);
  COL(window, p.cisa.window_pages);
  COL(prefill, positions_per_forward(p.work));
  COL(rep_dim, p.cisa.rep_dim > 0 ? p.cisa.rep_dim : p.geo.head_dim);
  TXT(kv_dtype, name_of(p.cisa.kv_dtype));
  TXT(rep_dtype, name_of(p.cisa.rep_dtype));
  TXT(rep_kind, name_of(p.cisa.rep_kind));
  TXT(score_agg, name_of(p.cisa.score_agg));
  COL(overlap, p.cisa.selection_overlap);
  COL(forwards, r.forwards);

  COL(kv_dense, f.bytes_dense.kv);
  COL(kv_cisa, f.bytes_cisa.kv);
  COL(rep, f.bytes_cisa.rep);
  COL(meta, f.bytes_cisa.meta);
  COL(meta_dense, f.bytes_dense.meta);
  COL(qo, f.bytes_dense.qo);
  COL(part_dense, f.bytes_dense.partials);
  COL(part_cisa, f.bytes_cisa.partials);
  COL(other_bytes, f.bytes_cisa.other);
  COL(total_dense, f.bytes_dense.total());
  COL(total_cisa, f.bytes_cisa.total());
  COL(l2_kv_dense, f.l2_kv_dense);
  COL(l2_kv_cisa, f.l2_kv_cisa);
  COL(l2_rep, f.l2_rep);
  COL(kv_reduction, ratio(f.bytes_dense.kv, f.bytes_cisa.kv));
  COL(bytes_reduction, ratio(f.bytes_dense.total(), f.bytes_cisa.total()));

  COL(fl_dense, f.attention_dense.flops_issued);
  COL(fl_cisa, f.attention_cisa.flops_issued);
  COL(flu_dense, f.attention_dense.flops_useful);
  COL(flu_cisa, f.attention_cisa.flops_useful);
  COL(fl_scoring, f.scoring.flops_useful);
  COL(selections, f.selections);
  COL(eligible_mean, f.topk_rows > 0 ? f.eligible_chunks_sum / f.topk_rows : 0.0);
  COL(splits_dense, f.splits_dense);
  COL(splits_cisa, f.splits_cisa);
  COL(visits_dense, f.attention_dense.page_visits);
  COL(visits_cisa, f.attention_cisa.page_visits);
  COL(tile_dense, f.attention_dense.tile_rows);
  COL(tile_cisa, f.attention_cisa.tile_rows);
  COL(sparse_pos, f.sparse_positions);
  COL(dense_pos, f.dense_positions);

  COL(t_att_d, ms(r.dense.attention));
  COL(t_att_c, ms(r.cisa.attention));
  COL(t_sc, ms(r.cisa.scoring));
  COL(t_tk, ms(r.cisa.topk));
  COL(t_su, ms(r.cisa.setup));
  COL(t_ot, ms(r.cisa.other));
  COL(t_busy_d, ms(r.dense.busy()));
  COL(t_busy_c, ms(r.cisa.busy()));
  COL(sp_att, ratio(r.dense.attention, r.cisa.attention));
  COL(sp_busy, ratio(r.dense.busy(), r.cisa.busy()));
  COL(t_att_own, ms(r.dense_own_attention));
  COL(t_busy_own, ms(r.dense_own_attention));  // dense busy = its attention
  COL(sp_att_own, ratio(r.dense_own_attention, r.cisa.attention));
  COL(sp_busy_own, ratio(r.dense_own_attention, r.cisa.busy()));
  for (std::size_t k = 0; k < n; ++k) {
    const Prediction& r = preds[k];
    // Band ends, in band_columns() order. Speedups: the fast dense end over the slow CISA end, and
    // the reverse (the widest ratio the bands allow).
    const double lo[] = {ms(r.dense_lo.attention), ms(r.cisa_lo.attention), ms(r.cisa_lo.scoring),
                         ms(r.cisa_lo.topk), ms(r.cisa_lo.setup), ms(r.cisa_lo.other), ms(r.dense_lo.busy()),
                         ms(r.cisa_lo.busy()), ratio(r.dense_lo.attention, r.cisa_hi.attention),
                         ratio(r.dense_lo.busy(), r.cisa_hi.busy()), ms(r.dense_own_lo),
                         ratio(r.dense_own_lo, r.cisa_hi.attention), ratio(r.dense_own_lo, r.cisa_hi.busy())};
    const double hi[] = {ms(r.dense_hi.attention), ms(r.cisa_hi.attention), ms(r.cisa_hi.scoring),
                         ms(r.cisa_hi.topk), ms(r.cisa_hi.setup), ms(r.cisa_hi.other), ms(r.dense_hi.busy()),
                         ms(r.cisa_hi.busy()), ratio(r.dense_hi.attention, r.cisa_lo.attention),
                         ratio(r.dense_hi.busy(), r.cisa_lo.busy()), ms(r.dense_own_hi),
                         ratio(r.dense_own_hi, r.cisa_lo.attention), ratio(r.dense_own_hi, r.cisa_lo.busy())};
    for (std::size_t j = 0; j < c.lo.size(); ++j) {
      (*c.lo[j])[i0 + k] = lo[j];
      (*c.hi[j])[i0 + k] = hi[j];
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    const ForwardCost& f = preds[k].cost;
    KernelCost other = f.other;  // the `other` component: index projection + representative update
    other.add(f.rep_update);
    const KernelCost* kc[] = {&f.attention_dense, &f.attention_cisa, &f.scoring, &f.topk, &f.setup, &other};
    for (std::size_t j = 0; j < 6; ++j) {
      (*c.dram[j])[i0 + k] = kc[j]->dram_bytes;
      (*c.dram_w[j])[i0 + k] = kc[j]->dram_write_bytes;
    }
  }
  COL(point_index, index[k]);

  COL(nominal, r.ceilings.nominal_compression);
  COL(c_near, r.ceilings.ceiling_near_end_prefill);
  COL(c_full, r.ceilings.ceiling_full_prefill);
  COL(c_dec, r.ceilings.ceiling_decode);
  COL(w_kv, r.ceilings.window_kv_only);
  COL(w_near, r.ceilings.window_near_end_prefill);
  COL(w_dec, r.ceilings.window_decode);
  TXT(pred_basis, name_of(rates[k]->basis));
#undef COL
#undef TXT
}

}  // namespace cisa
