// measure_points for builds without the CUDA kernels (no nvcc at configure time).
#include <iostream>

#include "cisa/errors.hpp"
#include "cisa/measure.hpp"

namespace cisa {

void measure_points(const Scenario&, Table&, Attributes& attrs, bool required) {
  const std::string why = "this cisa-sim was built without the CUDA kernels (no nvcc when CMake configured it)";
  if (required) throw InputError({"command line", 0, "--measure"}, why + "; rebuild on a machine with the CUDA toolkit, or use --measure auto");
  attrs["measurement"] = "skipped: " + why;
  std::cerr << "cisa-sim: --measure auto: not measuring: " << why << "\n";
}

}  // namespace cisa
