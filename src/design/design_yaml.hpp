// Loading design descriptions (models/design/<name>.yaml, embedded; or a file) and design
// scenarios (scenarios/designs_*.yaml). Every bad field is an InputError naming file, line, field.
#pragma once

#include <string>
#include <vector>

#include "cisa/yaml_util.hpp"
#include "design/design.hpp"

namespace cisa::design {

Design parse_design(const YamlDoc& doc);
// NAME of a shipped design (models/design/NAME.yaml), else a file path.
Design load_design(const std::string& name_or_path);
std::vector<std::string> shipped_design_names();

// One run scenario supplying points, with sweep keys replaced for the comparison.
struct DesignRun {
  std::string scenario;           // a run scenario name or path
  std::vector<std::string> sets;  // "sweep.KEY=[...]" overrides
};

struct DesignScenario {
  std::string name, description, file, text;
  std::vector<Design> designs;
  bool equal_budget = true;  // every design selects the scenario's K x c tokens
  std::vector<DesignRun> runs;
};

DesignScenario parse_design_scenario(const YamlDoc& doc);
DesignScenario load_design_scenario(const std::string& arg);  // a path or a shipped designs_* name

}  // namespace cisa::design
