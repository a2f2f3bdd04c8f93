#include "catch.hpp"
#include "helpers.hpp"

using namespace cisa::route;
using route_test::near;

namespace {
// Keys: each page's tokens share one random centroid plus `token_noise`; q rows set later.
LayerActivations page_coherent(std::int64_t tokens, std::int64_t positions, int q_heads, int d,
                               double token_noise, unsigned seed) {
  LayerActivations a = route_test::random_acts(tokens, positions, q_heads, 1, d, seed);
  std::mt19937 rng(seed + 1);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> centroid(static_cast<std::size_t>(d));
  for (std::int64_t t = 0; t < tokens; ++t) {
    if (t % 16 == 0)
      for (auto& v : centroid) v = n(rng);
    for (int i = 0; i < d; ++i)
      a.k[static_cast<std::size_t>(t * d + i)] =
          centroid[static_cast<std::size_t>(i)] + static_cast<float>(token_noise) * n(rng);
  }
  return a;
}
}  // namespace

TEST_CASE("init: the true generating projection has zero KL and wins", "[route]") {
  // Every head attends with the same true query and keys are constant within a page, so the
  // dense page mass is exactly softmax_j(q_true . rep_j / sqrt(d)).
  const int d = 16, r = 4;
  LayerActivations a = page_coherent(1024, 24, r, d, 0.0, 21);
  std::mt19937 rng(3);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> truth(static_cast<std::size_t>(24 * d));
  for (auto& v : truth) v = 1.5f * n(rng);
  for (std::int64_t p = 0; p < 24; ++p)
    for (int h = 0; h < r; ++h)
      for (int i = 0; i < d; ++i)
        a.q[static_cast<std::size_t>((p * r + h) * d + i)] = truth[static_cast<std::size_t>(p * d + i)];
  const PageMass m = dense_page_mass(a, 16);
  const Representatives reps = make_representatives(a, 16, RepRule::mean);
  std::int64_t used = 0;
  const double kl_true = candidate_kl(m, a, reps, 0, truth.data(), &used);
  CHECK(used == 24);
  CHECK(kl_true < 1e-4);
  // Perturbed, scaled and unrelated candidates all do worse.
  for (double eps : {0.1, 0.5, 2.0}) {
    std::vector<float> other = truth;
    for (auto& v : other) v += static_cast<float>(eps) * n(rng);
    CHECK(candidate_kl(m, a, reps, 0, other.data()) > kl_true + 1e-4);
  }
  std::vector<float> scaled = truth;
  for (auto& v : scaled) v *= 0.5f;
  CHECK(candidate_kl(m, a, reps, 0, scaled.data()) > kl_true + 1e-4);
}

TEST_CASE("init: a head equal to the generating projection beats the other heads", "[route]") {
  // Dense mass from the true query (heads 1..3 attend like it); the candidate list is
  // evaluated on a copy whose heads 1..3 carry other projections.
  const int d = 16, r = 4;
  LayerActivations a = page_coherent(1024, 24, r, d, 0.3, 33);
  std::mt19937 rng(5);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (std::int64_t p = 0; p < 24; ++p)
    for (int i = 0; i < d; ++i) {
      const float v = 1.5f * n(rng);
      for (int h = 0; h < r; ++h) a.q[static_cast<std::size_t>((p * r + h) * d + i)] = v;
    }
  const PageMass m = dense_page_mass(a, 16);
  LayerActivations cand = a;
  for (std::int64_t p = 0; p < 24; ++p)
    for (int h = 1; h < r; ++h)
      for (int i = 0; i < d; ++i) cand.q[static_cast<std::size_t>((p * r + h) * d + i)] += 1.0f * n(rng);
  const Representatives reps = make_representatives(cand, 16, RepRule::mean);
  const InitResult res = initialise_indexer(m, cand, reps);
  REQUIRE(res.candidates == r + 1);
  CHECK(res.chosen[0] == 0);
  for (int c = 1; c <= r; ++c) CHECK(res.kl[0] < res.kl[static_cast<std::size_t>(c)]);
}

TEST_CASE("init: with zero-sum head deviations the mean (= the true projection) wins", "[route]") {
  // q_h = W_true x + E_h x with sum_h E_h = 0, so the row-wise mean projection is W_true.
  const int d = 16, r = 4, hidden = 12;
  const std::int64_t P = 32;
  LayerActivations a = page_coherent(2048, P, r, d, 0.3, 44);
  std::mt19937 rng(9);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> wtrue(static_cast<std::size_t>(d * hidden)), e(static_cast<std::size_t>(r * d * hidden));
  for (auto& v : wtrue) v = 0.5f * n(rng);
  for (auto& v : e) v = 0.15f * n(rng);
  for (int i = 0; i < d * hidden; ++i) {  // make the deviations sum to zero over heads
    float s = 0;
    for (int h = 0; h < r; ++h) s += e[static_cast<std::size_t>(h * d * hidden + i)];
    for (int h = 0; h < r; ++h) e[static_cast<std::size_t>(h * d * hidden + i)] -= s / r;
  }
  a.hidden = hidden;
  a.x.resize(static_cast<std::size_t>(P * hidden));
  for (auto& v : a.x) v = n(rng);
  a.w_q.resize(static_cast<std::size_t>(r * d * hidden));
  for (int h = 0; h < r; ++h)
    for (int i = 0; i < d * hidden; ++i)
      a.w_q[static_cast<std::size_t>(h * d * hidden + i)] =
          wtrue[static_cast<std::size_t>(i)] + e[static_cast<std::size_t>(h * d * hidden + i)];
  for (std::int64_t p = 0; p < P; ++p)
    for (int h = 0; h < r; ++h)
      for (int i = 0; i < d; ++i) {
        double s = 0;
        for (int j = 0; j < hidden; ++j)
          s += double(a.w_q[static_cast<std::size_t>((h * d + i) * hidden + j)]) * a.x[static_cast<std::size_t>(p * hidden + j)];
        a.q[static_cast<std::size_t>((p * r + h) * d + i)] = static_cast<float>(s);
      }
  a.validate();
  const PageMass m = dense_page_mass(a, 16);
  const Representatives reps = make_representatives(a, 16, RepRule::mean);
  const InitResult res = initialise_indexer(m, a, reps);
  CHECK(res.chosen[0] == r);
  for (int c = 0; c < r; ++c) CHECK(res.kl[static_cast<std::size_t>(r)] < res.kl[static_cast<std::size_t>(c)]);

  // The exported projection of the chosen candidate is W_true, and W_idx x = the index query.
  const std::vector<float> w = index_projection(a, res.chosen);
  REQUIRE(w.size() == wtrue.size());
  for (std::size_t i = 0; i < w.size(); ++i) CHECK(near(w[i], wtrue[i], 1e-5));
  const std::vector<float> iq = index_queries(a, res.chosen);
  for (std::int64_t p = 0; p < P; ++p)
    for (int i = 0; i < d; ++i) {
      double s = 0;
      for (int j = 0; j < hidden; ++j)
        s += double(w[static_cast<std::size_t>(i * hidden + j)]) * a.x[static_cast<std::size_t>(p * hidden + j)];
      CHECK(near(s, iq[static_cast<std::size_t>(p * d + i)], 1e-4));
    }
}

TEST_CASE("init: hand-computed KL on two pages", "[route]") {
  // d = 1, one head, c = 2, position 4 (N = 2 full pages). Keys: page 0 = 0, page 1 = ln 3
  // (token 4 on page 2, key 0). Dense over tokens 0..4 with q = 1: weights 1,1,3,3,1; on the
  // full pages 2:6 -> p = (0.25, 0.75). Candidate iq = 1: softmax(0, ln 3) = (0.25, 0.75), KL 0.
  // Candidate iq = 0: (0.5, 0.5), KL = 0.25 ln 0.5 + 0.75 ln 1.5.
  LayerActivations a;
  a.tokens = 5;
  a.q_heads = a.kv_heads = a.head_dim = 1;
  a.positions = {4};
  a.q = {1.0f};
  const float l3 = std::log(3.0f);
  a.k = {0.0f, 0.0f, l3, l3, 0.0f};
  const PageMass m = dense_page_mass(a, 2);
  const Representatives reps = make_representatives(a, 2, RepRule::mean);
  const float one = 1.0f, zero = 0.0f;
  CHECK(near(candidate_kl(m, a, reps, 0, &one), 0.0, 1e-6));
  CHECK(near(candidate_kl(m, a, reps, 0, &zero), 0.25 * std::log(0.5) + 0.75 * std::log(1.5), 1e-6));
}
