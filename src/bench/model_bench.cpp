// Benchmark (not a test): evaluate N analytical points on one core, write them to HDF5, and
// report points per second. Target from issue 2: >= 1e6 points/s including the HDF5 write.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cisa/evaluate.hpp"
#include "cisa/presets.hpp"
#include "model/pricing.hpp"
#include "cisa/results.hpp"
#include "cisa/write_hdf5.hpp"

int main(int argc, char** argv) {
  using clock = std::chrono::steady_clock;
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const std::string out = argc > 2 ? argv[2] : (std::filesystem::temp_directory_path() / "cisa_model_bench.h5").string();
  const cisa::Hardware hw = cisa::gpu_preset("h200_sxm");
  // The default implementations: the best dense baseline known on the H200 and this project's kernels.
  cisa::Pricer pricer(cisa::shipped_cards(), cisa::shipped_impls(), cisa::Basis::calibrated);
  // A mixed sweep: terminal prefill and decode over context, budget, G, batch and geometry.
  const std::int64_t contexts[] = {131072, 262144, 524288, 1048576};
  const std::int64_t budgets[] = {1024, 2048, 4096, 8192};
  const int gs[] = {1, 2, 4, 8, 16, 32, 64, 128};
  const int rs[] = {4, 8, 16, 32};
  const auto t0 = clock::now();
  cisa::PointsTableBuilder b;
  b.reserve(n);
  double checksum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    cisa::Point p;
    p.model = "bench";
    p.hardware = hw.name;
    p.geo.q_heads = rs[i % 4];
    p.geo.kv_heads = 1;
    p.work.context_tokens = contexts[(i / 4) % 4] - static_cast<std::int64_t>(i % 97);
    p.cisa.budget_chunks = budgets[(i / 16) % 4];
    p.cisa.qshare_g = gs[(i / 64) % 8];
    p.work.batch = 1 + static_cast<int>(i % 32);
    p.work.phase = (i / 512) % 2 ? cisa::Phase::decode : cisa::Phase::terminal_prefill;
    if (p.work.phase == cisa::Phase::decode) p.cisa.qshare_g = 1;
    const cisa::PointPricing& pricing = pricer.for_point(p);
    const cisa::Prediction pr = cisa::predict(p, pricing);
    checksum += pr.cisa.busy();
    b.add(static_cast<std::int64_t>(i), p, pr, pricing.cisa[1].rates);
  }
  const auto t1 = clock::now();
  cisa::write_hdf5(out, {{"points", &b.table()}}, {{"tool_version", "bench"}});
  const auto t2 = clock::now();
  const double eval_s = std::chrono::duration<double>(t1 - t0).count();
  const double total_s = std::chrono::duration<double>(t2 - t0).count();
  std::printf("model_bench: %zu points, %zu columns\n", n, b.table().columns().size());
  std::printf("  evaluate + table: %.3f s  (%.3g points/s)\n", eval_s, static_cast<double>(n) / eval_s);
  std::printf("  HDF5 write:       %.3f s  (%s, %.1f MB)\n", total_s - eval_s, out.c_str(),
              static_cast<double>(std::filesystem::file_size(out)) / 1e6);
  std::printf("  total:            %.3f s  (%.3g points/s; target >= 1e6)  [checksum %.6g]\n", total_s,
              static_cast<double>(n) / total_s, checksum);
  std::filesystem::remove(out);
  return 0;
}
