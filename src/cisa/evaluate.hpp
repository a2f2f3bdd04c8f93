// Scenario -> table of predictions, plus the provenance attributes every output carries.
#pragma once

#include <functional>
#include <string>

#include "cisa/scenario.hpp"
#include "cisa/table.hpp"

namespace cisa {

// Every N-th point starting at `index` (for spreading a sweep over GPUs or job-array tasks).
struct Shard {
  int index = 0;
  int count = 1;
  bool takes(std::size_t point) const { return static_cast<int>(point % static_cast<std::size_t>(count)) == index; }
};
Shard parse_shard(const std::string& text);  // "i/N", 0 <= i < N; InputError otherwise

// progress(done, total) is called every few thousand points (may be empty).
Table evaluate_scenario(const Scenario& sc, const std::function<void(std::size_t, std::size_t)>& progress = {},
                        Shard shard = {});

// tool_version, git_hash, created_utc, command_line, scenario_*, hardware_yaml, hw_* rates.
Attributes provenance(const Scenario& sc, const std::string& command_line, Shard shard = {});

// The attributes every output file carries: tool version, git hash, time, command line, scenario.
Attributes base_attributes(const std::string& command_line, const std::string& scenario_name, const std::string& file,
                           const std::string& text, const std::string& effective_yaml,
                           const std::vector<std::string>& overrides);

std::string utc_now_iso8601();

}  // namespace cisa
