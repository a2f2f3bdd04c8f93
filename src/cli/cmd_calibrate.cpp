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
#include "gpu/calibration.hpp"
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
    const std::string yaml = gpu::calibration_yaml(hw, base);
    if (out.empty())
      std::cout << yaml;
    else {
      write_file_atomic(out, yaml);
      std::cerr << "wrote " << out << "\n";
    }
    return kExitOk;
#endif
  });
}

}  // namespace cisa::cli
