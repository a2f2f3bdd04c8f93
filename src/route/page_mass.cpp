// Dense attention mass per page: the one heavy product (Eigen GEMMs over blocks of keys).
//
// For KV group g the query rows are (p, head-in-group), R = P * r rows of dimension d, scaled
// by 1/sqrt(d). Keys are processed in blocks of B tokens (B a multiple of the chunk c):
//   S = Q_g[rows that can see the block] * K_g[block]^T         (one sgemm, R x d x B)
// then, per row, causal mask, block maximum m_b, exp(S - m_b) and per-page sums. Blocks are
// independent tasks (g, b) spread over threads. A final pass combines block maxima into the
// row's log-sum-exp and rescales each block's page sums to probabilities.
#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <thread>

#include "route/parallel.hpp"
#include "route/route.hpp"

namespace cisa::route {

namespace {
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using KeyMap = Eigen::Map<const RowMat, 0, Eigen::OuterStride<>>;
}  // namespace

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

PageMass dense_page_mass(const LayerActivations& a, std::int64_t c, const ComputeOptions& opt) {
  const std::int64_t P = a.num_positions();
  const int Hq = a.q_heads, Hkv = a.kv_heads, r = a.heads_per_group(), d = a.head_dim;
  const std::int64_t T_used = a.positions.back() + 1;
  const std::int64_t pages = (T_used + c - 1) / c;
  const std::int64_t B = std::max<std::int64_t>(1, opt.key_block / c) * c;
  const std::int64_t nblocks = (T_used + B - 1) / B;
  const std::int64_t R = P * r;
  const int threads = resolve_threads(opt.threads);

  PageMass out;
  out.positions = P;
  out.q_heads = Hq;
  out.pages = pages;
  out.chunk_tokens = c;
  out.mass.assign(static_cast<std::size_t>(P * Hq * pages), 0.0f);

  // Q_g, scaled, rows ordered (p, hh).
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<RowMat> Q(static_cast<std::size_t>(Hkv));
  for (int g = 0; g < Hkv; ++g) {
    RowMat& qg = Q[static_cast<std::size_t>(g)];
    qg.resize(R, d);
    for (std::int64_t p = 0; p < P; ++p)
      for (int hh = 0; hh < r; ++hh) {
        const float* src = a.q_row(p, g * r + hh);
        for (int i = 0; i < d; ++i) qg(p * r + hh, i) = src[i] * scale;
      }
  }
  // Block maxima [g][row][block]; -inf where the row sees nothing of the block.
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> bmax(static_cast<std::size_t>(Hkv * R * nblocks), ninf);

  std::vector<RowMat> scratch(static_cast<std::size_t>(threads));
  detail::parallel_for(Hkv * nblocks, threads, [&](std::int64_t task, int worker) {
    const int g = static_cast<int>(task / nblocks);
    const std::int64_t b = task % nblocks;
    const std::int64_t t0 = b * B;
    const std::int64_t nb = std::min(B, T_used - t0);
    // First analysed position that sees token t0.
    const auto it = std::lower_bound(a.positions.begin(), a.positions.end(), t0);
    const std::int64_t p_begin = it - a.positions.begin();
    if (p_begin >= P) return;
    const std::int64_t rows = (P - p_begin) * r;
    KeyMap K(a.k_row(t0, g), nb, d, Eigen::OuterStride<>(static_cast<Eigen::Index>(Hkv) * d));
    RowMat& S = scratch[static_cast<std::size_t>(worker)];
    S.resize(rows, nb);
    S.noalias() = Q[static_cast<std::size_t>(g)].bottomRows(rows) * K.transpose();
    const std::int64_t page0 = t0 / c;
    for (std::int64_t row = 0; row < rows; ++row) {
      const std::int64_t p = p_begin + row / r;
      const int h = g * r + static_cast<int>(row % r);
      const std::int64_t valid = std::min(nb, a.positions[static_cast<std::size_t>(p)] - t0 + 1);
      Eigen::Map<Eigen::ArrayXf> s(S.row(row).data(), valid);
      const float m = s.maxCoeff();
      s = (s - m).exp();
      float* dst = out.mass.data() + (p * Hq + h) * pages + page0;
      const std::int64_t full = valid / c;
      if (full > 0) {
        Eigen::Map<Eigen::ArrayXf>(dst, full) =
            Eigen::Map<const Eigen::MatrixXf>(s.data(), c, full).colwise().sum().transpose().array();
      }
      if (valid % c) dst[full] = s.segment(full * c, valid % c).sum();
      bmax[static_cast<std::size_t>((g * R + p * r + row % r) * nblocks + b)] = m;
    }
  });

  // Combine blocks: lse = M + log sum_b exp(m_b - M) * sum(pages of b); rescale.
  const std::int64_t pages_per_block = B / c;
  detail::parallel_for(P * Hq, threads, [&](std::int64_t ph, int) {
    const std::int64_t p = ph / Hq;
    const int h = static_cast<int>(ph % Hq);
    const int g = h / r;
    const float* bm = bmax.data() + (g * R + p * r + h % r) * nblocks;
    float* row = out.mass.data() + ph * pages;
    float M = ninf;
    for (std::int64_t b = 0; b < nblocks; ++b) M = std::max(M, bm[b]);
    double total = 0;
    for (std::int64_t b = 0; b < nblocks; ++b) {
      if (bm[b] == ninf) continue;
      const std::int64_t j0 = b * pages_per_block, j1 = std::min(pages, j0 + pages_per_block);
      double s = 0;
      for (std::int64_t j = j0; j < j1; ++j) s += row[j];
      total += std::exp(static_cast<double>(bm[b] - M)) * s;
    }
    for (std::int64_t b = 0; b < nblocks; ++b) {
      const std::int64_t j0 = b * pages_per_block, j1 = std::min(pages, j0 + pages_per_block);
      const float f = bm[b] == ninf ? 0.0f
                                    : static_cast<float>(std::exp(static_cast<double>(bm[b] - M)) / total);
      for (std::int64_t j = j0; j < j1; ++j) row[j] *= f;
    }
  });
  return out;
}

PageMass dense_page_mass_reference(const LayerActivations& a, std::int64_t c) {
  const std::int64_t P = a.num_positions();
  const int Hq = a.q_heads, r = a.heads_per_group(), d = a.head_dim;
  const std::int64_t T_used = a.positions.back() + 1;
  PageMass out;
  out.positions = P;
  out.q_heads = Hq;
  out.pages = (T_used + c - 1) / c;
  out.chunk_tokens = c;
  out.mass.assign(static_cast<std::size_t>(P * Hq * out.pages), 0.0f);
  std::vector<double> s;
  for (std::int64_t p = 0; p < P; ++p)
    for (int h = 0; h < Hq; ++h) {
      const std::int64_t t = a.positions[static_cast<std::size_t>(p)];
      s.assign(static_cast<std::size_t>(t + 1), 0.0);
      double m = -std::numeric_limits<double>::infinity();
      for (std::int64_t i = 0; i <= t; ++i) {
        double dot = 0;
        for (int e = 0; e < d; ++e) dot += double(a.q_row(p, h)[e]) * double(a.k_row(i, h / r)[e]);
        s[static_cast<std::size_t>(i)] = dot / std::sqrt(double(d));
        m = std::max(m, s[static_cast<std::size_t>(i)]);
      }
      double z = 0;
      for (auto& v : s) z += (v = std::exp(v - m));
      float* row = out.mass.data() + (p * Hq + h) * out.pages;
      std::vector<double> acc(static_cast<std::size_t>(out.pages), 0.0);
      for (std::int64_t i = 0; i <= t; ++i) acc[static_cast<std::size_t>(i / c)] += s[static_cast<std::size_t>(i)] / z;
      for (std::int64_t j = 0; j < out.pages; ++j) row[j] = static_cast<float>(acc[static_cast<std::size_t>(j)]);
    }
  return out;
}

}  // namespace cisa::route
