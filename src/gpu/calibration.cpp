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
  if (!dev.available)
    throw InputError({"command line", 0, "calibrate"}, dev.reason + " (calibrate needs a GPU)");
  std::cerr << "calibrating " << dev.name << " (" << dev.sms << " SMs)\n";
  const std::string date = utc_now_iso8601();
  const std::string tag = "MEAS: cisa-sim calibrate " + tool_version() + " (git " + git_hash() +
                          ") on " + dev.name + ", " + date;
  std::cerr << "  read bandwidth ... " << std::flush;
  const auto rd = probe_read_bandwidth_tbs();
  std::cerr << fmt::format("{:.3f} TB/s\n  write bandwidth ... ", rd.value) << std::flush;
  const auto wr = probe_write_bandwidth_tbs();
  std::cerr << fmt::format("{:.3f} TB/s\n  copy bandwidth ... ", wr.value) << std::flush;
  const auto cp = probe_copy_bandwidth_tbs();
  std::cerr << fmt::format("{:.3f} TB/s\n  BF16 GEMM ... ", cp.value) << std::flush;
  const auto mm = probe_gemm_bf16_tflops();
  std::cerr << fmt::format("{:.1f} TF/s\n  launch overhead ... ", mm.value) << std::flush;
  const auto lo = probe_launch_overhead_us();
  std::cerr << fmt::format("{:.2f} us\n  isolated kernel floor ... ", lo.value) << std::flush;
  const auto kf = probe_kernel_floor_us();
  std::cerr << fmt::format("{:.2f} us\n  host-to-device copy ... ", kf.value) << std::flush;
  const auto hl = probe_h2d_latency_us();
  const auto hb = probe_h2d_bandwidth_gbs();
  std::cerr << fmt::format("{:.2f} us + {:.1f} GB/s\n", hl.value, hb.value);
#ifdef CISA_HAVE_MEASURE
  std::cerr << "  kernel classes (attention, floors, top-k, scoring) ... " << std::flush;
  const KernelRates kr = measure_kernel_rates(dev.sms, hw);
  std::cerr << fmt::format(
      "page visit ns*SM (16/32/64/128 rows): {:.0f} {:.0f} {:.0f} {:.0f}; setup floor {:.1f} us\n",
      kr.attention_page_ns[0], kr.attention_page_ns[1], kr.attention_page_ns[2],
      kr.attention_page_ns[3], kr.setup_floor_us);
  std::cerr << fmt::format(
      "  {:.1f} TF/s; floors {:.1f}/{:.1f}/{:.1f} us; top-k {:.2f} (L2 {:.2f}) key-passes/ns/SM, "
      "{:.3f} out IDs/ns/SM; scoring {:.2f}/{:.2f} TB/s\n",
      kr.attention_tflops, kr.attention_floor_us, kr.scoring_floor_us, kr.topk_floor_us,
      kr.topk_elem_passes_per_ns_per_sm, kr.topk_l2_elem_passes_per_ns_per_sm,
      kr.topk_out_ids_per_ns_per_sm, kr.scoring_read_bw_tbs, kr.scoring_write_bw_tbs);
#endif
  auto fig = [&](const char* key, const ProbeResult& r) {
    return fmt::format("  {}: {{value: {:.4g}, source: \"{}; {}; spread {:.1f}%\"}}\n", key,
                       r.value, tag, r.method, 100 * r.spread);
  };
  auto meas = [&](const char* key, double v, const std::string& method) {
    return v > 0 ? fmt::format("  {}: {{value: {:.4g}, source: \"{}; {}\"}}\n", key, v, tag, method)
                 : fmt::format("  # {}: not written: the measurement was not physical ({})\n", key,
                               method);
  };
  auto carried = [&](const char* key, const Figure& f) {
    return fmt::format(
        "  {}: {{value: {:.4g}, source: \"{} (carried over from preset {}; not measured by "
        "calibrate)\"}}\n",
        key, f.value, f.source, base);
  };
  std::ostringstream y;
  y << "# Written by cisa-sim calibrate on " << date << " for " << dev.name << ".\n"
    << "# MEAS values were measured by this run; the others are carried over and say so.\n"
    << "calibration:\n"
    << "  basis: \"measured on " << dev.name << " by cisa-sim calibrate " << tool_version() << ", "
    << date << "\"\n"
    << fig("read_bw_tbs", rd) << fig("write_bw_tbs", wr) << fig("copy_bw_tbs", cp)
    << fig("gemm_bf16_tflops", mm) << fig("launch_overhead_us", lo) << fig("kernel_floor_us", kf)
#ifdef CISA_HAVE_MEASURE
    << (kr.h2d_step_bw_gbs > 0
            ? meas("h2d_bw_gbs", kr.h2d_step_bw_gbs,
                   kr.floor_method +
                       " and 16 x (128K + 512), G=1 (8,192 selections): descriptor bytes / "
                       "setup time difference; isolated 256 MiB pinned copy: " +
                       fmt::format("{:.1f} GB/s", hb.value))
            : fig("h2d_bw_gbs", hb))
    // In the step the descriptor copy queues behind kernels on the same stream (copy-engine
    // hand-off); the idle-GPU probe (hl) is recorded in the method for comparison.
    << meas("h2d_latency_us", kr.setup_floor_us,
            kr.floor_method +
                ", setup component (the descriptor copy, behind the index projection; latency of "
                "the "
                "latency + bytes / bandwidth solve); idle-GPU 256-byte copy probe: " +
                fmt::format("{:.2f} us", hl.value))
    << meas("attention_page_ns_m16", kr.attention_page_ns[0], kr.attention_page_method)
    << meas("attention_page_ns_m32", kr.attention_page_ns[1], kr.attention_page_method)
    << meas("attention_page_ns_m64", kr.attention_page_ns[2], kr.attention_page_method)
    << meas("attention_page_ns_m128", kr.attention_page_ns[3], kr.attention_page_method)
    << meas("attention_bf16_tflops", kr.attention_tflops, kr.attention_method)
    << carried("peer_attention_bf16_tflops", hw.cal.peer_attention_bf16_tflops)
    << meas("topk_elem_passes_per_ns_per_sm", kr.topk_elem_passes_per_ns_per_sm, kr.topk_method)
    << meas("topk_l2_elem_passes_per_ns_per_sm", kr.topk_l2_elem_passes_per_ns_per_sm,
            kr.topk_l2_method)
    << meas("topk_out_ids_per_ns_per_sm", kr.topk_out_ids_per_ns_per_sm, kr.topk_method)
    << meas("scoring_read_bw_tbs", kr.scoring_read_bw_tbs, kr.scoring_method)
    << meas("scoring_write_bw_tbs", kr.scoring_write_bw_tbs, kr.scoring_method)
    << meas("attention_floor_us", kr.attention_floor_us, kr.floor_method + ", per attention launch")
    << meas("scoring_floor_us", kr.scoring_floor_us,
            kr.floor_method + ", scoring component (2 launches) less its CTA's 2 load steps")
    << meas("scoring_tile_us", kr.scoring_tile_us,
            "cisa_kernels step of one selection with N_e = 257 (a CTA walks 4 tiles of 64 "
            "representatives) vs N_e = 112 (2 tiles): time difference / 2, median of 31")
    << meas("topk_floor_us", kr.topk_floor_us, kr.floor_method)
#else
    << fig("h2d_bw_gbs", hb) << fig("h2d_latency_us", hl)
    << carried("attention_bf16_tflops", hw.cal.attention_bf16_tflops)
    << carried("peer_attention_bf16_tflops", hw.cal.peer_attention_bf16_tflops)
    << carried("topk_elem_passes_per_ns_per_sm", hw.cal.topk_elem_passes_per_ns_per_sm)
#endif
    << carried("l2_reuse", hw.cal.l2_reuse);
  return y.str();
}

}  // namespace cisa::gpu
