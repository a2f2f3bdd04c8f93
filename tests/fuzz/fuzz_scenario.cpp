// libFuzzer harness: the scenario loader on arbitrary YAML text.
#include "cisa/scenario.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;
  const std::string path = fuzz::scratch(".yaml", data, size);
  return fuzz::expect_ok_or_input_error([&] { (void)cisa::load_scenario(path, {}); });
}
