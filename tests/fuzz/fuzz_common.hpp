// Shared by the libFuzzer harnesses (tests/fuzz/README.md): a bad input must end in InputError
// (exit 2 in the CLI). Any other exception is a finding (a wrong exit code): abort so libFuzzer
// keeps the input; crashes and sanitizer reports are findings by themselves.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

#include "cisa/errors.hpp"

namespace fuzz {

// A per-process scratch file holding `data` (the loaders read paths).
inline std::string scratch(const std::string& suffix, const std::uint8_t* data, std::size_t size) {
  static const std::string base = "/tmp/cisa_fuzz_" + std::to_string(::getpid());
  const std::string path = base + suffix;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

template <class F>
int expect_ok_or_input_error(F&& body) {
  // Large sweeps are legitimate but slow: plan for 64 MB, so the loader refuses them at once.
  static const int env = ::setenv("CISA_MEMORY_BYTES", "67108864", 0);
  (void)env;
  try {
    body();
  } catch (const cisa::InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: not an InputError (the CLI would exit 1): %s\n", e.what());
    std::abort();
  }
  return 0;
}

}  // namespace fuzz
