#pragma once
#include <string>

namespace cisa {
std::string tool_version();  // e.g. "0.1.0"
std::string git_hash();      // short hash at configure time, "-dirty" when the tree had changes
}  // namespace cisa
