// Kernel benchmark suite (issue 3's performance contract). One process: measures the card's read
// bandwidth and BF16 MMA rate (cuBLAS GEMM), then times every fixed case (warm-up, L2 flushed before
// each rep, median of >= 20 reps) and writes a CSV: case, kernel, ms, bytes, flops, bound_ms, peer,
// peer_ms (peers are filled in by bench/peers.py, run right after in the same device call).
// Shapes: history 1,048,576 tokens, c = 16, W = 128 pages, K = 4,096, BF16, d = 128, B = 16,
// one KV head per rank; inkling r = 4, ultra r = 32. Also writes the g16 selections for the
// FlexAttention peer (--sel-out) so the peer runs with the same selections.
#include <cublas_v2.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "../tests/harness.cuh"
#include "cisa_kernels/cisa_step.hpp"
#include "cisa_kernels/representatives.hpp"
#include "cisa_kernels/topk.hpp"

using namespace cisa::kernels;
using harness::DevBuf;

namespace {

constexpr int kB = 16;
constexpr int kHist = 1 << 20;
constexpr int kW = 128;
constexpr int kK = 4096;
constexpr int kReps = 20;

struct Row {
  std::string name, kernel;
  double ms = 0, bytes = 0, flops = 0, bound_ms = 0;
  std::string note;
};
std::vector<Row> g_rows;
double g_bw = 0;    // bytes / ms
double g_mma = 0;   // flops / ms
DevBuf<unsigned char>* g_flush = nullptr;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Events, flush and f's work all on `st` (default: the legacy stream).
double time_ms(const std::function<void()>& f, int reps = kReps, bool flush = true, cudaStream_t st = nullptr) {
  cudaEvent_t a, b;
  HCHECK(cudaEventCreate(&a));
  HCHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();
  HCHECK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    if (flush) HCHECK(cudaMemsetAsync(g_flush->p, i & 0xff, g_flush->n, st));
    HCHECK(cudaEventRecord(a, st));
    f();
    HCHECK(cudaEventRecord(b, st));
    HCHECK(cudaEventSynchronize(b));
    float ms = 0;
    HCHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  HCHECK(cudaGetLastError());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(t);
}

__global__ void read_kernel(const uint4* __restrict__ p, size_t n, unsigned* out) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const uint4 v = __ldcs(p + i);
    acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x12345678u) *out = 1;
}

// Random 256-byte gathers (the scoring kernels' representative reads): lane l of a warp reads 16-byte
// chunk (l & 15) of page 2u + (l >> 4) of a batch of 32 table entries, 16 loads in flight per lane.
template <bool HINT256>
__global__ void gather_kernel(const uint4* __restrict__ reps, const int* __restrict__ ids, long long n_ids,
                              unsigned* out) {
  const int lane = threadIdx.x & 31;
  const long long nw = (long long)gridDim.x * blockDim.x / 32;
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (long long b = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; b * 32 < n_ids; b += nw) {
    const long long j = b * 32 + lane;
    const int pl = j < n_ids ? ids[j] : 0;
    uint4 v[16];
#pragma unroll
    for (int u = 0; u < 16; ++u) {
      const int pid = __shfl_sync(0xffffffffu, pl, 2 * u + (lane >> 4));
      const uint4* src = reps + (long long)pid * 16 + (lane & 15);
      if constexpr (HINT256)
        asm volatile("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                     : "l"(src));
      else
        v[u] = __ldg(src);
    }
#pragma unroll
    for (int u = 0; u < 16; ++u) {
      acc.x ^= v[u].x; acc.y ^= v[u].y; acc.z ^= v[u].z; acc.w ^= v[u].w;
    }
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x12345678u) *out = 1;
}

void measure_card() {
  const size_t bytes = size_t(4) << 30;
  DevBuf<unsigned char> buf(bytes);
  DevBuf<unsigned> sink(1);
  harness::fill_normal(reinterpret_cast<bf16_bits*>(buf.p), bytes / 2, 1234);
  int sms = 0;
  HCHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const double ms = time_ms([&] { read_kernel<<<sms * 8, 512>>>(reinterpret_cast<const uint4*>(buf.p), bytes / 16, sink.p); });
  g_bw = bytes / ms;
  g_rows.push_back({"card_read_bw", "read_kernel_4GiB", ms, double(bytes), 0, ms, "measured HBM read bandwidth"});
  std::printf("read bandwidth: %.3f TB/s\n", g_bw / 1e9);
  // BF16 GEMM through cuBLAS (8192^3, fp32 accumulate) on random data
  const int n = 8192;
  DevBuf<bf16_bits> A(size_t(n) * n), Bm(size_t(n) * n), C(size_t(n) * n);
  harness::fill_normal(A.p, A.n, 1);
  harness::fill_normal(Bm.p, Bm.n, 2);
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate");
  const float alpha = 1.0f, beta = 0.0f;
  auto gemm = [&] {
    if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A.p, CUDA_R_16BF, n, Bm.p, CUDA_R_16BF, n, &beta, C.p,
                     CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error("cublasGemmEx");
  };
  const double gms = time_ms(gemm, 10, false);
  const double fl = 2.0 * n * double(n) * n;
  g_mma = fl / gms;
  cublasDestroy(h);
  g_rows.push_back({"card_mma_rate", "cublas_bf16_gemm_8192", gms, 0, fl, gms, "measured BF16 MMA rate"});
  std::printf("BF16 GEMM: %.1f TF/s\n", g_mma / 1e9);
}

double bound(double bytes, double flops) { return std::max(bytes / g_bw, flops / g_mma); }

// The shared paged cache: 16 sequences of kHist + 512 tokens, 1 KV head, pages randomly permuted.
struct World {
  harness::Tables tb;
  std::unique_ptr<DevBuf<bf16_bits>> k, v, reps;
  std::unique_ptr<DevBuf<int>> table;
  PagedKV kv;
  BlockTable bt;
  std::unique_ptr<DevBuf<int>> rep_ids;
  BlockTable rt;  // rep table (CISA_REP_LOGICAL set) or none
  std::vector<int> inverse;  // physical -> logical page
  int nseq;
  explicit World(int nseq_ = kB, int tokens = kHist + 512) : nseq(nseq_) {
    std::mt19937_64 rng(42);
    tb = harness::make_tables(std::vector<int>(nseq, tokens), rng, 0);
    const size_t n = size_t(tb.num_pages) * 16 * 128;
    k = std::make_unique<DevBuf<bf16_bits>>(n);
    v = std::make_unique<DevBuf<bf16_bits>>(n);
    reps = std::make_unique<DevBuf<bf16_bits>>(size_t(tb.num_pages) * 128);
    harness::fill_normal(k->p, n, 11);
    harness::fill_normal(v->p, n, 12);
    table = std::make_unique<DevBuf<int>>(tb.ids);
    kv = PagedKV{k->p, v->p, tb.num_pages, 1};
    bt = BlockTable{table->p, tb.stride};
    inverse.assign(size_t(tb.num_pages), -1);
    for (int s = 0; s < nseq; ++s)
      for (int i = 0; i < tb.stride; ++i) inverse[size_t(tb.ids[size_t(s) * tb.stride + i])] = i;
    rebuild_representatives(kv, reps->p, nullptr);
    if (std::getenv("CISA_REP_LOGICAL") != nullptr) {
      // representatives in logical order: rep blocks of 64 pages, randomly placed
      const int nblk = (tb.stride + kRepBlockPages - 1) / kRepBlockPages;
      std::vector<int> perm(size_t(nseq) * nblk);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      rep_ids = std::make_unique<DevBuf<int>>(perm);
      rt = BlockTable{rep_ids->p, nblk};
      reps = std::make_unique<DevBuf<bf16_bits>>(perm.size() * kRepBlockPages * 128);
      rebuild_representatives(kv, bt, rt, nseq, tb.stride, reps->p, nullptr);
    }
    HCHECK(cudaDeviceSynchronize());
  }
};

struct Sums {
  double bytes = 0, flops = 0;
  std::map<std::string, double> comp_ms, comp_bytes;
};
Sums sums(const std::vector<LaunchRecord>& recs) {
  Sums s;
  for (const auto& r : recs) {
    s.bytes += r.bytes;
    s.flops += r.flops_useful;
    s.comp_ms[component_name(r.component)] += r.ms;
    s.comp_bytes[component_name(r.component)] += r.bytes;
  }
  return s;
}

// bound_ms < 0: max(bytes / read BW, FLOPs / MMA rate); else the given bound (the step's: the sum of
// its kernels' bounds).
void add(const std::string& name, const std::string& kernel, double ms, double bytes, double flops,
         const std::string& note = "", double bound_ms = -1.0) {
  const double bd = bound_ms < 0 ? bound(bytes, flops) : bound_ms;
  g_rows.push_back({name, kernel, ms, bytes, flops, bd, note});
  std::printf("%-44s %-26s %9.4f ms  %8.3f GB  %8.2f TF  bound %8.4f ms  (%.2f TB/s, %.1f TF/s)\n", name.c_str(),
              kernel.c_str(), ms, bytes / 1e9, flops / 1e12, bd, bytes / ms / 1e9, flops / ms / 1e9);
  std::fflush(stdout);
}

// Sum over the launches of max(bytes / read BW, useful FLOPs / MMA rate).
double sum_of_bounds(const std::vector<LaunchRecord>& recs) {
  double b = 0;
  for (const auto& r : recs) b += bound(r.bytes, r.flops_useful);
  return b;
}

struct Inputs {
  std::unique_ptr<DevBuf<bf16_bits>> q, iq, o;
};
Inputs make_inputs(long long T, int r, unsigned long long seed) {
  Inputs in;
  in.q = std::make_unique<DevBuf<bf16_bits>>(size_t(T) * r * 128);
  in.iq = std::make_unique<DevBuf<bf16_bits>>(size_t(T) * 128);
  in.o = std::make_unique<DevBuf<bf16_bits>>(size_t(T) * r * 128);
  harness::fill_normal(in.q->p, in.q->n, seed);
  harness::fill_normal(in.iq->p, in.iq->n, seed + 1, 0.5f);
  in.o->poison();
  return in;
}

bool want(const std::string& cases, const std::string& name) {
  return cases == "all" || ("," + cases + ",").find("," + name + ",") != std::string::npos ||
         name.find(cases) == 0;
}

void check_output(const DevBuf<bf16_bits>& o, const std::string& name) {
  const auto h = o.download();
  size_t bad = 0;
  for (auto x : h) bad += std::isnan(bf16_to_float(x)) || std::isinf(bf16_to_float(x));
  if (bad) {
    std::printf("ERROR: %s output has %zu NaN/Inf (unwritten or broken)\n", name.c_str(), bad);
    throw std::runtime_error("bad output");
  }
}

int g_sms = 0;
int g_max_rows = kMaxAttnRows;  // --max-rows

void bench_dense(World& w, const std::string& name, int P, int r) {
  StepBatch b{std::vector<int>(kB, kHist), std::vector<int>(kB, P), 1, r};
  const CisaPlan plan = plan_dense(b, g_max_rows);
  CisaStep step(plan, 1, r, g_sms);
  Inputs in = make_inputs(plan.total_tokens, r, 100 + P + r);
  step.upload(nullptr);
  Instrument ins;
  step.run_attention(in.q->p, in.o->p, w.kv, w.bt, nullptr, &ins);
  const Sums s = sums(ins.collect());
  check_output(*in.o, name);
  const double ms = time_ms([&] { step.run_attention(in.q->p, in.o->p, w.kv, w.bt, nullptr, nullptr); });
  add(name, step.num_splits() > 1 ? "paged_attention_split+combine" : "paged_attention", ms, s.bytes, s.flops,
      "splits=" + std::to_string(step.num_splits()));
}

// Runs the whole CISA step once (so the sparse table holds real selections), then times `what`.
void bench_cisa(World& w, const std::string& name, int P, int r, int G, const std::string& what,
                const std::string& sel_out = "") {
  StepBatch b{std::vector<int>(kB, kHist), std::vector<int>(kB, P), 1, r};
  const CisaPlan plan = plan_cisa_step(b, StepConfig{kW, kK, G, g_max_rows});
  CisaStep step(plan, 1, r, g_sms);
  Inputs in = make_inputs(plan.total_tokens, r, 200 + P + r + G);
  Instrument ins;
  step.run(in.q->p, in.iq->p, in.o->p, w.kv, w.reps->p, w.bt, nullptr, &ins, w.rt);
  const auto recs = ins.collect();
  check_output(*in.o, name);
  const Sums all = sums(recs);
  if (!sel_out.empty()) {
    // logical top-K page indices per selection row, for the FlexAttention peer
    std::vector<int> sp(plan.score_rows.size() * size_t(plan.sparse_stride));
    HCHECK(cudaMemcpy(sp.data(), step.sparse_table(), sp.size() * 4, cudaMemcpyDeviceToHost));
    std::vector<int> logical(plan.score_rows.size() * size_t(kK));
    for (size_t i = 0; i < plan.score_rows.size(); ++i)
      for (int j = 0; j < kK; ++j) logical[i * kK + j] = w.inverse[size_t(sp[i * plan.sparse_stride + j])];
    std::ofstream f(sel_out, std::ios::binary);
    f.write(reinterpret_cast<const char*>(logical.data()), std::streamsize(logical.size() * 4));
    std::printf("wrote %zu selections to %s\n", plan.score_rows.size(), sel_out.c_str());
  }
  if (what == "attention") {
    Instrument i2;
    step.run_attention(in.q->p, in.o->p, w.kv, w.bt, nullptr, &i2);
    const Sums s = sums(i2.collect());
    const double ms = time_ms([&] { step.run_attention(in.q->p, in.o->p, w.kv, w.bt, nullptr, nullptr); });
    add(name, step.num_splits() > 1 ? "paged_attention_split+combine" : "paged_attention", ms, s.bytes, s.flops,
        "splits=" + std::to_string(step.num_splits()) + " rows/cta=" + std::to_string(plan.rows_per_cta));
  } else if (what == "scoring") {
    Instrument i2;
    step.run_scoring(in.iq->p, w.reps->p, w.bt, 1, nullptr, &i2, w.rt);
    const Sums s = sums(i2.collect());
    const double ms = time_ms([&] { step.run_scoring(in.iq->p, w.reps->p, w.bt, 1, nullptr, nullptr, w.rt); });
    add(name, (plan.score_groups.size() == plan.score_rows.size() ? "score_pages_gemv" : "sum_index_queries+score_pages"), ms, s.bytes, s.flops,
        "rows=" + std::to_string(plan.score_rows.size()));
    if (plan.score_groups.size() == plan.score_rows.size()) {
      // the one-row GEMV with fewer CTAs (CTA slots left free, as beside a top-k in the pipelined step)
      DevBuf<ScoreRow> drows(plan.score_rows);
      DevBuf<ScoreGroup> dgroups(plan.score_groups);
      DevBuf<std::uint16_t> dkeys(plan.score_rows.size() * size_t(plan.score_stride));
      ScoreArgs sa;
      sa.iq = in.iq->p;
      sa.reps = w.reps->p;
      sa.rep_table = w.rt;
      sa.table = w.bt;
      sa.rows = drows.p;
      sa.groups = dgroups.p;
      sa.score_keys = dkeys.p;
      sa.score_stride = plan.score_stride;
      sa.kv_heads = 1;
      sa.rows_host = &plan.score_rows;
      sa.groups_host = &plan.score_groups;
      for (int res : {32, 64, 132}) {
        sa.reserve_ctas = res;
        const double mr = time_ms([&] { score_pages(sa, nullptr, nullptr); });
        add(name + ":reserve" + std::to_string(res), "score_pages_gemv", mr, s.bytes, s.flops,
            std::to_string(res) + " CTA slots left free");
      }
    }
  } else {  // whole step: captured once in a CUDA graph (one launch per replay, no launch gaps)
    cudaStream_t cs;
    HCHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    const double sb = sum_of_bounds(recs);
    const int parts0 = step.pipeline_parts();
    // the default (first row), then the other part counts (A/B rows name:partsN)
    std::vector<int> variants{parts0};
    for (int p : {1, 2, 3, 4, -2, -3})  // negative: no room reserved beside the top-k launches
      if (p != parts0) variants.push_back(p);
    for (int pv : variants) {
      const int p = std::abs(pv);
      step.set_pipeline(p, pv > 0);
      if (step.pipeline_parts() != p) continue;
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      HCHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
      step.run(in.q->p, in.iq->p, in.o->p, w.kv, w.reps->p, w.bt, cs, nullptr, w.rt);
      HCHECK(cudaStreamEndCapture(cs, &graph));
      HCHECK(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagUseNodePriority));
      in.o->poison();
      const double ms = time_ms([&] { HCHECK(cudaGraphLaunch(exec, cs)); }, kReps, true, cs);
      check_output(*in.o, name);
      char note[200];
      std::snprintf(note, sizeof note,
                    "score+topk+attention in one CUDA graph, %d pipelined part(s); bound = sum of its %zu launches' bounds",
                    p, recs.size());
      add(pv == parts0 ? name : name + ":parts" + std::to_string(p) + (pv < 0 ? "_noreserve" : ""), "cisa_step(graph)", ms,
          all.bytes, all.flops, note, sb);
      if (pv == parts0 && p == 1 && !plan.topk_rows.empty()) {
        // the top-k of the last replay (inside the graph, beside whatever the attention's early CTAs
        // do): per-CTA phases of thread 0 and the span of its CTAs' starts and ends
        int max_ne = 0;
        for (const auto& t : plan.topk_rows) max_ne = std::max(max_ne, t.n_e);
        const int n_cta = topk_plan(max_ne, static_cast<int>(plan.topk_rows.size()), true).cluster *
                          static_cast<int>(plan.topk_rows.size());
        const auto ph = topk_phase_cycles(n_cta);
        const auto tm = topk_cta_times_us(n_cta);
        double s1 = 0, e0 = 1e30, e1 = 0;
        for (size_t b = 0; b < tm.size() / 2; ++b) {
          s1 = std::max(s1, tm[2 * b]);
          e0 = std::min(e0, tm[2 * b + 1]);
          e1 = std::max(e1, tm[2 * b + 1]);
        }
        std::printf("%s top-k in the graph: %d CTAs, starts 0-%.2f us, ends %.2f-%.2f us; phases (cycles): load+hist0 %.0f"
                    "  merge0 %.0f  hist1 %.0f  merge1+ %.0f  flags %.0f  stage %.0f  out %.0f\n",
                    name.c_str(), n_cta, s1, e0, e1, ph[0], ph[1], ph[2], ph[3], ph[4], ph[5], ph[6]);
      }
      HCHECK(cudaGraphExecDestroy(exec));
      HCHECK(cudaGraphDestroy(graph));
    }
    step.set_pipeline(parts0);
    const double ms_s = time_ms([&] { step.run(in.q->p, in.iq->p, in.o->p, w.kv, w.reps->p, w.bt, nullptr, nullptr, w.rt); });
    add(name + ":stream", "cisa_step", ms_s, all.bytes, all.flops, "the same launches on a stream, no graph", sb);
    {  // the per-step descriptor copy the step no longer makes (was component setup), for reference
      const double mu = time_ms([&] { step.upload(nullptr); });
      add(name + ":upload_once", "upload_descriptors", mu, 0, 0, "descriptor copy, now once per plan (not in the step)");
    }
    HCHECK(cudaStreamDestroy(cs));
    // component breakdown (instrumented run: per-launch events)
    std::map<std::string, std::vector<double>> comp;
    for (int rep = 0; rep < 5; ++rep) {
      HCHECK(cudaMemsetAsync(g_flush->p, rep, g_flush->n));
      Instrument i3;
      step.run(in.q->p, in.iq->p, in.o->p, w.kv, w.reps->p, w.bt, nullptr, &i3, w.rt);
      for (const auto& [c, t] : sums(i3.collect()).comp_ms) comp[c].push_back(t);
    }
    for (auto& [c, v] : comp) add(name + ":" + c, c, median(v), all.comp_bytes.at(c), c == "attention" ? all.flops : 0.0,
                                  "component, instrumented run");
  }
}

// Prefill scoring (sum_index_queries + score_pages) at kv_heads KV heads and kB / kv_heads sequences
// (equal bytes: the representatives [page][kv_heads][128] and the keys of P / G rows per (sequence,
// KV head)); physical layout, random representatives. once: one launch each (for ncu), no timing.
struct ScoreShape {
  int kvh, nb, hist, P, G, W, K;
};
// CISA_SCORE_SHAPES="kv,B,history,P,G,W,K;..." (other shapes, e.g. the held-out sets'), else
// kv 1, 2, 4, 8 at B = 16 / kv, history 2^20, P 512, G 4, W 128, K 4096
std::vector<ScoreShape> score_shapes(const std::vector<int>& kvs) {
  std::vector<ScoreShape> v;
  if (const char* e = std::getenv("CISA_SCORE_SHAPES")) {
    std::string str(e);
    size_t pos = 0;
    while (pos < str.size()) {
      size_t end = str.find(';', pos);
      if (end == std::string::npos) end = str.size();
      ScoreShape sh{};
      if (std::sscanf(str.substr(pos, end - pos).c_str(), "%d,%d,%d,%d,%d,%d,%d", &sh.kvh, &sh.nb, &sh.hist, &sh.P, &sh.G,
                      &sh.W, &sh.K) == 7)
        v.push_back(sh);
      pos = end + 1;
    }
    return v;
  }
  for (int k : kvs) v.push_back({k, kB / k, kHist, 512, 4, kW, kK});
  return v;
}

void bench_score_kv(const ScoreShape& sh, bool once) {
  const int kvh = sh.kvh, nb = sh.nb, P = sh.P, r = 4, G = sh.G;
  const std::string name = "score_prefill_kv" + std::to_string(kvh) + "_b" + std::to_string(nb) +
                           (sh.hist == kHist && P == 512 && G == 4 && sh.W == kW && sh.K == kK
                                ? std::string()
                                : "_h" + std::to_string(sh.hist) + "_p" + std::to_string(P) + "_g" + std::to_string(G) +
                                      "_w" + std::to_string(sh.W) + "_k" + std::to_string(sh.K));
  std::mt19937_64 rng(77 + kvh);
  const harness::Tables tb = harness::make_tables(std::vector<int>(size_t(nb), sh.hist + P), rng, 0);
  DevBuf<bf16_bits> reps(size_t(tb.num_pages) * kvh * 128);
  harness::fill_normal(reps.p, reps.n, 31 + kvh);
  DevBuf<int> table(tb.ids);
  const BlockTable bt{table.p, tb.stride};
  StepBatch b{std::vector<int>(size_t(nb), sh.hist), std::vector<int>(size_t(nb), P), kvh, r};
  const CisaPlan plan = plan_cisa_step(b, StepConfig{sh.W, sh.K, G, g_max_rows});
  if (plan.score_rows.empty()) {
    std::printf("%s: no scoring rows\n", name.c_str());
    return;
  }
  CisaStep step(plan, kvh, r, g_sms);
  DevBuf<bf16_bits> iq(size_t(plan.total_tokens) * kvh * 128);
  harness::fill_normal(iq.p, iq.n, 41 + kvh, 0.5f);
  HCHECK(cudaDeviceSynchronize());
  if (once) {
    step.run_scoring(iq.p, reps.p, bt, kvh, nullptr, nullptr);
    HCHECK(cudaDeviceSynchronize());
    std::printf("%s: one launch (%zu rows, %zu groups)\n", name.c_str(), plan.score_rows.size(), plan.score_groups.size());
    return;
  }
  Instrument ins;
  step.run_scoring(iq.p, reps.p, bt, kvh, nullptr, &ins);
  const auto recs = ins.collect();
  const Sums s = sums(recs);
  const double ms = time_ms([&] { step.run_scoring(iq.p, reps.p, bt, kvh, nullptr, nullptr); });
  add(name, "sum_index_queries+score_pages", ms, s.bytes, s.flops,
      "rows=" + std::to_string(plan.score_rows.size()) + " groups=" + std::to_string(plan.score_groups.size()) +
          " kv_heads=" + std::to_string(kvh));
  // per launch (events between the two launches: no PDL overlap), median of 9, L2 flushed before each
  std::map<std::string, std::vector<double>> per;
  for (int rep = 0; rep < 9; ++rep) {
    HCHECK(cudaMemsetAsync(g_flush->p, rep, g_flush->n));
    Instrument i2;
    step.run_scoring(iq.p, reps.p, bt, kvh, nullptr, &i2);
    for (const auto& rc : i2.collect()) per[rc.kernel].push_back(rc.ms);
  }
  for (const auto& rc : recs)
    add(name + ":" + rc.kernel, rc.kernel, median(per[rc.kernel]), rc.bytes, rc.flops_useful,
        "one launch, instrumented (events around it)");
}

// keys16: the same normal scores as 16-bit keys (what the step's scoring kernel writes).
void bench_topk(World& w, int rows, bool keys16, int n = 65536, int k = kK) {
  const std::string name = "topk_n" + std::to_string(n) + "_k" + std::to_string(k) + "_r" + std::to_string(rows) +
                           (keys16 ? "_key16" : "");
  DevBuf<float> scores(size_t(rows) * n);
  DevBuf<std::uint16_t> keys(size_t(rows) * n);
  {  // normal fp32 scores
    std::vector<float> h(scores.n);
    std::vector<std::uint16_t> hk(scores.n);
    std::mt19937_64 rng(5 + rows);
    std::normal_distribution<float> d(0.f, 1.f);
    for (size_t i = 0; i < h.size(); ++i) hk[i] = score_key16(h[i] = d(rng));
    scores.upload(h);
    keys.upload(hk);
  }
  std::vector<TopkRow> hr(static_cast<size_t>(rows));
  for (int i = 0; i < rows; ++i) hr[size_t(i)] = TopkRow{i % kB, n, n};
  DevBuf<TopkRow> drows(hr);
  DevBuf<int> out(size_t(rows) * size_t(k));
  TopkArgs a;
  if (keys16)
    a.score_keys = keys.p;
  else
    a.scores = scores.p;
  a.score_stride = n;
  a.rows = drows.p;
  a.table = w.bt;
  a.out = out.p;
  a.out_stride = k;
  a.k = k;
  a.rows_host = &hr;
  Instrument ins;
  topk_select(a, nullptr, &ins);
  const Sums s = sums(ins.collect());
  const double ms = time_ms([&] { topk_select(a, nullptr, nullptr); });
  const TopkPlan plan = topk_plan(n, rows, keys16);
  std::printf("topk: cluster %d x %d keys, %d clusters resident\n", plan.cluster, plan.slice, plan.resident_clusters);
  {  // phase breakdown of thread 0 of the first 128 CTAs (one more launch, L2 flushed first)
    HCHECK(cudaMemset(g_flush->p, 1, g_flush->n));
    topk_select(a, nullptr, nullptr);
    const auto ph = topk_phase_cycles(plan.cluster * rows);
    std::printf("%s phases (SM cycles, thread 0): load+hist0 %.0f  merge0 %.0f  hist1 %.0f  merge1+ %.0f  flags %.0f  stage %.0f  out %.0f\n",
                name.c_str(), ph[0], ph[1], ph[2], ph[3], ph[4], ph[5], ph[6]);
    // each wave's CTAs (resident CTAs at once): earliest / latest start and end, us after the first start
    const int n_cta = plan.cluster * rows, res = std::max(1, plan.resident_clusters * plan.cluster);
    const auto tm = topk_cta_times_us(n_cta);
    const int nt = static_cast<int>(tm.size()) / 2;
    for (int w0 = 0, wave = 1; w0 < nt; w0 += res, ++wave) {
      double s0 = 1e30, s1 = 0, e0 = 1e30, e1 = 0;
      for (int b = w0; b < std::min(nt, w0 + res); ++b) {
        s0 = std::min(s0, tm[2 * size_t(b)]);
        s1 = std::max(s1, tm[2 * size_t(b)]);
        e0 = std::min(e0, tm[2 * size_t(b) + 1]);
        e1 = std::max(e1, tm[2 * size_t(b) + 1]);
      }
      std::printf("%s wave %d (CTAs %d-%d): start %.2f-%.2f us, end %.2f-%.2f us\n", name.c_str(), wave, w0,
                  std::min(nt, w0 + res) - 1, s0, s1, e0, e1);
    }
  }
  add(name, "topk_radix_select", ms, s.bytes, 0,
      "cluster of " + std::to_string(plan.cluster) + " CTAs of " + std::to_string(plan.slice) + " keys per row (" +
          std::to_string(plan.resident_clusters) + " clusters resident); fused translation to physical IDs");
}

// One launch of every kernel at a moderate shape, printing the expected bytes per launch, for the
// ncu DRAM byte cross-check (bench/ncu_check.sh). B = 4, history 131,072, P = 64 (g16) and decode.
void ncu_mode() {
  const int nb = 4, hist = 131072, P = 64;
  World w(nb, hist + P);
  auto report = [](const std::vector<LaunchRecord>& recs) {
    for (const auto& r : recs)
      std::printf("REC %s %s %.0f %.0f\n", component_name(r.component), r.kernel.c_str(), r.bytes, r.flops_useful);
  };
  {
    Instrument ins;
    rebuild_representatives(w.kv, w.reps->p, nullptr, &ins);
    report(ins.collect());
  }
  for (int p : {P, 1}) {
    StepBatch b{std::vector<int>(nb, hist), std::vector<int>(nb, p), 1, 4};
    const CisaPlan plan = plan_cisa_step(b, StepConfig{kW, kK, p == 1 ? 1 : 16});
    CisaStep step(plan, 1, 4, g_sms);
    Inputs in = make_inputs(plan.total_tokens, 4, 900 + p);
    Instrument ins;
    step.run(in.q->p, in.iq->p, in.o->p, w.kv, w.reps->p, w.bt, nullptr, &ins, w.rt);
    report(ins.collect());
    const CisaPlan dplan = plan_dense(b);
    CisaStep dstep(dplan, 1, 4, g_sms);
    Instrument i2;
    dstep.upload(nullptr);
    dstep.run_attention(in.q->p, in.o->p, w.kv, w.bt, nullptr, &i2);
    report(i2.collect());
  }
  HCHECK(cudaDeviceSynchronize());
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--ncu")) {
      HCHECK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
      ncu_mode();
      return 0;
    }
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--score-kv-once")) {  // one scoring launch at kv 1 and 4 (ncu)
      HCHECK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
      for (const auto& sh : score_shapes({1, 4})) bench_score_kv(sh, true);
      return 0;
    }
  std::string csv = "kernels_own.csv", cases = "all", sel = "/tmp/cisa_sel_g16.bin";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--csv")) csv = argv[i + 1];
    if (!std::strcmp(argv[i], "--cases")) cases = argv[i + 1];
    if (!std::strcmp(argv[i], "--sel-out")) sel = argv[i + 1];
    if (!std::strcmp(argv[i], "--max-rows")) g_max_rows = std::atoi(argv[i + 1]);
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  try {
    HCHECK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    g_flush = new DevBuf<unsigned char>(size_t(256) << 20);
    measure_card();
    if (cases == "score_prefill_kv") {  // only the KV-heads scoring cases: no shared world
      {  // the mixed read + write ceiling in the same conditions: a 256 MiB device-to-device copy
        DevBuf<unsigned char> src(size_t(256) << 20), dst(size_t(256) << 20);
        HCHECK(cudaMemset(src.p, 3, src.n));
        const double ms = time_ms([&] { HCHECK(cudaMemcpyAsync(dst.p, src.p, src.n, cudaMemcpyDeviceToDevice)); });
        add("copy_256MiB", "cudaMemcpyAsync_d2d", ms, 2.0 * double(src.n), 0, "bytes = read + written");
      }
      for (const auto& sh : score_shapes({1, 2, 4, 8})) bench_score_kv(sh, false);
      cases = ",none,";  // matches no case
    }
    World w(cases == ",none," ? 1 : kB, cases == ",none," ? 16 : kHist + 512);
    std::printf("world: %lld pages, %.2f GB K+V\n", w.tb.num_pages, w.tb.num_pages * 8192.0 / 1e9);
    if (want(cases, "gather256")) {  // the ceiling of random 256-byte reads (every page of the world once)
      DevBuf<unsigned> sink(1);
      const long long n = (long long)w.tb.ids.size();
      for (bool h : {false, true}) {
        const double ms = time_ms([&] {
          if (h)
            gather_kernel<true><<<g_sms * 8, 256>>>(reinterpret_cast<const uint4*>(w.reps->p), w.table->p, n, sink.p);
          else
            gather_kernel<false><<<g_sms * 8, 256>>>(reinterpret_cast<const uint4*>(w.reps->p), w.table->p, n, sink.p);
        });
        add(h ? "gather256_l2hint" : "gather256", "gather_kernel", ms, n * 256.0, 0,
            "random 256-B reads through the block table");
      }
    }
    if (want(cases, "dense_decode_inkling_b16")) bench_dense(w, "dense_decode_inkling_b16", 1, 4);
    if (want(cases, "dense_prefill_inkling_b16_p512")) bench_dense(w, "dense_prefill_inkling_b16_p512", 512, 4);
    if (want(cases, "dense_prefill_ultra_b16_p512")) bench_dense(w, "dense_prefill_ultra_b16_p512", 512, 32);
    for (int g : {4, 16, 32}) {
      const std::string n = "cisa_attn_prefill_inkling_b16_p512_g" + std::to_string(g);
      if (want(cases, n)) bench_cisa(w, n, 512, 4, g, "attention", g == 16 ? sel : "");
    }
    if (want(cases, "cisa_attn_prefill_ultra_b16_p512_g4")) bench_cisa(w, "cisa_attn_prefill_ultra_b16_p512_g4", 512, 32, 4, "attention");
    if (want(cases, "cisa_attn_decode_inkling_b16")) bench_cisa(w, "cisa_attn_decode_inkling_b16", 1, 4, 1, "attention");
    if (want(cases, "score_decode_inkling_b16")) bench_cisa(w, "score_decode_inkling_b16", 1, 4, 1, "scoring");
    if (want(cases, "score_prefill_inkling_b16_p512_g4")) bench_cisa(w, "score_prefill_inkling_b16_p512_g4", 512, 4, 4, "scoring");
    for (int kvh : {1, 2, 4, 8})
      if (want(cases, "score_prefill_kv" + std::to_string(kvh) + "_b" + std::to_string(kB / kvh)))
        bench_score_kv(ScoreShape{kvh, kB / kvh, kHist, 512, 4, kW, kK}, false);
    for (bool k16 : {false, true})
      for (int rows : {64, 256})
        if (want(cases, "topk_n65536_k4096_r" + std::to_string(rows) + (k16 ? "_key16" : ""))) bench_topk(w, rows, k16);
    // CISA_TOPK_SHAPES="N:K:ROWS ...": 16-bit-key top-k at other keys per row and budgets (the phase
    // clocks at two K of one N: which pass grows with K / N_e)
    if (const char* e = std::getenv("CISA_TOPK_SHAPES")) {
      std::istringstream in(e);
      std::string tok;
      while (in >> tok) {
        int n = 0, k = 0, rows = 0;
        if (std::sscanf(tok.c_str(), "%d:%d:%d", &n, &k, &rows) != 3 || n <= k || k < 1 || rows < 1 ||
            n > kHist / 16 || rows > 4096)
          throw std::runtime_error("CISA_TOPK_SHAPES: bad shape '" + tok + "' (N:K:ROWS, K < N <= " +
                                   std::to_string(kHist / 16) + ", ROWS <= 4096)");
        bench_topk(w, rows, true, n, k);
      }
    }
    if (want(cases, "cisa_step_decode_inkling_b16")) bench_cisa(w, "cisa_step_decode_inkling_b16", 1, 4, 1, "step");
    if (want(cases, "cisa_step_prefill_inkling_b16_p512_g32")) bench_cisa(w, "cisa_step_prefill_inkling_b16_p512_g32", 512, 4, 32, "step");
  } catch (const std::exception& e) {
    std::printf("ERROR: %s\n", e.what());
  }
  std::ofstream f(csv);
  f << "case,kernel,ms,bytes,flops,bound_ms,note,read_bw_Bps,mma_flops_ps\n";
  for (const auto& r : g_rows)
    f << r.name << "," << r.kernel << "," << r.ms << "," << r.bytes << "," << r.flops << "," << r.bound_ms << ",\""
      << r.note << "\"," << g_bw * 1e3 << "," << g_mma * 1e3 << "\n";
  std::printf("wrote %s (%zu rows)\n", csv.c_str(), g_rows.size());
  return 0;
}
