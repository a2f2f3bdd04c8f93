// libFuzzer harness: --set assignments (one per line, at most 8) on the embedded default scenario.
#include <sstream>
#include <vector>

#include "cisa/scenario.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::vector<std::string> sets;
  for (std::string line; std::getline(in, line) && sets.size() < 8;)
    if (!line.empty()) sets.push_back(line);
  return fuzz::expect_ok_or_input_error([&] { (void)cisa::load_scenario("", sets); });
}
