// route_bench: times the dense attention-mass pass of the routing diagnostics (the q.k work,
// Eigen GEMMs over blocks of keys) at the size and reports the fraction of the CPU's
// fp32 FMA peak it reaches. Not a test.
//   route_bench [--tokens 1048576] [--positions 256] [--kv-heads 8] [--q-heads 32]
//               [--head-dim 128] [--key-block 1024] [--threads 0] [--diagnostics 0|1]
//               [--budget 4096] [--G 4] [--window 128]
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <algorithm>

#include "route/route.hpp"

using namespace cisa::route;

namespace {
double cpu_seconds() {  // CPU time of the whole process (all threads)
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
}  // namespace

double peak_cores() { return static_cast<double>(std::max(1u, std::thread::hardware_concurrency())); }

int main(int argc, char** argv) {
  SyntheticConfig sc;
  sc.tokens = 1 << 20;
  sc.positions = 256;
  sc.kv_heads = 8;
  sc.q_heads = 32;
  sc.head_dim = 128;
  sc.with_projection = false;
  sc.needle_min_age = 256;
  ComputeOptions co;
  bool diagnostics = true;
  RouteConfig rc;
  rc.budgets = {4096};
  rc.qshare_gs = {4};
  rc.windows = {128};
  rc.curve_budgets = {256, 1024, 2048, 8192};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (k == "--tokens") sc.tokens = v;
    else if (k == "--positions") sc.positions = v;
    else if (k == "--kv-heads") sc.kv_heads = static_cast<int>(v);
    else if (k == "--q-heads") sc.q_heads = static_cast<int>(v);
    else if (k == "--head-dim") sc.head_dim = static_cast<int>(v);
    else if (k == "--key-block") co.key_block = v;
    else if (k == "--threads") co.threads = static_cast<int>(v);
    else if (k == "--diagnostics") diagnostics = v != 0;
    else if (k == "--budget") rc.budgets = {v};
    else if (k == "--G") rc.qshare_gs = {v};
    else if (k == "--window") rc.windows = {v};
    else {
      std::fprintf(stderr, "route_bench: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  sc.threads = co.threads;
  rc.threads = co.threads;
  rc.key_block = co.key_block;
  using clock = std::chrono::steady_clock;
  auto secs = [](clock::time_point t0) {
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  try {
    auto t0 = clock::now();
    const LayerActivations a = make_synthetic(sc);
    const double t_gen = secs(t0);
    std::printf("route_bench: %lld-token history, 1 layer, %d KV groups x %d query heads, d=%d, "
                "%lld analysed positions, key block %lld, %d threads\n",
                static_cast<long long>(a.tokens), a.kv_heads, a.heads_per_group(), a.head_dim,
                static_cast<long long>(a.num_positions()), static_cast<long long>(co.key_block),
                resolve_threads(co.threads));
    std::printf("  synthetic activations generated in %.2f s (not timed below)\n", t_gen);

    t0 = clock::now();
    const double c0 = cpu_seconds();
    const PageMass m = dense_page_mass(a, sc.chunk_tokens, co);
    const double t_mass = secs(t0);
    const double cpu_mass = cpu_seconds() - c0;
    const int nthreads = resolve_threads(co.threads);
    double qk = 0;  // causal q.k multiply-adds actually needed
    for (auto t : a.positions) qk += static_cast<double>(t + 1);
    const double flop = 2.0 * a.head_dim * a.q_heads * qk;
    std::string how;
    const double peak = cpu_fma_peak_gflops(&how);
    const double rate = flop / t_mass / 1e9;
    std::printf("  dense attention mass per page (q.k GEMMs + softmax + page sums): %.2f s wall, "
                "%.2f s CPU over %d threads\n", t_mass, cpu_mass, nthreads);
    std::printf("  q.k work: %.3f TFLOP (2 x d x q_heads x sum over positions of history) -> %.1f GFLOP/s\n",
                flop / 1e12, rate);
    std::printf("  fp32 FMA peak estimate: %.1f GFLOP/s = %s\n", peak, how.c_str());
    // Per-core view: FLOP per CPU-second against one core's peak. On a shared machine the wall
    // time includes waiting for the CPU; CPU time / threads is the wall time it would take
    // with the cores to itself.
    const double cores = std::max(1.0, peak_cores());
    const double per_core = flop / cpu_mass / 1e9;
    std::printf("  fraction of FMA peak: %.1f %% (wall clock); %.1f %% per busy core (%.1f GFLOP per CPU-second)\n",
                100.0 * rate / peak, 100.0 * per_core / (peak / cores), per_core);
    const double idle_wall = cpu_mass / std::min<double>(nthreads, cores);
    std::printf("  issue target < 60 s on the 2-core CI machine: wall %.1f s -> %s; CPU-time bound "
                "(CPU s / cores, an unshared machine) %.1f s -> %s\n",
                t_mass, t_mass < 60 ? "met" : "NOT met", idle_wall, idle_wall < 60 ? "met" : "NOT met");

    if (diagnostics) {
      t0 = clock::now();
      const double c1 = cpu_seconds();
      const LayerReport rep = analyse_layer(a, m, rc);
      const double t_diag = secs(t0);
      std::printf("  initialisation %.2f s, selection + diagnostics %.2f s (total after page mass %.2f s wall, "
                  "%.2f s CPU)\n",
                  rep.seconds_init, rep.seconds_select, t_diag, cpu_seconds() - c1);
      for (const auto& row : rep.rows)
        if (row.q_head == -1)
          std::printf("  K=%lld G=%lld W=%lld: recall %.4f (min %.4f), +window %+.4f, +chunks %+.4f, "
                      "qshare overlap %.3f\n",
                      static_cast<long long>(row.budget), static_cast<long long>(row.qshare_g),
                      static_cast<long long>(row.window), row.recall_mean, row.recall_min,
                      row.recall_mean - row.recall_no_window,
                      row.recall_more_chunks - row.recall_no_window, row.qshare_overlap);
      std::printf("  total (page mass + diagnostics): %.2f s\n", t_mass + t_diag);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "route_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
