// Synthetic activations with known structure (see SyntheticConfig in route.hpp).
//
// Channel layout of keys and queries (head_dim d, needles n):
//   channel 0        sink:     key = 1 for tokens t < sink_tokens; query = logit * sqrt(d)
//   channel 1        recency:  key = (t - T) / 1024; local heads' query = sqrt(d) * 1024 / length
//                              (score += (t - T) / length: attention decays e-fold per `length`)
//   channels 2..2+n  needle i: key = 1 on every token of needle page i of the group; retrieval
//                              heads' query = needle_logit * sqrt(d) on every needle channel
//   the rest         free:     key = page component (std chunk_coherence, shared by the page's
//                              tokens) + token noise (std key_noise); query = query_noise * R_h xi_t,
//                              xi_t AR(1) over positions with correlation query_correlation
// So a score q.k / sqrt(d) is: logit of the structure + O(query_noise * key_noise) noise.
// Queries are produced as q = w_q x with x_t = [1, xi_t] (hidden = 1 + d), xi_t ~ N(0, I), and
// w_q = [c_h | query_noise * R_h] (c_h the head's structural query, R_h ~ N(0, 1/d) on the
// free rows, 0 on the structural rows), so the projection path is exact.
// Random numbers are counter-based (hash of seed, stream, index), so the output does not depend
// on the thread count.
#include <algorithm>
#include <cmath>
#include <set>

#include "cisa/errors.hpp"
#include "route/parallel.hpp"
#include "route/route.hpp"

namespace cisa::route {

namespace {

std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Approximately standard normal (Irwin-Hall of four 16-bit uniforms, rescaled), cheap.
float gauss(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const std::uint64_t h = mix(seed ^ mix(stream * 0x632BE59BD9B4E019ull + index));
  const double s = static_cast<double>(h & 0xFFFF) + static_cast<double>((h >> 16) & 0xFFFF) +
                   static_cast<double>((h >> 32) & 0xFFFF) + static_cast<double>(h >> 48);
  // sum of 4 U(0,65536): mean 131070 (approx), variance 4 * 65536^2 / 12
  return static_cast<float>((s / 65536.0 - 2.0) * 1.7320508075688772);
}

std::uint64_t uniform_int(std::uint64_t seed, std::uint64_t stream, std::uint64_t index,
                          std::uint64_t n) {
  return mix(seed ^ mix(stream * 0x9E3779B97F4A7C15ull + index)) % n;
}

enum Stream : std::uint64_t { kPage = 1, kToken = 2, kXi = 3, kR = 4, kNeedle = 5 };

}  // namespace

std::string to_string(HeadKind k) {
  switch (k) {
    case HeadKind::local: return "local";
    case HeadKind::retrieval: return "retrieval";
    case HeadKind::sink: return "sink";
    case HeadKind::diffuse: return "diffuse";
  }
  return "?";
}

HeadKind parse_head_kind(const std::string& s) {
  if (s == "local") return HeadKind::local;
  if (s == "retrieval") return HeadKind::retrieval;
  if (s == "sink") return HeadKind::sink;
  if (s == "diffuse") return HeadKind::diffuse;
  throw cisa::InputError(cisa::SourceLocation{"", 0, "head_kinds"},
                         "unknown head kind '" + s + "' (local, retrieval, sink, diffuse)");
}

LayerActivations make_synthetic(const SyntheticConfig& cfg, SyntheticTruth* truth) {
  const cisa::SourceLocation where{"", 0, "synthetic"};
  const int d = cfg.head_dim;
  const int n_needles = cfg.needles;
  const int free_begin = 2 + n_needles;
  if (cfg.q_heads <= 0 || cfg.kv_heads <= 0 || cfg.q_heads % cfg.kv_heads != 0)
    throw cisa::InputError(where, "q_heads must be a positive multiple of kv_heads");
  if (d < free_begin + 1)
    throw cisa::InputError(where, "head_dim must exceed 2 + needles (structural channels)");
  if (cfg.tokens <= 0 || cfg.positions <= 0 || cfg.positions > cfg.tokens)
    throw cisa::InputError(where, "need 0 < positions <= tokens");
  if (cfg.chunk_tokens <= 0) throw cisa::InputError(where, "chunk_tokens must be positive");
  if (cfg.head_kinds.empty()) throw cisa::InputError(where, "head_kinds is empty");
  if (n_needles < 0 || cfg.sink_tokens < 0 || cfg.local_length <= 0)
    throw cisa::InputError(where, "needles, sink_tokens >= 0 and local_length > 0 required");

  const int threads = resolve_threads(cfg.threads);
  const std::int64_t T = cfg.tokens, P = cfg.positions, c = cfg.chunk_tokens;
  const int Hq = cfg.q_heads, Hkv = cfg.kv_heads, r = Hq / Hkv;
  const float sqd = std::sqrt(static_cast<float>(d));

  LayerActivations a;
  a.layer = cfg.layer;
  a.tokens = T;
  a.q_heads = Hq;
  a.kv_heads = Hkv;
  a.head_dim = d;
  for (std::int64_t p = 0; p < P; ++p) a.positions.push_back(T - P + p);

  // Needle pages per group: distinct, in [lo, hi), clear of the sink pages.
  const std::int64_t first_full = a.positions.front() / c;
  const std::int64_t lo = (cfg.sink_tokens + c - 1) / c;
  const std::int64_t hi = first_full - cfg.needle_min_age;
  std::vector<std::vector<std::int64_t>> needles(static_cast<std::size_t>(Hkv));
  if (n_needles > 0 && hi - lo < n_needles)
    throw cisa::InputError(where, "history too short for the needles at needle_min_age");
  for (int g = 0; g < Hkv; ++g) {
    std::set<std::int64_t> s;
    for (std::uint64_t i = 0; static_cast<int>(s.size()) < n_needles; ++i)
      s.insert(lo + static_cast<std::int64_t>(uniform_int(
                        cfg.seed, kNeedle, static_cast<std::uint64_t>(g) * 1000003u + i,
                        static_cast<std::uint64_t>(hi - lo))));
    needles[static_cast<std::size_t>(g)].assign(s.begin(), s.end());
  }
  // needle index of each page, per group (-1: none)
  auto needle_of = [&](int g, std::int64_t page) -> int {
    const auto& v = needles[static_cast<std::size_t>(g)];
    auto it = std::lower_bound(v.begin(), v.end(), page);
    return (it != v.end() && *it == page) ? static_cast<int>(it - v.begin()) : -1;
  };

  // Keys.
  a.k.assign(static_cast<std::size_t>(T * Hkv * d), 0.0f);
  const std::int64_t token_blocks = (T + 4095) / 4096;
  detail::parallel_for(token_blocks, threads, [&](std::int64_t b, int) {
    const std::int64_t t_end = std::min(T, (b + 1) * 4096);
    for (std::int64_t t = b * 4096; t < t_end; ++t) {
      const std::int64_t page = t / c;
      for (int g = 0; g < Hkv; ++g) {
        float* kr = a.k.data() + (t * Hkv + g) * d;
        kr[0] = t < cfg.sink_tokens ? 1.0f : 0.0f;
        kr[1] = static_cast<float>(static_cast<double>(t - T) / 1024.0);
        const int nd = needle_of(g, page);
        if (nd >= 0) kr[2 + nd] = 1.0f;
        const auto gi = static_cast<std::uint64_t>(g);
        for (int i = free_begin; i < d; ++i) {
          const auto ci = static_cast<std::uint64_t>(i);
          const float pc = gauss(cfg.seed, kPage,
                                 (static_cast<std::uint64_t>(page) * 64 + gi) * 4096 + ci);
          const float tn = gauss(cfg.seed, kToken,
                                 (static_cast<std::uint64_t>(t) * 64 + gi) * 4096 + ci);
          kr[i] = static_cast<float>(cfg.chunk_coherence) * pc + static_cast<float>(cfg.key_noise) * tn;
        }
      }
    }
  });

  // Projection w_q = [c_h | query_noise * R_h] and hidden states x_t = [1, xi_t].
  const int hidden = 1 + d;
  std::vector<float> w(static_cast<std::size_t>(Hq) * d * hidden, 0.0f);
  std::vector<HeadKind> kinds(static_cast<std::size_t>(Hq));
  const float rscale = static_cast<float>(cfg.query_noise) / sqd;
  for (int h = 0; h < Hq; ++h) {
    const HeadKind kind = cfg.head_kinds[static_cast<std::size_t>((h % r)) % cfg.head_kinds.size()];
    kinds[static_cast<std::size_t>(h)] = kind;
    float* wh = w.data() + static_cast<std::size_t>(h) * d * hidden;
    auto W = [&](int row, int col) -> float& { return wh[row * hidden + col]; };
    W(0, 0) = static_cast<float>(kind == HeadKind::sink ? cfg.sink_logit : cfg.sink_logit_all) * sqd;
    if (kind == HeadKind::local) W(1, 0) = sqd * 1024.0f / static_cast<float>(cfg.local_length);
    if (kind == HeadKind::retrieval)
      for (int n = 0; n < n_needles; ++n) W(2 + n, 0) = static_cast<float>(cfg.needle_logit) * sqd;
    for (int i = free_begin; i < d; ++i)
      for (int j = 0; j < d; ++j)
        W(i, 1 + j) = rscale * gauss(cfg.seed, kR,
                                     (static_cast<std::uint64_t>(h) * 4096 + static_cast<std::uint64_t>(i)) * 4096 +
                                         static_cast<std::uint64_t>(j));
  }
  // xi_t: AR(1) across consecutive analysed positions, xi_t = rho xi_{t-1} + sqrt(1-rho^2) eta_t.
  const double rho = std::clamp(cfg.query_correlation, 0.0, 1.0);
  const auto innov = static_cast<float>(std::sqrt(1.0 - rho * rho));
  std::vector<float> x(static_cast<std::size_t>(P) * hidden);
  for (std::int64_t p = 0; p < P; ++p) {
    x[static_cast<std::size_t>(p * hidden)] = 1.0f;
    for (int j = 0; j < d; ++j) {
      const float eta =
          gauss(cfg.seed, kXi, static_cast<std::uint64_t>(a.positions[static_cast<std::size_t>(p)]) * 4096 +
                                   static_cast<std::uint64_t>(j));
      const float prev = p > 0 ? x[static_cast<std::size_t>((p - 1) * hidden + 1 + j)] : eta;
      x[static_cast<std::size_t>(p * hidden + 1 + j)] =
          p > 0 ? static_cast<float>(rho) * prev + innov * eta : eta;
    }
  }
  a.q.assign(static_cast<std::size_t>(P * Hq * d), 0.0f);
  for (std::int64_t p = 0; p < P; ++p)
    for (int h = 0; h < Hq; ++h)
      for (int i = 0; i < d; ++i) {
        const float* wr = w.data() + (static_cast<std::size_t>(h) * d + static_cast<std::size_t>(i)) * hidden;
        const float* xr = x.data() + static_cast<std::size_t>(p * hidden);
        double s = 0;
        for (int j = 0; j < hidden; ++j) s += static_cast<double>(wr[j]) * xr[j];
        a.q[static_cast<std::size_t>((p * Hq + h) * d + i)] = static_cast<float>(s);
      }
  if (cfg.with_projection) {
    a.hidden = hidden;
    a.x = std::move(x);
    a.w_q = std::move(w);
  }
  if (truth) {
    truth->needle_pages = needles;
    truth->kinds = kinds;
  }
  return a;
}

}  // namespace cisa::route
