// Scenario -> table of predictions, plus the provenance attributes every output carries.
#pragma once

#include <functional>
#include <string>

#include "cisa/scenario.hpp"
#include "cisa/table.hpp"

namespace cisa {

// progress(done, total) is called every few thousand points (may be empty).
Table evaluate_scenario(const Scenario& sc, const std::function<void(std::size_t, std::size_t)>& progress = {});

// tool_version, git_hash, created_utc, command_line, scenario_*, hardware_yaml, hw_* rates.
Attributes provenance(const Scenario& sc, const std::string& command_line);

std::string utc_now_iso8601();

}  // namespace cisa
