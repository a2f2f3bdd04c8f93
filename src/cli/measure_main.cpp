// cisa-measure: the measurement path of `cisa-sim --measure` for GPU machines whose image lacks
// the compiled Boost.Program_options library (only `cisa-sim` needs it). Deliberately minimal:
//   cisa-measure [--preset NAME] [--calibrate FILE.yaml] [--scenario FILE] [--out FILE.h5] [--set key=value]...
#include <iostream>
#include <string>
#include <vector>

#include "cisa/errors.hpp"
#include "cisa/evaluate.hpp"
#include "cisa/measure.hpp"
#include "cisa/presets.hpp"
#include "cisa/write_hdf5.hpp"
#include "cisa/write_text.hpp"
#include "gpu/calibration.hpp"

int main(int argc, char** argv) {
  std::string scenario, out, calibrate, preset = "h200_sxm";
  std::vector<std::string> sets;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw cisa::InputError({"command line", 0, a}, "needs a value");
        return argv[++i];
      };
      if (a == "--scenario") scenario = next();
      else if (a == "--out") out = next();
      else if (a == "--set") sets.push_back(next());
      else if (a == "--calibrate") calibrate = next();
      else if (a == "--preset") preset = next();
      else throw cisa::InputError({"command line", 0, a}, "unknown option (cisa-measure takes --scenario, --out, --set, --calibrate, --preset)");
    }
    if (!calibrate.empty()) {
      (void)cisa::gpu_preset(preset);  // a known preset name (InputError otherwise)
      cisa::write_file_atomic(calibrate, cisa::gpu::calibration_yaml(preset));
      std::cerr << "wrote " << calibrate << "\n";
      if (scenario.empty() && out.empty()) return 0;
    }
    const cisa::Scenario sc = cisa::load_scenario(scenario, sets);
    cisa::Table t = cisa::evaluate_scenario(sc);
    cisa::Attributes attrs = cisa::provenance(sc, "cisa-measure " + scenario);
    cisa::measure_points(sc, t, attrs, true);
    if (out.empty()) out = "out/" + sc.name + ".h5";
    cisa::write_hdf5(out, {{"points", &t}}, attrs);
    cisa::write_error_report(std::cout, t);
    std::cout << "wrote " << out << "\n";
  } catch (const cisa::InputError& e) {
    std::cerr << "cisa-measure: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cisa-measure: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
