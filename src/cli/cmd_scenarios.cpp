// cisa-sim scenarios [--show NAME]: the scenarios shipped inside the binary, with descriptions.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "cisa/embedded.hpp"
#include "cisa/scenario_source.hpp"
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"

namespace po = boost::program_options;

namespace cisa::cli {

namespace {

// Cuts text to `width` characters at a word boundary, marking the cut with "...".
std::string clip(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  std::size_t cut = text.rfind(' ', width - 3);
  if (cut == std::string::npos || cut < width / 2) cut = width - 3;
  return text.substr(0, cut) + "...";
}

}  // namespace

int cmd_scenarios(int argc, char** argv) {
  return guarded("scenarios", [&]() {
    std::string show;
    po::options_description opts("cisa-sim scenarios options");
    opts.add_options()("help,h", "show this help")("show", po::value(&show), "print the YAML of one shipped scenario");
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    if (vm.count("help")) {
      std::cout << "The scenarios compiled into cisa-sim. `--scenario NAME` (or NAME.yaml) finds them from any\n"
                   "folder; a file path of the same name is used first.\n\n"
                << opts;
      return kExitOk;
    }
    po::notify(vm);
    if (!show.empty()) {
      for (const char* kind : {"run", "plan", "designs"})
        for (const auto& s : shipped_scenarios())
          if (s.kind == kind && s.name == show) {
            std::cout << *embedded_text("scenarios/" + s.name + ".yaml");
            return kExitOk;
          }
      resolve_scenario(show, show.rfind("plan_", 0) == 0 ? "plan" : "run");  // throws with the closest names
      return kExitOk;
    }
    const auto all = shipped_scenarios();
    std::size_t w = 4;
    for (const auto& s : all) w = std::max(w, s.name.size());
    for (const char* kind : {"run", "plan", "designs"}) {
      const std::string k = kind;
      std::cout << (k == "run"    ? "cisa-sim --scenario NAME\n"
                    : k == "plan" ? "\ncisa-sim plan --scenario NAME\n"
                                  : "\ncisa-sim designs --scenario NAME\n");
      for (const auto& s : all)
        if (s.kind == kind) std::cout << fmt::format("  {:<{}}  {}\n", s.name, w, clip(s.description, 120 - 4 - w));
    }
    std::cout << "\n`cisa-sim scenarios --show NAME` prints one; copy it to a file to edit it.\n";
    return kExitOk;
  });
}

}  // namespace cisa::cli
