// measure_points with the instrumented CUDA kernels (kernels/): for each scenario point that the
// kernels support and the card holds, build a random paged KV cache of the point's geometry, run
// the dense baseline and the CISA step, and record median CUDA-event times per component.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <sstream>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "cisa/errors.hpp"
#include "cisa/measure.hpp"
#include "cisa/results.hpp"
#include "cisa/traffic.hpp"
#include "cisa_kernels/cisa_step.hpp"
#include "cisa_kernels/representatives.hpp"
#include "gpu/kernel_rates.hpp"
#include "gpu/probe.hpp"

namespace cisa {

namespace {

namespace K = cisa::kernels;

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class T>
struct Dev {
  T* p = nullptr;
  std::size_t n = 0;
  explicit Dev(std::size_t count) : n(count) { ck(cudaMalloc(&p, std::max<std::size_t>(1, n) * sizeof(T)), "cudaMalloc"); }
  Dev(const std::vector<T>& h) : Dev(h.size()) { ck(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice), "upload"); }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
};

// Gaussian-ish BF16 values (sum of two uniforms), never zeros; a counter hash keeps it on device.
__global__ void fill_bf16(K::bf16_bits* out, std::size_t n, unsigned long long seed, float scale) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned long long z = seed + i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float u1 = (z & 0xffffffu) * (1.0f / 16777216.0f), u2 = ((z >> 24) & 0xffffffu) * (1.0f / 16777216.0f);
    const float g = (u1 + u2 - 1.0f) * 2.449f * scale;  // variance ~ scale^2
    const unsigned u = __float_as_uint(g);
    out[i] = static_cast<K::bf16_bits>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
}
void fill(K::bf16_bits* p, std::size_t n, unsigned long long seed, float scale = 1.0f) {
  fill_bf16<<<1024, 256>>>(p, n, seed, scale);
  ck(cudaGetLastError(), "fill_bf16");
}

// Planted structure: a fixed unit direction u (alternating +-1/sqrt(128)) added with weight `alpha`
// to the keys of chosen pages (all 16 tokens, every KV head) or to index queries, so those pages'
// representatives score high for every query: neighbouring selections then share them.
__global__ void plant_pages(K::bf16_bits* k, const int* pages, int n_pages, int kv_heads, float alpha) {
  const std::size_t per_page = std::size_t(16) * kv_heads * 128;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < per_page * n_pages;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t e = std::size_t(pages[i / per_page]) * per_page + i % per_page;
    const float u = ((i % 128) & 1 ? 1.0f : -1.0f) * 0.08838835f;  // 1/sqrt(128)
    const unsigned bits = static_cast<unsigned>(k[e]) << 16;
    const float x = __uint_as_float(bits) + alpha * u;
    const unsigned ux = __float_as_uint(x);
    k[e] = static_cast<K::bf16_bits>((ux + 0x7fffu + ((ux >> 16) & 1u)) >> 16);
  }
}
__global__ void add_direction(K::bf16_bits* p, std::size_t n, float alpha) {  // every 128-vector += alpha u
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const float u = ((i % 128) & 1 ? 1.0f : -1.0f) * 0.08838835f;
    const unsigned ux = __float_as_uint(__uint_as_float(static_cast<unsigned>(p[i]) << 16) + alpha * u);
    p[i] = static_cast<K::bf16_bits>((ux + 0x7fffu + ((ux >> 16) & 1u)) >> 16);
  }
}

__global__ void ncu_boundary_kernel(int point) {  // marks point boundaries for analysis/ncu_points.py
  if (point < 0 && threadIdx.x == 0) printf("never\n");
}

// One paged cache for every point with the same (batch, context, KV heads).
struct World {
  std::unique_ptr<Dev<K::bf16_bits>> k, v, reps;
  std::unique_ptr<Dev<int>> table;
  K::PagedKV kv;
  K::BlockTable bt;
  std::vector<int> ids;  // host copy of the block table [batch][pages_per_seq]
  int pages_per_seq = 0;
  unsigned long long seed = 0;
  bool planted = false;
  World(int batch, std::int64_t tokens, int kv_heads, unsigned long long seed_) : seed(seed_) {
    pages_per_seq = static_cast<int>((tokens + 15) / 16);
    const std::int64_t pages = std::int64_t(batch) * pages_per_seq + 1;
    std::vector<int> perm(static_cast<std::size_t>(pages));
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937_64 rng(seed);
    std::shuffle(perm.begin(), perm.end(), rng);  // physical pages scattered like a real pool
    ids.resize(std::size_t(batch) * pages_per_seq);
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = perm[i];
    const std::size_t n = std::size_t(pages) * 16 * kv_heads * 128;
    k = std::make_unique<Dev<K::bf16_bits>>(n);
    v = std::make_unique<Dev<K::bf16_bits>>(n);
    reps = std::make_unique<Dev<K::bf16_bits>>(std::size_t(pages) * kv_heads * 128);
    fill(k->p, n, seed * 3 + 1);
    fill(v->p, n, seed * 3 + 2);
    table = std::make_unique<Dev<int>>(ids);
    kv = K::PagedKV{k->p, v->p, pages, kv_heads};
    bt = K::BlockTable{table->p, pages_per_seq};
    K::rebuild_representatives(kv, reps->p, nullptr);
    ck(cudaDeviceSynchronize(), "world");
  }
  // Planted inputs: `hot` logical pages per sequence, drawn from [0, eligible), get keys along u.
  // Re-planting first restores the random keys (same seed), so points never see stale plants.
  void plant(int batch, int hot, int eligible, unsigned long long point_seed) {
    if (planted) {
      fill(k->p, k->n, seed * 3 + 1);
      planted = false;
    }
    if (hot > 0) {
      std::mt19937_64 rng(point_seed);
      std::vector<int> phys;
      std::vector<int> logical(static_cast<std::size_t>(eligible));
      for (int b = 0; b < batch; ++b) {
        std::iota(logical.begin(), logical.end(), 0);
        for (int i = 0; i < hot; ++i) {  // partial Fisher-Yates: `hot` distinct pages
          std::uniform_int_distribution<int> pick(i, eligible - 1);
          std::swap(logical[i], logical[pick(rng)]);
          phys.push_back(ids[std::size_t(b) * pages_per_seq + logical[i]]);
        }
      }
      Dev<int> d(phys);
      plant_pages<<<4096, 256>>>(k->p, d.p, static_cast<int>(phys.size()), kv.kv_heads, kPlantAlpha);
      ck(cudaGetLastError(), "plant_pages");
      ck(cudaDeviceSynchronize(), "plant");
      planted = true;
    }
    K::rebuild_representatives(kv, reps->p, nullptr);
    ck(cudaDeviceSynchronize(), "reps");
  }
  static constexpr float kPlantAlpha = 6.0f;
  static double bytes(int batch, std::int64_t tokens, int kv_heads) {
    const double pages = double(batch) * double((tokens + 15) / 16) + 1;
    return pages * 16 * kv_heads * 128 * 2 * 2 + pages * kv_heads * 128 * 2;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}

std::string unsupported(const Point& p) {
  if (p.geo.head_dim != K::kHeadDim) return "kernels support head_dim 128 only";
  if (p.cisa.chunk_tokens != K::kPageTokens) return "kernels support 16-token pages only";
  if (p.cisa.kv_dtype != Dtype::bf16 || p.cisa.rep_dtype != Dtype::bf16) return "kernels support BF16 K/V and representatives only";
  if (p.cisa.rep_kind != RepKind::mean) return "kernels implement mean representatives only";
  if (p.cisa.rep_dim != 0 && p.cisa.rep_dim != K::kHeadDim) return "kernels need rep_dim = head_dim";
  if (p.cisa.score_agg != ScoreAgg::sum) return "kernels implement the summed index query only";
  if (p.work.phase == Phase::full_prefill) return "full_prefill (a whole prompt) is not measured; measure terminal_prefill";
  if (p.cisa.budget_chunks > 65536) return "budget beyond the top-k kernel's range";
  return "";
}

struct Measured {
  double attention_dense = NAN, attention_cisa = NAN, scoring = NAN, topk = NAN, setup = NAN, other = NAN;
  double selection_overlap = NAN;
};

// Environment switches for analysis/ncu_points.py: CISA_MEASURE_ONLY=3,7 measures only those
// point indices; CISA_MEASURE_PROFILE=1 runs each measured point's dense baseline and CISA step
// exactly once between ncu_boundary_kernel launches (no repetitions, no L2 flush).
struct Switches {
  std::set<std::int64_t> only;
  bool profile = false;
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
  return sw;
}

class Timer {
 public:
  Timer() : flush_(std::size_t(256) << 20) {}
  // Median over reps of f's summed component times (instrumented), L2 flushed before each rep.
  template <class F>
  std::map<std::string, double> components(F&& f, int reps) {
    std::map<std::string, std::vector<double>> per;
    for (int i = 0; i < reps; ++i) {
      ck(cudaMemsetAsync(flush_.p, i & 0xff, flush_.n), "flush");
      K::Instrument ins;
      f(&ins);
      std::map<std::string, double> sum;
      for (const auto& r : ins.collect()) sum[K::component_name(r.component)] += r.ms;
      for (const auto& [c, ms] : sum) per[c].push_back(ms);
    }
    std::map<std::string, double> out;
    for (auto& [c, v] : per) out[c] = median(v);
    return out;
  }

 private:
  Dev<unsigned char> flush_;
};

int reps_for(double first_ms) { return std::clamp(static_cast<int>(1500.0 / std::max(first_ms, 0.01)), 3, 15); }

// The dense baseline depends only on (batch, context, positions, heads): time it once.
using DenseKey = std::tuple<int, std::int64_t, int, int, int>;

// The "other" component of a CISA forward: the index projection iq = W_idx x for the sparse
// positions (one cuBLAS BF16 GEMM, [kv_heads*128] x hidden times hidden x N) and the
// representative update for the pages this forward completes.
struct OtherWork {
  cublasHandle_t h{};
  std::unique_ptr<Dev<K::bf16_bits>> w, x, out;
  std::unique_ptr<Dev<int>> filled;
  int m = 0, n = 0, k = 0, n_filled = 0;
  OtherWork(const Point& p, const K::CisaPlan& plan, const World& world) {
    for (const auto& r : plan.score_rows)
      if (r.kv_head == 0) n += r.n_q;  // sparse positions of the whole batch
    m = p.geo.kv_heads * 128;
    k = p.geo.hidden;
    if (n > 0) {
      w = std::make_unique<Dev<K::bf16_bits>>(std::size_t(m) * k);
      x = std::make_unique<Dev<K::bf16_bits>>(std::size_t(k) * n);
      out = std::make_unique<Dev<K::bf16_bits>>(std::size_t(m) * n);
      fill(w->p, w->n, 31, 0.02f);
      fill(x->p, x->n, 37);
      if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
    }
    // Pages completed by this forward: logical pages [start/16, (start+P)/16) of every sequence.
    const std::int64_t end = p.work.context_tokens, start = end - positions_per_forward(p.work);
    std::vector<int> ids;
    for (int b = 0; b < p.work.batch; ++b)
      for (std::int64_t j = start / 16; j < end / 16; ++j) ids.push_back(world.ids[std::size_t(b) * world.pages_per_seq + j]);
    n_filled = static_cast<int>(ids.size());
    if (n_filled > 0) filled = std::make_unique<Dev<int>>(ids);
  }
  ~OtherWork() {
    if (h) cublasDestroy(h);
  }
  void run(const World& world, K::Instrument* ins) {
    if (n > 0) {
      K::ScopedLaunch sl(ins, K::Component::other, "index_projection", 2.0 * (double(m) * k + double(k) * n + double(m) * n),
                         2.0 * m * double(n) * k, 2.0 * m * double(n) * k, nullptr);
      const float one = 1.0f, zero = 0.0f;
      if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, w->p, CUDA_R_16BF, m, x->p, CUDA_R_16BF, k, &zero, out->p,
                       CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error("cublasGemmEx (index projection) failed");
    }
    if (n_filled > 0) K::update_representatives(world.kv, filled->p, n_filled, world.reps->p, nullptr, ins);
  }
};

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
  ck(cudaMemcpy(host.data(), step.sparse_table() + mine.front() * stride, host.size() * sizeof(int), cudaMemcpyDeviceToHost),
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

Measured measure_one(const Point& p, std::int64_t index, World& w, Timer& timer, int sms, std::map<DenseKey, double>& dense_cache,
                     const Switches& sw, bool planted) {
  Measured m;
  const int r = p.geo.heads_per_group(), kvh = p.geo.kv_heads, B = p.work.batch;
  const int P = positions_per_forward(p.work);
  const int G = effective_qshare(p.cisa, p.work);
  const K::StepBatch b{std::vector<int>(B, static_cast<int>(p.work.context_tokens - P)), std::vector<int>(B, P), kvh, r};
  // Dense baseline: the same kernel family over the full block table.
  const DenseKey dk{B, p.work.context_tokens, P, kvh, r};
  if (dense_cache.count(dk) && !sw.profile) {
    m.attention_dense = dense_cache[dk];
  } else {
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
  // CISA step: setup (descriptor upload), scoring, top-k, attention; then the other component.
  {
    const K::CisaPlan plan = K::plan_cisa_step(b, K::StepConfig{p.cisa.window_pages, static_cast<int>(p.cisa.budget_chunks), G});
    if (planted) {
      int eligible = std::numeric_limits<int>::max();
      for (const auto& row : plan.topk_rows) eligible = std::min(eligible, row.n_e);
      if (plan.topk_rows.empty()) eligible = 0;
      const int hot = static_cast<int>(std::lround(p.cisa.selection_overlap * static_cast<double>(p.cisa.budget_chunks)));
      w.plant(B, std::min(hot, eligible), eligible, 4242 + static_cast<unsigned long long>(index));
    }
    K::CisaStep step(plan, kvh, r, sms);
    Dev<K::bf16_bits> q(std::size_t(plan.total_tokens) * kvh * r * 128), o(q.n), iq(std::size_t(plan.total_tokens) * kvh * 128);
    fill(q.p, q.n, 19);
    fill(iq.p, iq.n, 23, 0.5f);
    if (planted) add_direction<<<1024, 256>>>(iq.p, iq.n, World::kPlantAlpha);
    OtherWork other(p, plan, w);
    auto run = [&](K::Instrument* ins) {
      other.run(w, ins);
      step.run(q.p, iq.p, o.p, w.kv, w.reps->p, w.bt, nullptr, ins);
    };
    if (sw.profile) {
      run(nullptr);
      ncu_boundary_kernel<<<1, 32>>>(static_cast<int>(index));
      ck(cudaDeviceSynchronize(), "profile");
      return m;
    }
    auto first = timer.components(run, 1);
    double total = 0;
    for (const auto& [c, ms] : first) total += ms;
    auto c = timer.components(run, reps_for(total));
    auto get = [&](const char* k) { return c.count(k) ? c[k] : 0.0; };
    m.attention_cisa = get("attention");
    m.scoring = get("scoring");
    m.topk = get("topk");
    m.setup = get("setup");
    m.other = get("other");
    m.selection_overlap = selection_overlap(step, static_cast<int>(p.cisa.budget_chunks));
  }
  return m;
}

std::vector<double>& col(Table& t, const std::string& name) {
  return std::get<std::vector<double>>(const_cast<Column*>(t.find(name))->data);
}

}  // namespace

void measure_points(const Scenario& sc, Table& t, Attributes& attrs, bool required) {
  const gpu::DeviceInfo dev = gpu::query_device();
  if (!dev.available) {
    if (required) throw InputError({"command line", 0, "--measure"}, dev.reason + "; use --measure auto to skip measurement without a GPU");
    attrs["measurement"] = "skipped: " + dev.reason;
    std::cerr << "cisa-sim: --measure auto: not measuring: " << dev.reason << "\n";
    return;
  }
  const auto& index = std::get<std::vector<std::int64_t>>(t.find("point_index")->data);
  auto &att_d = col(t, "meas_ms_attention_dense"), &att_c = col(t, "meas_ms_attention_cisa"), &sc_ms = col(t, "meas_ms_scoring"),
       &tk = col(t, "meas_ms_topk"), &su = col(t, "meas_ms_setup"), &busy_d = col(t, "meas_ms_busy_dense"),
       &busy_c = col(t, "meas_ms_busy_cisa"), &ot = col(t, "meas_ms_other"), &ov = col(t, "meas_selection_overlap");
  const Switches sw = read_switches();
  const bool planted = sc.measure_inputs == "planted";
  // Group rows by the cache they need so each cache is built once.
  std::map<std::tuple<int, std::int64_t, int>, std::vector<std::size_t>> by_world;
  std::string skipped;
  std::size_t n_skipped = 0;
  std::size_t free_b = 0, total_b = 0;
  ck(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  for (std::size_t row = 0; row < index.size(); ++row) {
    const Point& p = sc.points[static_cast<std::size_t>(index[row])];
    if (!sw.only.empty() && !sw.only.count(index[row])) continue;  // CISA_MEASURE_ONLY
    std::string why = unsupported(p);
    const double need = World::bytes(p.work.batch, p.work.context_tokens, p.geo.kv_heads) +
                        4.0 * p.work.batch * positions_per_forward(p.work) * p.geo.q_heads * 128 * 2 + (256 << 20);
    if (why.empty() && need > 0.8 * static_cast<double>(free_b))
      why = "needs ~" + std::to_string(static_cast<long long>(need / 1e9)) + " GB, the card has " +
            std::to_string(static_cast<long long>(free_b / 1e9)) + " GB free";
    if (!why.empty()) {
      ++n_skipped;
      skipped += "point " + std::to_string(index[row]) + ": " + why + "\n";
      continue;
    }
    by_world[{p.work.batch, p.work.context_tokens, p.geo.kv_heads}].push_back(row);
  }
  std::size_t todo = 0, done = 0;
  for (const auto& [k, rows] : by_world) todo += rows.size();
  std::cerr << "measuring " << todo << " points on " << dev.name << " (" << n_skipped << " skipped)\n";
  Timer timer;
  std::map<DenseKey, double> dense_cache;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& [key, rows] : by_world) {
    World w(std::get<0>(key), std::get<1>(key), std::get<2>(key), 1000 + std::get<1>(key) % 997 + std::get<0>(key));
    for (std::size_t row : rows) {
      const Point& p = sc.points[static_cast<std::size_t>(index[row])];
      const Measured m = measure_one(p, index[row], w, timer, dev.sms, dense_cache, sw, planted);
      att_d[row] = m.attention_dense;
      att_c[row] = m.attention_cisa;
      sc_ms[row] = m.scoring;
      tk[row] = m.topk;
      su[row] = m.setup;
      ot[row] = m.other;
      ov[row] = m.selection_overlap;
      busy_d[row] = m.attention_dense;
      busy_c[row] = m.attention_cisa + m.scoring + m.topk + m.setup + m.other;
      ++done;
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "  %zu/%zu points, %.0f s, ETA %.0f s\n", done, todo, el, el / done * (todo - done));
    }
  }
  fill_errors(t);
  const std::string inputs =
      planted ? "planted inputs (round(selection_overlap x K) pages per sequence with keys along one direction that every "
                "index query shares, so neighbouring selections choose them; the rest random)"
              : "random BF16 K/V/Q";
  attrs["measurement"] = std::string(sw.profile ? "PROFILE MODE (one run per point for Nsight Compute; times not measured): " : "") +
                         "measured " + std::to_string(done) + " points on " + dev.name + " with the cisa_kernels library; " +
                         inputs + ", pages scattered over the pool; median CUDA-event time per component, L2 flushed before "
                         "each repetition of the whole step (not between its components); other = index projection "
                         "(cuBLAS BF16 GEMM) + representative update of the pages the forward completes";
  attrs["measure_inputs"] = sc.measure_inputs;
  attrs["measurement_skipped"] = skipped;
  attrs["measurement_device"] = dev.name;
}

}  // namespace cisa

namespace cisa::gpu {

namespace {

std::string fmt_scoring(double ms1, double r1, double w1, double ms2, double r2, double w2) {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "cisa_kernels scoring in the step: decode 64 x 1M, K=4,096 (%.3f ms; model DRAM read %.3g B, write %.3g B) and "
                "prefill 4 x (1M + 512), G=1 (%.3f ms; read %.3g B, write %.3g B); t - floor = R/read_bw + W/write_bw solved",
                ms1, r1, w1, ms2, r2, w2);
  return buf;
}

// One CISA step of B sequences (one KV head, r = 4) at `hist` cached tokens + P new positions,
// for the calibration's pipeline shapes: scoring then top-k, as in the step (no flush between).
struct PipelineShape {
  int B, P, G, K, W;
  std::int64_t hist;
  int r = 4;
};

struct PipelineTimes {
  double scoring_ms = 0, topk_ms = 0, attention_ms = 0, setup_ms = 0;
  int attention_launches = 0;
  double page_visits = 0, attention_ctas = 0;  // from the plan: sum of work items' page lists
  ForwardCost model;  // the model's costs of this shape (bytes split, rows, elements)
};

PipelineTimes time_pipeline(const PipelineShape& ps, World& w, Timer& timer, int sms, const Hardware& hw, int reps) {
  const int r = ps.r;
  const K::StepBatch b{std::vector<int>(ps.B, static_cast<int>(ps.hist)), std::vector<int>(ps.B, ps.P), 1, r};
  const K::CisaPlan plan = K::plan_cisa_step(b, K::StepConfig{ps.W, ps.K, ps.G});
  K::CisaStep step(plan, 1, r, sms);
  Dev<K::bf16_bits> q(std::size_t(plan.total_tokens) * r * 128), o(q.n), iq(std::size_t(plan.total_tokens) * 128);
  fill(q.p, q.n, 41);
  fill(iq.p, iq.n, 43, 0.5f);
  // The index projection and representative update run before the step, as in a forward and in
  // --measure (the descriptor copy queues behind them).
  Point pt;
  pt.geo.q_heads = r;
  pt.geo.kv_heads = 1;
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
    step.run(q.p, iq.p, o.p, w.kv, w.reps->p, w.bt, nullptr, ins);
  };
  PipelineTimes t;
  for (const auto& wk : plan.work) t.page_visits += wk.n_pages;
  t.attention_ctas = static_cast<double>(plan.work.size()) * step.num_splits();
  {
    K::Instrument ins;
    run(&ins);
    for (const auto& rec : ins.collect())
      if (rec.component == K::Component::attention) ++t.attention_launches;
  }
  auto c = timer.components(run, reps);
  t.scoring_ms = c["scoring"];
  t.topk_ms = c["topk"];
  t.attention_ms = c["attention"];
  t.setup_ms = c["setup"];
  Geometry geo;
  geo.q_heads = r;
  geo.kv_heads = 1;
  geo.head_dim = 128;
  geo.hidden = 4096;
  CisaConfig cfg;
  cfg.window_pages = ps.W;
  cfg.budget_chunks = ps.K;
  cfg.qshare_g = ps.G;
  KernelShape shape;
  shape.attention_tile_rows = hw.attention_tile_rows;
  shape.score_tile_rows = hw.score_tile_rows;
  shape.topk_radix_passes = hw.topk_radix_passes;
  shape.sms = sms;
  shape.l2_reuse = hw.has_calibration ? hw.cal.l2_reuse.value : 1.0;
  t.model = forward_cost(geo, cfg, ps.G, ps.hist, ps.P, ps.B, shape);
  return t;
}

}  // namespace

KernelRates measure_kernel_rates(int sms, const Hardware& hw) {
  using namespace cisa;
  KernelRates out;
  Timer timer;
  const int passes = hw.topk_radix_passes;
  // Attention: dense prefill, 8 sequences x (128K history + 512 new positions), r = 4, one KV head:
  // 128-row tiles are full, the work is compute-bound (~1 TFLOP).
  {
    const int B = 8, P = 512, r = 4;
    const std::int64_t hist = 131072;
    World w(B, hist + P, 1, 77);
    const K::StepBatch b{std::vector<int>(B, static_cast<int>(hist)), std::vector<int>(B, P), 1, r};
    const K::CisaPlan plan = K::plan_dense(b);
    K::CisaStep step(plan, 1, r, sms);
    Dev<K::bf16_bits> q(std::size_t(plan.total_tokens) * r * 128), o(q.n);
    fill(q.p, q.n, 5);
    step.upload(nullptr);
    double flops = 0;
    {
      K::Instrument ins;
      step.run_attention(q.p, o.p, w.kv, w.bt, nullptr, &ins);
      for (const auto& rec : ins.collect()) flops += rec.flops_useful;
    }
    const double ms = timer.components([&](K::Instrument* ins) { step.run_attention(q.p, o.p, w.kv, w.bt, nullptr, ins); }, 9)["attention"];
    out.attention_tflops = flops / (ms * 1e-3) / 1e12;
    out.attention_method = "cisa_kernels paged_attention, dense prefill B=8, history 131072 + 512 new, r=4, 1 KV head, "
                           "useful FLOPs / median of 9 (L2 flushed)";
  }
  double floor_setup_bytes = 0;
  // Floors: one selection (K = 64, W = 16) of one sequence with 2,048 cached tokens: every kernel
  // does almost no work, so its event time is its fixed cost per launch.
  {
    World w(1, 2048 + 1, 1, 61);
    const PipelineTimes t = time_pipeline({1, 1, 1, 64, 16, 2048}, w, timer, sms, hw, 31);
    out.attention_floor_us = t.attention_ms * 1e3 / std::max(1, t.attention_launches);
    out.scoring_floor_us = t.scoring_ms * 1e3;  // the component (sum_index_queries + score_pages) as one

    out.topk_floor_us = t.topk_ms * 1e3;
    out.setup_floor_us = t.setup_ms * 1e3;
    floor_setup_bytes = t.model.setup_h2d_bytes;

    out.floor_method = "cisa_kernels step of one selection (K=64, W=16, 2,048 cached tokens, decode): CUDA-event time per "
                       "launch, median of 31 (L2 flushed)";
  }
  const double topk_floor_s = out.topk_floor_us * 1e-6, scoring_floor_s = out.scoring_floor_us * 1e-6;
  // Page visits: 2 sequences x (32K cached + 512 new), G = 4, K = 1,024: the 34 MB of K/V stay in
  // L2 after their first read, so the time is the kernel's per-page work for the tile class the
  // rows select (r = 4/8/16/32 -> 16/32/64/128 rows).
  {
    World w(2, 32768 + 512, 1, 73);
    const int rs[4] = {4, 8, 16, 32};
    for (int i = 0; i < 4; ++i) {
      const PipelineTimes t = time_pipeline({2, 512, 4, 1024, 128, 32768, rs[i]}, w, timer, sms, hw, 9);
      const double waves = std::ceil(t.attention_ctas / sms);
      const double fill = t.attention_ctas / (waves * sms);
      const double busy_s = t.attention_ms * 1e-3 - t.attention_launches * out.attention_floor_us * 1e-6;
      out.attention_page_ns[i] = busy_s * sms * fill / t.page_visits * 1e9;
    }
    out.attention_page_method = "cisa_kernels step, 2 x (32K + 512), G=4, K=1,024, W=128, r=4/8/16/32 (tiles of 16/32/64/128 "
                                "rows), pages L2-resident: (attention time - floors) x SMs x wave fill / page visits, median of 9";
  }
  // Top-k row time = N_e x passes / rate + K / out_rate (radix passes, then the output pass that
  // translates and writes K page IDs). Two prefill shapes with scores from DRAM and different
  // N_e / K solve for both: 4 x (1M + 512) (N_e = 65,408) and 16 x (128K + 512) (N_e = 8,064),
  // G = 1, K = 4,096, many waves of rows. The decode shape (64 x 1M, one wave, scores left in L2
  // by the scoring kernel) then gives the L2 rate.
  PipelineTimes dec, pre;
  {
    World w(4, (std::int64_t(1) << 20) + 512, 1, 71);
    pre = time_pipeline({4, 512, 1, 4096, 128, std::int64_t(1) << 20}, w, timer, sms, hw, 5);
  }
  PipelineTimes pre128;
  {
    World w(16, 131072 + 512, 1, 79);
    pre128 = time_pipeline({16, 512, 1, 4096, 128, 131072}, w, timer, sms, hw, 5);
  }
  {
    auto row = [&](const PipelineTimes& t, double& keys, double& ids, double& secs) {
      const double waves = std::ceil(t.model.topk_rows / sms);
      keys = waves * t.model.topk_elements / t.model.topk_rows * passes;
      ids = waves * 4096.0;
      secs = t.topk_ms * 1e-3 - topk_floor_s;
    };
    // Setup = latency + descriptor bytes / bandwidth, from the floor shape and this one (8,192
    // selections, ~0.6 MB of descriptors; bytes as the model counts them).
    {
      const double b2 = pre128.model.setup_h2d_bytes, t2s = pre128.setup_ms * 1e-3, t1s = out.setup_floor_us * 1e-6;
      if (b2 > floor_setup_bytes && t2s > t1s) {
        out.h2d_step_bw_gbs = (b2 - floor_setup_bytes) / (t2s - t1s) / 1e9;
        out.setup_floor_us = (t1s - floor_setup_bytes / (out.h2d_step_bw_gbs * 1e9)) * 1e6;
      }
    }
    double k1, i1, t1, k2, i2, t2;
    row(pre, k1, i1, t1);
    row(pre128, k2, i2, t2);
    const double det = k1 * i2 - k2 * i1;
    const double inv_rate = (t1 * i2 - t2 * i1) / det, inv_out = (k1 * t2 - k2 * t1) / det;
    if (det != 0 && inv_rate > 0 && inv_out > 0) {
      out.topk_elem_passes_per_ns_per_sm = 1.0 / inv_rate / 1e9;
      out.topk_out_ids_per_ns_per_sm = 1.0 / inv_out / 1e9;
    } else {  // not separable: all of the row time on the key passes (the older model)
      out.topk_elem_passes_per_ns_per_sm = k1 / t1 / 1e9;
    }
    char buf[300];
    std::snprintf(buf, sizeof buf, "(%.3f ms, N_e 65,408) and 16 x (128K + 512) (%.3f ms, N_e 8,064)", pre.topk_ms, pre128.topk_ms);
    out.topk_method = "cisa_kernels step, prefill, G=1, K=4,096, scores from DRAM: 4 x (1M + 512) " + std::string(buf) +
                      "; time - floor = waves x (N_e x " + std::to_string(passes) + " / rate + K / out_rate) solved, median of 5";
  }
  {
    World w(64, (std::int64_t(1) << 20) + 1, 1, 67);
    dec = time_pipeline({64, 1, 1, 4096, 128, std::int64_t(1) << 20}, w, timer, sms, hw, 15);
    const double per_row = dec.model.topk_elements / dec.model.topk_rows * passes;
    const double out_s = out.topk_out_ids_per_ns_per_sm > 0 ? 4096.0 / (out.topk_out_ids_per_ns_per_sm * 1e9) : 0.0;
    out.topk_l2_elem_passes_per_ns_per_sm = per_row / ((dec.topk_ms * 1e-3 - topk_floor_s - out_s) * 1e9);
    out.topk_l2_method = "cisa_kernels step, decode, 64 x 1M cached tokens, K=4,096: top-k after scoring (scores in L2), "
                         "N_e x " + std::to_string(passes) + " passes / (median time of 15 - top-k floor - output pass)";
  }
  // Scoring: t - floor = R / read_bw + W / write_bw at both shapes (R, W: the model's DRAM bytes).
  {
    const double r1 = dec.model.scoring.dram_bytes - dec.model.scoring.dram_write_bytes, w1 = dec.model.scoring.dram_write_bytes;
    const double r2 = pre.model.scoring.dram_bytes - pre.model.scoring.dram_write_bytes, w2 = pre.model.scoring.dram_write_bytes;
    const double t1 = dec.scoring_ms * 1e-3 - scoring_floor_s, t2 = pre.scoring_ms * 1e-3 - scoring_floor_s;
    const double det = r1 * w2 - r2 * w1;
    const double inv_r = (t1 * w2 - t2 * w1) / det, inv_w = (r1 * t2 - r2 * t1) / det;
    if (det != 0 && inv_r > 0 && inv_w > 0) {
      out.scoring_read_bw_tbs = 1.0 / inv_r / 1e12;
      out.scoring_write_bw_tbs = 1.0 / inv_w / 1e12;
    }
    out.scoring_method = fmt_scoring(dec.scoring_ms, r1, w1, pre.scoring_ms, r2, w2);
  }
  return out;
}

}  // namespace cisa::gpu
