// l2_reuse [--random] TRACE.u32 CAPACITY [CAPACITY ...]: misses of a fully associative cache of each
// capacity (in lines), LRU or (--random) evicting a random line, over a trace of uint32 line ids in
// access order; prints "capacity misses" per line. The trace simulation's engine
// (analysis/l2_trace_sim.py writes the trace).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "lru_misses.hpp"

int main(int argc, char** argv) {
  const bool random = argc > 1 && std::string(argv[1]) == "--random";
  if (random) {
    --argc;
    ++argv;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: l2_reuse [--random] TRACE.u32 CAPACITY [CAPACITY ...]\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "l2_reuse: %s: cannot open\n", argv[1]);
    return 2;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() % 4 != 0) {
    std::fprintf(stderr, "l2_reuse: %s: %zu bytes, not a whole number of uint32 ids\n", argv[1], bytes.size());
    return 2;
  }
  std::vector<std::uint32_t> trace(bytes.size() / 4);
  for (std::size_t i = 0; i < trace.size(); ++i)
    trace[i] = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * i])) |
               static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * i + 1])) << 8 |
               static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * i + 2])) << 16 |
               static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * i + 3])) << 24;
  std::vector<std::int64_t> caps;
  for (int a = 2; a < argc; ++a) {
    char* end = nullptr;
    const long long c = std::strtoll(argv[a], &end, 10);
    if (end == argv[a] || *end != '\0' || c < 0) {
      std::fprintf(stderr, "l2_reuse: capacity '%s' is not a non-negative integer\n", argv[a]);
      return 2;
    }
    caps.push_back(c);
  }
  const std::vector<std::int64_t> m =
      random ? cisa::random_replacement_misses(trace, caps, 7) : cisa::lru_misses(trace, caps);
  for (std::size_t i = 0; i < caps.size(); ++i) std::printf("%lld %lld\n", static_cast<long long>(caps[i]),
                                                           static_cast<long long>(m[i]));
  return 0;
}
