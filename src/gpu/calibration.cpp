#include "gpu/calibration.hpp"

#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "cisa/errors.hpp"
#include "cisa/evaluate.hpp"
#include "cisa/version.hpp"
#include "gpu/probe.hpp"
#ifdef CISA_HAVE_MEASURE
#include "gpu/kernel_rates.hpp"
#endif

namespace cisa::gpu {

std::string calibration_yaml(const Hardware& hw, const std::string& base) {
  const DeviceInfo dev = query_device();
  if (!dev.available) throw InputError({"command line", 0, "calibrate"}, dev.reason + " (calibrate needs a GPU)");
  std::cerr << "calibrating " << dev.name << " (" << dev.sms << " SMs)\n";
  const std::string date = utc_now_iso8601();
  const std::string tag = "MEAS: cisa-sim calibrate " + tool_version() + " (git " + git_hash() + ") on " + dev.name + ", " + date;
  std::cerr << "  read bandwidth ... " << std::flush;
  const auto rd = probe_read_bandwidth_tbs();
  std::cerr << fmt::format("{:.3f} TB/s\n  copy bandwidth ... ", rd.value) << std::flush;
  const auto cp = probe_copy_bandwidth_tbs();
  std::cerr << fmt::format("{:.3f} TB/s\n  BF16 GEMM ... ", cp.value) << std::flush;
  const auto mm = probe_gemm_bf16_tflops();
  std::cerr << fmt::format("{:.1f} TF/s\n  launch overhead ... ", mm.value) << std::flush;
  const auto lo = probe_launch_overhead_us();
  std::cerr << fmt::format("{:.2f} us\n", lo.value);
#ifdef CISA_HAVE_MEASURE
  std::cerr << "  kernel classes (attention, top-k) ... " << std::flush;
  const KernelRates kr = measure_kernel_rates(dev.sms);
  std::cerr << fmt::format("{:.1f} TF/s, {:.2f} key-passes/ns/SM\n", kr.attention_tflops, kr.topk_elem_passes_per_ns_per_sm);
#endif
  auto fig = [&](const char* key, const ProbeResult& r) {
    return fmt::format("  {}: {{value: {:.4g}, source: \"{}; {}; spread {:.1f}%\"}}\n", key, r.value, tag, r.method, 100 * r.spread);
  };
  auto carried = [&](const char* key, const Figure& f) {
    return fmt::format("  {}: {{value: {:.4g}, source: \"{} (carried over from preset {}; not measured by calibrate)\"}}\n", key,
                       f.value, f.source, base);
  };
  std::ostringstream y;
  y << "# Written by cisa-sim calibrate on " << date << " for " << dev.name << ".\n"
    << "# MEAS values were measured by this run; the others are carried over and say so.\n"
    << "calibration:\n"
    << "  basis: \"measured on " << dev.name << " by cisa-sim calibrate " << tool_version() << ", " << date << "\"\n"
    << fig("read_bw_tbs", rd) << fig("copy_bw_tbs", cp) << fig("gemm_bf16_tflops", mm)
#ifdef CISA_HAVE_MEASURE
    << fmt::format("  attention_bf16_tflops: {{value: {:.4g}, source: \"{}; {}\"}}\n", kr.attention_tflops, tag, kr.attention_method)
    << carried("peer_attention_bf16_tflops", hw.cal.peer_attention_bf16_tflops) << fig("launch_overhead_us", lo)
    << fmt::format("  topk_elem_passes_per_ns_per_sm: {{value: {:.4g}, source: \"{}; {}\"}}\n", kr.topk_elem_passes_per_ns_per_sm, tag,
                   kr.topk_method)
    << fmt::format("  scoring_bw_tbs: {{value: {:.4g}, source: \"{}; {}\"}}\n", kr.scoring_bw_tbs, tag, kr.scoring_method)
#else
    << carried("attention_bf16_tflops", hw.cal.attention_bf16_tflops) << fig("launch_overhead_us", lo)
    << carried("topk_elem_passes_per_ns_per_sm", hw.cal.topk_elem_passes_per_ns_per_sm)
#endif
    << carried("l2_reuse", hw.cal.l2_reuse);
  return y.str();
}

}  // namespace cisa::gpu
