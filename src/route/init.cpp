// Indexer initialisation without gradients (method doc §2): per KV group, the r + 1 candidate
// projections (each head's, and the row-wise mean) are scored by the KL divergence between the
// dense attention mass per page and the candidate's page distribution; the smallest wins.
#include <Eigen/Dense>
#include <cmath>
#include <limits>

#include "route/parallel.hpp"
#include "route/route.hpp"

namespace cisa::route {

namespace {
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRowMap = Eigen::Map<const RowMat>;
}  // namespace

namespace {

// The group's dense target per position: p_j on full pages j < N(t) (head-averaged,
// renormalised) and its negative entropy sum p log p. Positions with N < 2 are skipped.
struct DenseTarget {
  std::vector<std::int64_t> pos;       // analysed position indices used
  std::vector<std::int64_t> n;         // N(t) per used position
  std::vector<std::vector<float>> p;   // p_j, j < N
  std::vector<double> plogp;           // sum_j p_j log p_j
};

DenseTarget dense_target(const PageMass& m, const LayerActivations& a, int g, std::int64_t n_max) {
  DenseTarget t;
  const std::int64_t P = a.num_positions(), c = m.chunk_tokens;
  const int r = a.heads_per_group();
  for (std::int64_t p = 0; p < P; ++p) {
    const std::int64_t N = std::min(n_max, a.positions[static_cast<std::size_t>(p)] / c);
    if (N < 2) continue;
    Eigen::ArrayXd acc = Eigen::ArrayXd::Zero(N);
    for (int hh = 0; hh < r; ++hh)
      acc += Eigen::Map<const Eigen::ArrayXf>(m.row(p, g * r + hh), N).cast<double>();
    const double z = acc.sum();
    if (!(z > 0)) continue;
    acc /= z;
    const double plogp = (acc > 0).select(acc * acc.max(1e-300).log(), 0.0).sum();
    t.pos.push_back(p);
    t.n.push_back(N);
    t.p.emplace_back(N);
    Eigen::Map<Eigen::ArrayXf>(t.p.back().data(), N) = acc.cast<float>();
    t.plogp.push_back(plogp);
  }
  return t;
}

// Mean KL(target || softmax(phi(iq) . psi / sqrt(d))) over the target's positions.
double mean_kl(const DenseTarget& t, const LayerActivations& a, const Representatives& reps,
               int g, const float* iq_g, std::int64_t n_max) {
  if (t.pos.empty()) return std::numeric_limits<double>::quiet_NaN();
  const int d = a.head_dim, dim = reps.dim;
  const auto U = static_cast<std::int64_t>(t.pos.size());
  RowMat Phi(U, dim);
  for (std::int64_t u = 0; u < U; ++u)
    score_query(reps.rule, iq_g + t.pos[static_cast<std::size_t>(u)] * d, d, Phi.row(u).data());
  Phi *= 1.0f / std::sqrt(static_cast<float>(d));  // phi is positively homogeneous
  ConstRowMap psi(reps.row(g, 0), n_max, dim);
  RowMat S(U, n_max);
  S.noalias() = Phi * psi.transpose();
  double kl_sum = 0;
  Eigen::ArrayXf e;
  for (std::int64_t u = 0; u < U; ++u) {
    const std::int64_t N = t.n[static_cast<std::size_t>(u)];
    Eigen::Map<const Eigen::ArrayXf> s(S.row(u).data(), N);
    Eigen::Map<const Eigen::ArrayXf> pj(t.p[static_cast<std::size_t>(u)].data(), N);
    const float mx = s.maxCoeff();
    e = (s - mx).exp();
    const double lse = static_cast<double>(mx) + std::log(static_cast<double>(e.sum()));
    const double ps = (pj.cast<double>() * s.cast<double>()).sum();
    // KL = sum p log p - sum p s + lse * sum p   (sum p = 1)
    kl_sum += std::max(0.0, t.plogp[static_cast<std::size_t>(u)] - ps + lse);
  }
  return kl_sum / static_cast<double>(U);
}

std::vector<float> candidate_iq(const LayerActivations& a, int g, int cand) {
  const std::int64_t P = a.num_positions();
  const int d = a.head_dim, r = a.heads_per_group();
  std::vector<float> iq(static_cast<std::size_t>(P * d));
  for (std::int64_t p = 0; p < P; ++p)
    for (int i = 0; i < d; ++i) {
      double s = 0;
      if (cand < r) {
        s = a.q_row(p, g * r + cand)[i];
      } else {
        for (int hh = 0; hh < r; ++hh) s += a.q_row(p, g * r + hh)[i];
        s /= r;
      }
      iq[static_cast<std::size_t>(p * d + i)] = static_cast<float>(s);
    }
  return iq;
}

}  // namespace

double candidate_kl(const PageMass& m, const LayerActivations& a, const Representatives& reps,
                    int g, const float* iq_g, std::int64_t* positions_used) {
  const std::int64_t n_max = std::min(reps.pages, a.positions.back() / m.chunk_tokens);
  const DenseTarget t = dense_target(m, a, g, n_max);
  if (positions_used) *positions_used = static_cast<std::int64_t>(t.pos.size());
  return mean_kl(t, a, reps, g, iq_g, n_max);
}

InitResult initialise_indexer(const PageMass& m, const LayerActivations& a,
                              const Representatives& reps, int threads) {
  const int Hkv = a.kv_heads, r = a.heads_per_group();
  const std::int64_t n_max = std::min(reps.pages, a.positions.back() / m.chunk_tokens);
  InitResult res;
  res.layer = a.layer;
  res.kv_heads = Hkv;
  res.candidates = r + 1;
  res.kl.assign(static_cast<std::size_t>(Hkv * (r + 1)), 0.0);
  res.chosen.assign(static_cast<std::size_t>(Hkv), r);
  res.positions.assign(static_cast<std::size_t>(Hkv), 0);
  std::vector<DenseTarget> targets(static_cast<std::size_t>(Hkv));
  const int nthreads = resolve_threads(threads);
  detail::parallel_for(Hkv, nthreads, [&](std::int64_t g, int) {
    targets[static_cast<std::size_t>(g)] = dense_target(m, a, static_cast<int>(g), n_max);
  });
  detail::parallel_for(Hkv * (r + 1), nthreads, [&](std::int64_t task, int) {
    const int g = static_cast<int>(task / (r + 1)), cand = static_cast<int>(task % (r + 1));
    const std::vector<float> iq = candidate_iq(a, g, cand);
    res.kl[static_cast<std::size_t>(task)] =
        mean_kl(targets[static_cast<std::size_t>(g)], a, reps, g, iq.data(), n_max);
  });
  for (int g = 0; g < Hkv; ++g) {
    int best = r;  // no information (NaN everywhere): default to the mean
    double best_kl = std::numeric_limits<double>::infinity();
    for (int cand = 0; cand <= r; ++cand) {
      const double v = res.kl[static_cast<std::size_t>(g * (r + 1) + cand)];
      if (v < best_kl) {
        best_kl = v;
        best = cand;
      }
    }
    res.chosen[static_cast<std::size_t>(g)] = best;
    res.positions[static_cast<std::size_t>(g)] =
        static_cast<std::int64_t>(targets[static_cast<std::size_t>(g)].pos.size());
  }
  return res;
}

std::vector<float> index_projection(const LayerActivations& a, const std::vector<int>& chosen) {
  if (!a.has_projection()) return {};
  const int Hkv = a.kv_heads, r = a.heads_per_group(), d = a.head_dim, H = a.hidden;
  std::vector<float> w(static_cast<std::size_t>(Hkv) * d * H, 0.0f);
  for (int g = 0; g < Hkv; ++g) {
    const int cand = chosen[static_cast<std::size_t>(g)];
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < H; ++j) {
        double s = 0;
        if (cand < r) s = a.w_q[(static_cast<std::size_t>(g * r + cand) * d + i) * H + j];
        else {
          for (int hh = 0; hh < r; ++hh) s += a.w_q[(static_cast<std::size_t>(g * r + hh) * d + i) * H + j];
          s /= r;
        }
        w[(static_cast<std::size_t>(g) * d + i) * H + j] = static_cast<float>(s);
      }
  }
  return w;
}

}  // namespace cisa::route
