// Eigen CPU references of the kernels (representatives, scoring, top-k, attention, CISA step).
#include "cisa_kernels/reference.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace cisa::kernels::ref {

namespace {
using VecD = Eigen::Matrix<double, kHeadDim, 1>;

VecD load_row(const bf16_bits* p) {
  VecD v;
  for (int i = 0; i < kHeadDim; ++i) v(i) = bf16_to_float(p[i]);
  return v;
}
}  // namespace

std::vector<float> representatives(const PagedKV& kv) {
  std::vector<float> out(static_cast<size_t>(kv.num_pages) * kv.kv_heads * kHeadDim);
  for (std::int64_t p = 0; p < kv.num_pages; ++p)
    for (int h = 0; h < kv.kv_heads; ++h) {
      Eigen::Matrix<float, kHeadDim, 1> acc = Eigen::Matrix<float, kHeadDim, 1>::Zero();
      for (int t = 0; t < kPageTokens; ++t) {
        const bf16_bits* row = kv.k + kv_offset(p, t, kv.kv_heads, h);
        for (int i = 0; i < kHeadDim; ++i) acc(i) += bf16_to_float(row[i]);
      }
      acc /= static_cast<float>(kPageTokens);
      std::copy(acc.data(), acc.data() + kHeadDim,
                out.begin() + static_cast<std::ptrdiff_t>((p * kv.kv_heads + h) * kHeadDim));
    }
  return out;
}

std::vector<float> summed_query(const bf16_bits* iq, int kv_heads, const ScoreRow& row) {
  std::vector<float> s(kHeadDim, 0.0f);
  for (int t = 0; t < row.n_q; ++t) {
    const bf16_bits* p = iq + (static_cast<std::int64_t>(row.q_tok0 + t) * kv_heads + row.kv_head) * kHeadDim;
    for (int i = 0; i < kHeadDim; ++i) s[static_cast<size_t>(i)] += bf16_to_float(p[i]);
  }
  for (auto& x : s) x = round_bf16(x);
  return s;
}

std::vector<float> scores(const bf16_bits* iq, const bf16_bits* reps, int kv_heads, const BlockTable& t,
                          const std::vector<ScoreRow>& rows, int stride) {
  std::vector<float> out(rows.size() * static_cast<size_t>(stride), std::numeric_limits<float>::quiet_NaN());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto qs = summed_query(iq, kv_heads, rows[i]);
    VecD q;
    for (int d = 0; d < kHeadDim; ++d) q(d) = qs[static_cast<size_t>(d)];
    for (int j = 0; j < rows[i].n_e; ++j) {
      const int pid = t.ids[static_cast<std::int64_t>(rows[i].seq) * t.stride + j];
      const VecD rp = load_row(reps + (static_cast<std::int64_t>(pid) * kv_heads + rows[i].kv_head) * kHeadDim);
      out[i * static_cast<size_t>(stride) + static_cast<size_t>(j)] = static_cast<float>(q.dot(rp));
    }
  }
  return out;
}

std::vector<int> topk(const float* s, int n_e, int k) {
  std::vector<int> idx(static_cast<size_t>(n_e));
  std::iota(idx.begin(), idx.end(), 0);
  if (k >= n_e) return idx;
  auto better = [&](int a, int b) { return s[a] > s[b] || (s[a] == s[b] && a < b); };
  std::nth_element(idx.begin(), idx.begin() + k, idx.end(), better);
  idx.resize(static_cast<size_t>(k));
  std::sort(idx.begin(), idx.end());
  return idx;
}

std::vector<int> sparse_row(const float* s, const TopkRow& row, int k, const BlockTable& t) {
  std::vector<int> out;
  const int* ids = t.ids + static_cast<std::int64_t>(row.seq) * t.stride;
  for (int j : topk(s, row.n_e, k)) out.push_back(ids[j]);
  for (int j = row.n_e; j < row.list_end; ++j) out.push_back(ids[j]);
  return out;
}

void attention(const bf16_bits* q, const PagedKV& kv, const BlockTable& table, const BlockTable& sparse,
               const std::vector<AttnWork>& work, int h_q, int r, float scale, std::vector<float>& o) {
  if (scale == 0.0f) scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  for (const auto& w : work) {
    const BlockTable& lt = w.list_src == 0 ? table : sparse;
    const int* list = lt.ids + static_cast<std::int64_t>(w.list_row) * lt.stride;
    // gather the keys/values once per work (the reference may copy; the kernel does not)
    const int ntok = w.n_pages * kPageTokens;
    Eigen::MatrixXd K(ntok, kHeadDim), V(ntok, kHeadDim);
    std::vector<int> keypos(static_cast<size_t>(ntok), -1);  // -1: always visible
    for (int i = 0; i < w.n_pages; ++i)
      for (int t = 0; t < kPageTokens; ++t) {
        const int row = i * kPageTokens + t;
        K.row(row) = load_row(kv.k + kv_offset(list[i], t, kv.kv_heads, w.kv_head)).transpose();
        V.row(row) = load_row(kv.v + kv_offset(list[i], t, kv.kv_heads, w.kv_head)).transpose();
        if (i >= w.mask_from) keypos[static_cast<size_t>(row)] = w.mask_tok0 + (i - w.mask_from) * kPageTokens + t;
      }
    for (int p = 0; p < w.n_pos; ++p)
      for (int hh = 0; hh < r; ++hh) {
        const int hq = w.kv_head * r + hh;
        const std::int64_t qoff = (static_cast<std::int64_t>(w.q_tok0 + p) * h_q + hq) * kHeadDim;
        const VecD qv = load_row(q + qoff);
        Eigen::VectorXd s = K * qv * static_cast<double>(scale);
        const int qpos = w.q_pos0 + p;
        double mx = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < ntok; ++j) {
          if (keypos[static_cast<size_t>(j)] > qpos) s(j) = -std::numeric_limits<double>::infinity();
          mx = std::max(mx, s(j));
        }
        Eigen::VectorXd e = (s.array() - mx).exp();
        const double l = e.sum();
        const VecD out = (V.transpose() * e) / l;
        for (int d = 0; d < kHeadDim; ++d) o[static_cast<size_t>(qoff + d)] = static_cast<float>(out(d));
      }
  }
}

StepResult cisa_step(const CisaPlan& plan, const StepBatch& b, const bf16_bits* q, const bf16_bits* iq,
                     const PagedKV& kv, const BlockTable& table, float scale) {
  StepResult res;
  const auto repf = representatives(kv);
  std::vector<bf16_bits> reps(repf.size());
  for (size_t i = 0; i < repf.size(); ++i) reps[i] = float_to_bf16(repf[i]);
  const int stride = std::max(plan.score_stride, 1);
  res.scores = scores(iq, reps.data(), kv.kv_heads, table, plan.score_rows, stride);
  for (float& x : res.scores) x = score_from_key16(score_key16(x));  // the kernels select on 16-bit keys
  res.sparse.assign(plan.topk_rows.size() * static_cast<size_t>(plan.sparse_stride), -1);
  for (size_t i = 0; i < plan.topk_rows.size(); ++i) {
    const auto row = sparse_row(res.scores.data() + i * static_cast<size_t>(stride), plan.topk_rows[i],
                                plan.budget, table);
    std::copy(row.begin(), row.end(), res.sparse.begin() + static_cast<std::ptrdiff_t>(i * static_cast<size_t>(plan.sparse_stride)));
  }
  const int h_q = b.kv_heads * b.r;
  res.o.assign(static_cast<size_t>(plan.total_tokens) * h_q * kHeadDim, 0.0f);
  BlockTable sp{res.sparse.data(), plan.sparse_stride};
  attention(q, kv, table, sp, plan.work, h_q, b.r, scale, res.o);
  return res;
}

}  // namespace cisa::kernels::ref
