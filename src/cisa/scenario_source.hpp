// Where a `--scenario` argument comes from: a file path first, then the scenarios shipped inside
// the binary (scenarios/*.yaml, embedded at build time), so a shipped name works from any folder.
#pragma once

#include <string>
#include <vector>

#include "cisa/yaml_util.hpp"

namespace cisa {

// A scenario kind: "run" (the default command; scenarios/*.yaml) or "plan" (scenarios/plan_*.yaml).
struct ShippedScenario {
  std::string name;         // file stem, e.g. "ultra_tp2_1m"
  std::string kind;         // "run" | "plan"
  std::string description;  // the file's description: field ("" when absent)
};

std::vector<ShippedScenario> shipped_scenarios();

// Resolves ARG to a YAML document: an existing file ARG; else the shipped scenario of `kind`
// named ARG, ARG.yaml or scenarios/ARG(.yaml); else an InputError that lists the closest
// shipped names of that kind (and says `cisa-sim scenarios` lists them all).
YamlDoc resolve_scenario(const std::string& arg, const std::string& kind);

// The shipped names of `kind` ordered by closeness to `word` (edit distance), at most `n`.
std::vector<std::string> closest_scenario_names(const std::string& word, const std::string& kind, std::size_t n);

}  // namespace cisa
