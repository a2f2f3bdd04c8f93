// cisa-sim: predict (and, with the kernels, measure) dense vs CISA attention cost.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "cisa/version.hpp"
#include "cli/commands.hpp"

namespace {
void usage() {
  std::cout << "cisa-sim " << cisa::tool_version() << " - Chunk-Indexed Sparse Attention traffic model\n\n"
            << "usage:\n"
            << "  cisa-sim [run] [--scenario NAME|FILE] [--out FILE.h5] [--no-hdf5] [--set key=value]...\n"
            << "               [--format table|csv|json|markdown|none] [--columns a,b,c] [--wide] [--max-rows N]\n"
            << "               [--shard i/N] [--measure on|auto|off] [--measurements OLD.h5]\n"
            << "      predict bytes and time per component, dense vs CISA, for every point of a scenario\n"
            << "      (no --scenario: the shipped ultra_tp2_1m; default --out out/<scenario>.h5);\n"
            << "      every option explained: cisa-sim run --help\n"
            << "  cisa-sim scenarios [--show NAME]   list the shipped scenarios (run and plan) with descriptions\n"
            << "  cisa-sim ceilings --context L --budget K[,K...] --G G[,G...] [--chunk 16] [--window 128] [--format ...]\n"
            << "      the paper's analytical ceiling ratios\n"
            << "  cisa-sim presets [--show NAME]     list model and GPU presets\n"
            << "  cisa-sim profiles [--show NAME] [--gpu GPU]  implementation profiles (cuDNN, FA2/3/4, Flex, ours)\n"
            << "  cisa-sim calibrate [--out FILE.yaml]      measure this GPU's bandwidth, GEMM rate, launch overhead\n"
            << "  cisa-sim merge A.h5 B.h5 ... -o ALL.h5     join --shard i/N results of one scenario\n"
            << "  cisa-sim designs [--scenario designs_1m]   CISA vs Quest, DSA, MSA, NSA, block top-k (bytes, time)\n"
#ifdef CISA_HAVE_ROUTE
            << "  cisa-sim route --activations FILE.h5 ...   routing diagnostics on attention activations\n"
#endif
#ifdef CISA_HAVE_PLAN
            << "  cisa-sim plan --scenario deploy.yaml       memory, concurrency, TTFT/TPOT and throughput per GPU\n"
#endif
#ifdef CISA_HAVE_REPORT
            << "  cisa-sim report FILE.h5 [--out DIR]        render figures and tables for a result file\n"
#endif
            << "  cisa-sim --version\n\n"
            << "Each sub-command has --help. Exit codes: 0 ok, 2 bad input, 1 internal error.\n";
}
}  // namespace

// `--scenario X` naming a design comparison (a shipped designs_* name, or a file with a top-level
// `designs:` key) runs `cisa-sim designs`, so `cisa-sim --scenario designs_1m` works as users expect.
bool names_design_scenario(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string a = argv[i];
    if (a != "--scenario" && a != "-s") continue;
    std::string stem = argv[i + 1];
    if (stem.size() > 5 && stem.substr(stem.size() - 5) == ".yaml") stem.resize(stem.size() - 5);
    const auto slash = stem.find_last_of('/');
    const std::string base = slash == std::string::npos ? stem : stem.substr(slash + 1);
    // Only a regular file is opened here (never /dev/zero or a FIFO); the run's own loader
    // checks everything else about it.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(argv[i + 1], ec)) return base.rfind("designs_", 0) == 0;
    std::ifstream in(argv[i + 1]);
    std::string line;
    for (int n = 0; n < 10000 && std::getline(in, line); ++n)
      if (line.rfind("designs:", 0) == 0) return true;
    return false;
  }
  return false;
}

int main(int argc, char** argv) {
  using namespace cisa::cli;
  if (argc >= 2 && argv[1][0] == '-' && names_design_scenario(argc, argv)) return cmd_designs(argc, argv);
  if (argc >= 2) {
    const std::string sub = argv[1];
    if (sub == "--version" || sub == "version") {
      std::cout << "cisa-sim " << cisa::tool_version() << " (git " << cisa::git_hash() << ")\n";
      return 0;
    }
    if (sub == "--help" || sub == "-h" || sub == "help") {
      usage();
      return 0;
    }
    if (sub == "run") return cmd_run(argc - 1, argv + 1);
    if (sub == "ceilings") return cmd_ceilings(argc - 1, argv + 1);
    if (sub == "presets") return cmd_presets(argc - 1, argv + 1);
    if (sub == "profiles") return cmd_profiles(argc - 1, argv + 1);
    if (sub == "scenarios") return cmd_scenarios(argc - 1, argv + 1);
    if (sub == "merge") return cmd_merge(argc - 1, argv + 1);
    if (sub == "calibrate") return cmd_calibrate(argc - 1, argv + 1);
    if (sub == "designs") return cmd_designs(argc - 1, argv + 1);
#ifdef CISA_HAVE_ROUTE
    if (sub == "route") return cmd_route(argc - 1, argv + 1);
#endif
#ifdef CISA_HAVE_REPORT
    if (sub == "report") return cmd_report(argc - 1, argv + 1);
#endif
#ifdef CISA_HAVE_PLAN
    if (sub == "plan") return cmd_plan(argc - 1, argv + 1);
#endif
    if (sub[0] != '-') {
      std::cerr << "cisa-sim: error: unknown sub-command '" << sub << "' (see cisa-sim --help)\n";
      return 2;
    }
  }
  return cmd_run(argc, argv);
}
