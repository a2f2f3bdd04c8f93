// cisa-sim calibrate: measure the card and write a calibration block the GPU preset can include.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <sstream>

#include "cisa/errors.hpp"
#include "cisa/evaluate.hpp"
#include "cisa/presets.hpp"
#include "cisa/version.hpp"
#include "cisa/write_text.hpp"
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#ifdef CISA_HAVE_GPU
#include "gpu/probe.hpp"
#endif

namespace po = boost::program_options;

namespace cisa::cli {

int cmd_calibrate(int argc, char** argv) {
  return guarded("calibrate", [&]() {
    std::string out, base = "h200_sxm";
    po::options_description opts("cisa-sim calibrate options");
    opts.add_options()("help,h", "show this help")(
        "out,o", po::value(&out), "write the calibration YAML here (default: stdout)")(
        "preset", po::value(&base), "GPU preset whose unmeasured values are carried over (default h200_sxm)");
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    if (vm.count("help")) {
      std::cout << "Measure HBM read and copy bandwidth, BF16 GEMM rate and launch overhead on this GPU and\n"
                   "write a `calibration:` mapping. Use it from a GPU preset or scenario with\n"
                   "  calibration: path/to/file.yaml\n"
                   "Values this version cannot measure are carried over from --preset with their source.\n\n"
                << opts;
      return kExitOk;
    }
    po::notify(vm);
    const Hardware hw = gpu_preset(base);
#ifndef CISA_HAVE_GPU
    (void)hw;
    throw InputError({"command line", 0, "calibrate"},
                     "this cisa-sim was built without CUDA (no nvcc when CMake configured it); rebuild with the CUDA toolkit");
#else
    const gpu::DeviceInfo dev = gpu::query_device();
    if (!dev.available) throw InputError({"command line", 0, "calibrate"}, dev.reason + " (calibrate needs a GPU)");
    std::cerr << "calibrating " << dev.name << " (" << dev.sms << " SMs)\n";
    const std::string date = utc_now_iso8601();
    const std::string tag = "MEAS: cisa-sim calibrate " + tool_version() + " (git " + git_hash() + ") on " + dev.name + ", " + date;
    std::cerr << "  read bandwidth ... " << std::flush;
    const auto rd = gpu::probe_read_bandwidth_tbs();
    std::cerr << fmt::format("{:.3f} TB/s\n  copy bandwidth ... ", rd.value) << std::flush;
    const auto cp = gpu::probe_copy_bandwidth_tbs();
    std::cerr << fmt::format("{:.3f} TB/s\n  BF16 GEMM ... ", cp.value) << std::flush;
    const auto mm = gpu::probe_gemm_bf16_tflops();
    std::cerr << fmt::format("{:.1f} TF/s\n  launch overhead ... ", mm.value) << std::flush;
    const auto lo = gpu::probe_launch_overhead_us();
    std::cerr << fmt::format("{:.2f} us\n", lo.value);
    auto fig = [&](const char* key, double v, const gpu::ProbeResult& r) {
      return fmt::format("  {}: {{value: {:.4g}, source: \"{}; {}; spread {:.1f}%\"}}\n", key, v, tag, r.method, 100 * r.spread);
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
      << fig("read_bw_tbs", rd.value, rd) << fig("copy_bw_tbs", cp.value, cp) << fig("gemm_bf16_tflops", mm.value, mm)
      << carried("attention_bf16_tflops", hw.cal.attention_bf16_tflops) << fig("launch_overhead_us", lo.value, lo)
      << carried("topk_elem_passes_per_ns_per_sm", hw.cal.topk_elem_passes_per_ns_per_sm)
      << carried("l2_reuse", hw.cal.l2_reuse);
    if (out.empty())
      std::cout << y.str();
    else {
      write_file_atomic(out, y.str());
      std::cerr << "wrote " << out << "\n";
    }
    return kExitOk;
#endif
  });
}

}  // namespace cisa::cli
