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
        "preset", po::value(&base), "the GPU preset this card is (its `card:` names the file; default h200_sxm)");
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    if (vm.count("help")) {
      std::cout << "Measure this GPU (read, write and copy bandwidth, BF16 GEMM, launch gap, kernel floor, host\n"
                   "copy) and, with the CUDA kernels built, this project's kernel classes, and write a\n"
                   "`calibration:` mapping. The GPU preset reads its card block with `card: path/to/file.yaml`;\n"
                   "the cisa_kernels profile its implementation block (models/impl/cisa_kernels.yaml).\n\n"
                << opts;
      return kExitOk;
    }
    po::notify(vm);
    (void)gpu_preset(base);  // a known preset name (InputError otherwise)
#ifndef CISA_HAVE_GPU
    throw InputError({"command line", 0, "calibrate"},
                     "this cisa-sim was built without CUDA (no nvcc when CMake configured it); rebuild with the CUDA toolkit");
#else
    const std::string yaml = gpu::calibration_yaml(base);
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
