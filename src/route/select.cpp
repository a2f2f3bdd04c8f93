// Representatives, index queries, page selection, recall and overlap.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "cisa/errors.hpp"
#include "route/parallel.hpp"
#include "route/route.hpp"

namespace cisa::route {

namespace {
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRowMap = Eigen::Map<const RowMat>;
}  // namespace

std::string to_string(RepRule r) { return r == RepRule::mean ? "mean" : "minmax"; }
std::string to_string(Aggregation a) {
  return a == Aggregation::sum ? "sum" : a == Aggregation::max ? "max" : "last";
}
RepRule parse_rep_rule(const std::string& s) {
  if (s == "mean") return RepRule::mean;
  if (s == "minmax") return RepRule::minmax;
  throw cisa::InputError(cisa::SourceLocation{"", 0, "rep"},
                         "unknown representative rule '" + s + "' (mean, minmax)");
}
Aggregation parse_aggregation(const std::string& s) {
  if (s == "sum") return Aggregation::sum;
  if (s == "max") return Aggregation::max;
  if (s == "last") return Aggregation::last;
  throw cisa::InputError(cisa::SourceLocation{"", 0, "aggregation"},
                         "unknown aggregation '" + s + "' (sum, max, last)");
}

Representatives make_representatives(const LayerActivations& a, std::int64_t c, RepRule rule) {
  Representatives reps;
  reps.rule = rule;
  reps.pages = a.tokens / c;
  reps.kv_heads = a.kv_heads;
  reps.head_dim = a.head_dim;
  const int d = a.head_dim;
  reps.dim = rule == RepRule::mean ? d : 2 * d;
  reps.psi.assign(static_cast<std::size_t>(reps.kv_heads * reps.pages * reps.dim), 0.0f);
  const std::int64_t per_task = 256;
  const std::int64_t tasks_per_group = (reps.pages + per_task - 1) / per_task;
  detail::parallel_for(a.kv_heads * tasks_per_group, resolve_threads(0), [&](std::int64_t task, int) {
    const int g = static_cast<int>(task / tasks_per_group);
    const std::int64_t j_begin = (task % tasks_per_group) * per_task;
    const std::int64_t j_end = std::min(reps.pages, j_begin + per_task);
    for (std::int64_t j = j_begin; j < j_end; ++j) {
      float* out = reps.psi.data() + (g * reps.pages + j) * reps.dim;
      if (rule == RepRule::mean) {
        std::vector<double> acc(static_cast<std::size_t>(d), 0.0);
        for (std::int64_t t = j * c; t < (j + 1) * c; ++t)
          for (int i = 0; i < d; ++i) acc[static_cast<std::size_t>(i)] += a.k_row(t, g)[i];
        for (int i = 0; i < d; ++i)
          out[i] = static_cast<float>(acc[static_cast<std::size_t>(i)] / static_cast<double>(c));
      } else {  // [max | min]
        for (int i = 0; i < d; ++i) out[i] = out[d + i] = a.k_row(j * c, g)[i];
        for (std::int64_t t = j * c + 1; t < (j + 1) * c; ++t)
          for (int i = 0; i < d; ++i) {
            out[i] = std::max(out[i], a.k_row(t, g)[i]);
            out[d + i] = std::min(out[d + i], a.k_row(t, g)[i]);
          }
      }
    }
  });
  return reps;
}

void score_query(RepRule rule, const float* iq, int d, float* phi) {
  if (rule == RepRule::mean) {
    std::copy(iq, iq + d, phi);
  } else {
    for (int i = 0; i < d; ++i) {
      phi[i] = std::max(iq[i], 0.0f);
      phi[d + i] = std::min(iq[i], 0.0f);
    }
  }
}

std::string candidate_label(int c, int r) {
  return c == r ? std::string("mean") : "head " + std::to_string(c);
}

std::vector<float> index_queries(const LayerActivations& a, const std::vector<int>& candidate) {
  const std::int64_t P = a.num_positions();
  const int Hkv = a.kv_heads, r = a.heads_per_group(), d = a.head_dim;
  if (static_cast<int>(candidate.size()) != Hkv)
    throw std::invalid_argument("index_queries: one candidate per KV group required");
  std::vector<float> iq(static_cast<std::size_t>(P * Hkv * d), 0.0f);
  for (std::int64_t p = 0; p < P; ++p)
    for (int g = 0; g < Hkv; ++g) {
      const int c = candidate[static_cast<std::size_t>(g)];
      if (c < 0 || c > r) throw std::invalid_argument("index_queries: candidate out of range");
      float* out = iq.data() + (p * Hkv + g) * d;
      if (c < r) {
        std::copy(a.q_row(p, g * r + c), a.q_row(p, g * r + c) + d, out);
      } else {
        for (int i = 0; i < d; ++i) {
          double s = 0;
          for (int hh = 0; hh < r; ++hh) s += a.q_row(p, g * r + hh)[i];
          out[i] = static_cast<float>(s / r);
        }
      }
    }
  return iq;
}

std::vector<GroupSelection> select_pages(const LayerActivations& a, const Representatives& reps,
                                         const std::vector<float>& iq,
                                         const SelectionGeometry& geo, std::int64_t k_max,
                                         int threads) {
  const std::int64_t P = a.num_positions(), c = geo.chunk_tokens;
  const std::int64_t G = std::max<std::int64_t>(1, geo.qshare_g);
  const int Hkv = a.kv_heads, d = a.head_dim, dim = reps.dim;
  const std::int64_t groups = (P + G - 1) / G;
  std::vector<GroupSelection> out(static_cast<std::size_t>(groups * Hkv));
  std::int64_t ne_max = 0;
  for (std::int64_t qg = 0; qg < groups; ++qg)
    for (int g = 0; g < Hkv; ++g) {
      GroupSelection& s = out[static_cast<std::size_t>(qg * Hkv + g)];
      s.p_begin = qg * G;
      s.p_end = std::min(P, s.p_begin + G);
      s.kv_group = g;
      s.full_pages = a.positions[static_cast<std::size_t>(s.p_begin)] / c;
      s.eligible = std::max<std::int64_t>(0, std::min(s.full_pages, reps.pages) - geo.window_pages);
      s.window_begin = s.eligible;
      ne_max = std::max(ne_max, s.eligible);
    }
  if (ne_max == 0 || k_max <= 0) return out;
  const bool per_position = geo.aggregation == Aggregation::max;
  const int nthreads = resolve_threads(threads);
  // One GEMM per KV group scores every eligible page for every selection (sum / last: one
  // scoring query per QShare group; max: one per position, reduced over the group's rows).
  detail::parallel_for(Hkv, nthreads, [&](std::int64_t gi, int) {
    const int g = static_cast<int>(gi);
    const std::int64_t rows = per_position ? P : groups;
    RowMat Phi(rows, dim);
    Eigen::VectorXf qsum(d);
    for (std::int64_t row = 0; row < rows; ++row) {
      if (per_position) {
        score_query(reps.rule, iq.data() + (row * Hkv + g) * d, d, Phi.row(row).data());
        continue;
      }
      const GroupSelection& s = out[static_cast<std::size_t>(row * Hkv + g)];
      qsum.setZero();
      if (geo.aggregation == Aggregation::sum) {
        for (std::int64_t p = s.p_begin; p < s.p_end; ++p)
          qsum += Eigen::Map<const Eigen::VectorXf>(iq.data() + (p * Hkv + g) * d, d);
      } else {
        qsum = Eigen::Map<const Eigen::VectorXf>(iq.data() + ((s.p_end - 1) * Hkv + g) * d, d);
      }
      score_query(reps.rule, qsum.data(), d, Phi.row(row).data());
    }
    ConstRowMap psi(reps.row(g, 0), ne_max, dim);
    RowMat S(rows, ne_max);
    S.noalias() = Phi * psi.transpose();
    std::vector<float> score;
    std::vector<std::int64_t> idx;
    for (std::int64_t qg = 0; qg < groups; ++qg) {
      GroupSelection& s = out[static_cast<std::size_t>(qg * Hkv + g)];
      const std::int64_t Ne = s.eligible;
      if (Ne == 0) continue;
      if (per_position) {
        score.assign(S.row(s.p_begin).data(), S.row(s.p_begin).data() + Ne);
        for (std::int64_t p = s.p_begin + 1; p < s.p_end; ++p)
          for (std::int64_t j = 0; j < Ne; ++j)
            score[static_cast<std::size_t>(j)] = std::max(score[static_cast<std::size_t>(j)], S(p, j));
      } else {
        score.assign(S.row(qg).data(), S.row(qg).data() + Ne);
      }
      idx.resize(static_cast<std::size_t>(Ne));
      std::iota(idx.begin(), idx.end(), std::int64_t{0});
      auto better = [&](std::int64_t x, std::int64_t y) {
        const float sx = score[static_cast<std::size_t>(x)], sy = score[static_cast<std::size_t>(y)];
        return sx > sy || (sx == sy && x < y);
      };
      const std::int64_t keep = std::min(Ne, k_max);
      if (keep < Ne) std::nth_element(idx.begin(), idx.begin() + keep, idx.end(), better);
      std::sort(idx.begin(), idx.begin() + keep, better);
      s.ranked.assign(idx.begin(), idx.begin() + keep);
    }
  });
  return out;
}

double recall(const PageMass& m, const LayerActivations& a, const GroupSelection& s,
              std::int64_t p, int h, std::int64_t budget) {
  const float* row = m.row(p, h);
  const std::int64_t last_page = a.positions[static_cast<std::size_t>(p)] / m.chunk_tokens;
  double sum = 0;
  const std::int64_t n = std::min<std::int64_t>(budget, static_cast<std::int64_t>(s.ranked.size()));
  for (std::int64_t i = 0; i < n; ++i) sum += row[s.ranked[static_cast<std::size_t>(i)]];
  for (std::int64_t j = s.window_begin; j <= last_page; ++j) sum += row[j];
  return sum;
}

double overlap(const std::vector<std::int64_t>& x, const std::vector<std::int64_t>& y) {
  const std::size_t smaller = std::min(x.size(), y.size());
  if (smaller == 0) return 1.0;
  const std::vector<std::int64_t>& probe = x.size() <= y.size() ? x : y;
  const std::vector<std::int64_t>& other = x.size() <= y.size() ? y : x;
  // Membership by a per-thread stamp array (O(|x| + |y|), no sorting).
  thread_local std::vector<std::uint32_t> stamp;
  thread_local std::uint32_t epoch = 0;
  std::int64_t top = 0;
  for (auto v : other) top = std::max(top, v);
  if (static_cast<std::int64_t>(stamp.size()) <= top) stamp.resize(static_cast<std::size_t>(top + 1), 0);
  if (++epoch == 0) {
    std::fill(stamp.begin(), stamp.end(), 0u);
    epoch = 1;
  }
  for (auto v : other) stamp[static_cast<std::size_t>(v)] = epoch;
  std::size_t common = 0;
  for (auto v : probe)
    if (v >= 0 && v <= top && stamp[static_cast<std::size_t>(v)] == epoch) ++common;
  return static_cast<double>(common) / static_cast<double>(smaller);
}

}  // namespace cisa::route
