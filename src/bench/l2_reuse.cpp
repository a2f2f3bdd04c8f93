// l2_reuse [--random] TRACE.u32 CAPACITY [CAPACITY ...]: misses of a fully associative cache of each
// capacity (in lines), LRU or (--random) evicting a random line, over a trace of uint32 line ids in
// access order; prints "capacity misses" per line. The trace simulation's engine
// (analysis/l2_trace_sim.py writes the trace).
// l2_reuse --closed LISTS.u32 SLOTS PAGES_PER_TILE CAPACITY VISIT_S PAGE_READ_S JITTER CTA_SPREAD
//          resident|missing [TIMES.csv]:
// the closed-loop schedule (closed_loop_schedule.hpp) over CTA page lists (uint32: the CTA count,
// then per CTA its length and its ids, in grid order); prints "reads misses makespan_s", and each
// CTA's start and end (s) to TIMES.csv when given.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "closed_loop_schedule.hpp"
#include "lru_misses.hpp"

namespace {

std::vector<std::uint32_t> read_u32(const char* path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ok = ok && bytes.size() % 4 == 0;
  std::vector<std::uint32_t> v(bytes.size() / 4);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * i])) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * i + 1])) << 8 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * i + 2])) << 16 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * i + 3])) << 24;
  return v;
}

int closed_mode(int argc, char** argv) {
  if (argc < 11) {
    std::fprintf(stderr, "usage: l2_reuse --closed LISTS.u32 SLOTS PAGES_PER_TILE CAPACITY VISIT_S PAGE_READ_S "
                         "JITTER CTA_SPREAD resident|missing [TIMES.csv]\n");
    return 2;
  }
  bool ok = false;
  const std::vector<std::uint32_t> v = read_u32(argv[2], ok);
  if (!ok || v.empty()) {
    std::fprintf(stderr, "l2_reuse: %s: cannot read uint32 CTA lists\n", argv[2]);
    return 2;
  }
  std::vector<std::vector<std::uint32_t>> ctas(v[0]);
  std::size_t at = 1;
  for (auto& c : ctas) {
    if (at >= v.size() || v.size() - at - 1 < v[at]) {
      std::fprintf(stderr, "l2_reuse: %s: CTA lists cut short\n", argv[2]);
      return 2;
    }
    c.assign(v.begin() + static_cast<std::ptrdiff_t>(at + 1), v.begin() + static_cast<std::ptrdiff_t>(at + 1 + v[at]));
    at += 1 + v[at];
  }
  cisa::ClosedLoopParams p;
  char* e[7] = {};
  p.slots = std::strtoll(argv[3], &e[0], 10);
  p.pages_per_tile = std::strtoll(argv[4], &e[1], 10);
  p.capacity = std::strtoll(argv[5], &e[2], 10);
  p.visit_s = std::strtod(argv[6], &e[3]);
  p.page_read_s = std::strtod(argv[7], &e[4]);
  p.jitter = std::strtod(argv[8], &e[5]);
  p.cta_spread = std::strtod(argv[9], &e[6]);
  for (int i = 0; i < 7; ++i)
    if (e[i] == argv[3 + i] || *e[i] != '\0') {
      std::fprintf(stderr, "l2_reuse: --closed argument '%s' is not a number\n", argv[3 + i]);
      return 2;
    }
  if (p.slots < 1 || p.pages_per_tile < 1 || p.capacity < 0 || p.visit_s < 0 || p.page_read_s < 0 || p.jitter < 0 ||
      p.cta_spread < 0) {
    std::fprintf(stderr, "l2_reuse: --closed needs SLOTS, PAGES_PER_TILE >= 1 and the rest >= 0\n");
    return 2;
  }
  const std::string share = argv[10];
  if (share != "resident" && share != "missing") {
    std::fprintf(stderr, "l2_reuse: --closed share '%s' is neither resident nor missing\n", argv[10]);
    return 2;
  }
  p.demand_share = share == "missing";
  const cisa::ClosedLoopResult r = cisa::closed_loop_schedule(ctas, p);
  std::printf("%lld %lld %.9g\n", static_cast<long long>(r.reads), static_cast<long long>(r.misses), r.makespan_s);
  if (argc > 11) {
    std::FILE* f = std::fopen(argv[11], "w");
    if (f == nullptr) {
      std::fprintf(stderr, "l2_reuse: %s: cannot write\n", argv[11]);
      return 2;
    }
    std::fprintf(f, "start_s,end_s\n");
    for (std::size_t c = 0; c < ctas.size(); ++c) std::fprintf(f, "%.9g,%.9g\n", r.start_s[c], r.end_s[c]);
    std::fclose(f);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--closed") return closed_mode(argc, argv);
  const bool random = argc > 1 && std::string(argv[1]) == "--random";
  if (random) {
    --argc;
    ++argv;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: l2_reuse [--random] TRACE.u32 CAPACITY [CAPACITY ...]\n");
    return 2;
  }
  bool ok = false;
  const std::vector<std::uint32_t> trace = read_u32(argv[1], ok);
  if (!ok) {
    std::fprintf(stderr, "l2_reuse: %s: cannot open, or not a whole number of uint32 ids\n", argv[1]);
    return 2;
  }
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
