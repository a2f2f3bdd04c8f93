// measure_points with the instrumented CUDA kernels (kernels/): for each scenario point that the
// kernels support and the card holds, build a random paged KV cache of the point's geometry, run
// the dense baseline and the CISA step, and record median CUDA-event times per component.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
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
__global__ void fill_f32(float* out, std::size_t n, unsigned long long seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned long long z = seed + i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    // Box-Muller: scores of real selections (sums of many products) are close to normal.
    const float u1 = ((z & 0xffffffu) + 1) * (1.0f / 16777217.0f), u2 = ((z >> 24) & 0xffffffu) * (1.0f / 16777216.0f);
    out[i] = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
  }
}

void fill(K::bf16_bits* p, std::size_t n, unsigned long long seed, float scale = 1.0f) {
  fill_bf16<<<1024, 256>>>(p, n, seed, scale);
  ck(cudaGetLastError(), "fill_bf16");
}

// One paged cache for every point with the same (batch, context, KV heads).
struct World {
  std::unique_ptr<Dev<K::bf16_bits>> k, v, reps;
  std::unique_ptr<Dev<int>> table;
  K::PagedKV kv;
  K::BlockTable bt;
  World(int batch, std::int64_t tokens, int kv_heads, unsigned long long seed) {
    const int pages_per_seq = static_cast<int>((tokens + 15) / 16);
    const std::int64_t pages = std::int64_t(batch) * pages_per_seq + 1;
    std::vector<int> perm(static_cast<std::size_t>(pages));
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937_64 rng(seed);
    std::shuffle(perm.begin(), perm.end(), rng);  // physical pages scattered like a real pool
    std::vector<int> ids(std::size_t(batch) * pages_per_seq);
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
};

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

Measured measure_one(const Point& p, World& w, Timer& timer, int sms, std::map<DenseKey, double>& dense_cache) {
  Measured m;
  const int r = p.geo.heads_per_group(), kvh = p.geo.kv_heads, B = p.work.batch;
  const int P = positions_per_forward(p.work);
  const int G = effective_qshare(p.cisa, p.work);
  const K::StepBatch b{std::vector<int>(B, static_cast<int>(p.work.context_tokens - P)), std::vector<int>(B, P), kvh, r};
  // Dense baseline: the same kernel family over the full block table.
  const DenseKey dk{B, p.work.context_tokens, P, kvh, r};
  if (dense_cache.count(dk)) {
    m.attention_dense = dense_cache[dk];
  } else {
    const K::CisaPlan plan = K::plan_dense(b);
    K::CisaStep step(plan, kvh, r, sms);
    Dev<K::bf16_bits> q(std::size_t(plan.total_tokens) * kvh * r * 128), o(q.n);
    fill(q.p, q.n, 17);
    step.upload(nullptr);
    auto run = [&](K::Instrument* ins) { step.run_attention(q.p, o.p, w.kv, w.bt, nullptr, ins); };
    const double first = timer.components(run, 1)["attention"];
    m.attention_dense = timer.components(run, reps_for(first))["attention"];
    dense_cache[dk] = m.attention_dense;
  }
  // CISA step: setup (descriptor upload), scoring, top-k, attention.
  {
    const K::CisaPlan plan = K::plan_cisa_step(b, K::StepConfig{p.cisa.window_pages, static_cast<int>(p.cisa.budget_chunks), G});
    K::CisaStep step(plan, kvh, r, sms);
    Dev<K::bf16_bits> q(std::size_t(plan.total_tokens) * kvh * r * 128), o(q.n), iq(std::size_t(plan.total_tokens) * kvh * 128);
    fill(q.p, q.n, 19);
    fill(iq.p, iq.n, 23, 0.5f);
    auto run = [&](K::Instrument* ins) { step.run(q.p, iq.p, o.p, w.kv, w.reps->p, w.bt, nullptr, ins); };
    auto first = timer.components(run, 1);
    double total = 0;
    for (const auto& [c, ms] : first) total += ms;
    auto c = timer.components(run, reps_for(total));
    auto get = [&](const char* k) { return c.count(k) ? c[k] : 0.0; };
    m.attention_cisa = get("attention");
    m.scoring = get("scoring");
    m.topk = get("topk");
    m.setup = get("setup");
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
       &busy_c = col(t, "meas_ms_busy_cisa");
  // Group rows by the cache they need so each cache is built once.
  std::map<std::tuple<int, std::int64_t, int>, std::vector<std::size_t>> by_world;
  std::string skipped;
  std::size_t n_skipped = 0;
  std::size_t free_b = 0, total_b = 0;
  ck(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  for (std::size_t row = 0; row < index.size(); ++row) {
    const Point& p = sc.points[static_cast<std::size_t>(index[row])];
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
    World w(std::get<0>(key), std::get<1>(key), std::get<2>(key), 1000 + done);
    for (std::size_t row : rows) {
      const Point& p = sc.points[static_cast<std::size_t>(index[row])];
      const Measured m = measure_one(p, w, timer, dev.sms, dense_cache);
      att_d[row] = m.attention_dense;
      att_c[row] = m.attention_cisa;
      sc_ms[row] = m.scoring;
      tk[row] = m.topk;
      su[row] = m.setup;
      busy_d[row] = m.attention_dense;
      busy_c[row] = m.attention_cisa + m.scoring + m.topk + m.setup;
      ++done;
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "  %zu/%zu points, %.0f s, ETA %.0f s\n", done, todo, el, el / done * (todo - done));
    }
  }
  fill_errors(t);
  attrs["measurement"] = "measured " + std::to_string(done) + " points on " + dev.name +
                         " with the cisa_kernels library; random BF16 K/V/Q, pages scattered over the pool; "
                         "median CUDA-event time per component, L2 flushed before each repetition; "
                         "meas_ms_other is not measured (index projection not implemented in kernels/), so "
                         "meas_ms_busy_cisa sums attention, scoring, top-k and setup";
  attrs["measurement_skipped"] = skipped;
  attrs["measurement_device"] = dev.name;
}

}  // namespace cisa

namespace cisa::gpu {

KernelRates measure_kernel_rates(int sms) {
  using namespace cisa;
  KernelRates out;
  Timer timer;
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
  // Top-k: 64 rows x 65,536 fp32 scores, K = 4,096: one CTA per row, so the row time is the SM's.
  {
    const int rows = 64, n = 65536, k = 4096;
    World w(rows, std::int64_t(n) * 16 + 16, 1, 91);
    Dev<float> scores(std::size_t(rows) * n);
    fill_f32<<<1024, 256>>>(scores.p, scores.n, 13);
    ck(cudaGetLastError(), "fill_f32");
    std::vector<K::TopkRow> hr(rows);
    for (int i = 0; i < rows; ++i) hr[i] = K::TopkRow{i, n, n};
    Dev<K::TopkRow> drows(hr);
    Dev<int> outp(std::size_t(rows) * k);
    K::TopkArgs a;
    a.scores = scores.p;
    a.score_stride = n;
    a.rows = drows.p;
    a.table = w.bt;
    a.out = outp.p;
    a.out_stride = k;
    a.k = k;
    a.rows_host = &hr;
    const double ms = timer.components([&](K::Instrument* ins) { K::topk_select(a, nullptr, ins); }, 15)["topk"];
    out.topk_elem_passes_per_ns_per_sm = double(n) * 4 / (ms * 1e6);
  }
  // Scoring: 4 sequences at 1M history, 512 new positions, G = 4, K = 4,096: 128 selections per
  // sequence read the representatives and write fp32 scores (the prefill mix of reads and writes).
  {
    const int B = 4, P = 512, r = 4;
    const std::int64_t hist = 1 << 20;
    World w(B, hist + P, 1, 55);
    const K::StepBatch b{std::vector<int>(B, static_cast<int>(hist)), std::vector<int>(B, P), 1, r};
    const K::CisaPlan plan = K::plan_cisa_step(b, K::StepConfig{128, 4096, 4});
    K::CisaStep step(plan, 1, r, sms);
    Dev<K::bf16_bits> iq(std::size_t(plan.total_tokens) * 128);
    fill(iq.p, iq.n, 29, 0.5f);
    step.upload(nullptr);
    double bytes = 0;
    {
      K::Instrument ins;
      step.run_scoring(iq.p, w.reps->p, w.bt, 1, nullptr, &ins);
      for (const auto& rec : ins.collect()) bytes += rec.bytes;
    }
    const double ms = timer.components([&](K::Instrument* ins) { step.run_scoring(iq.p, w.reps->p, w.bt, 1, nullptr, ins); }, 9)["scoring"];
    out.scoring_bw_tbs = bytes / (ms * 1e-3) / 1e12;
    out.scoring_method = "cisa_kernels scoring, 4 x (1M history + 512 new), G = 4, K = 4,096: expected bytes / median of 9";
    out.topk_method = "cisa_kernels topk_select, 64 rows x 65,536 normal fp32 keys, K = 4,096, one CTA per row, "
                      "65,536 x 4 passes / median row time of 15";
  }
  return out;
}

}  // namespace cisa::gpu
