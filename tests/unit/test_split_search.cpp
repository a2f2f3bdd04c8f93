// The split-KV searches of traffic.cpp (wave_split, fa2_split_count) stop early / take one pass
// (issue 12, CLI speed): they must choose exactly what the full searches choose. The full
// searches are kept here verbatim (as they were at 37c4f7d) and compared on the keys a sweep
// produces and on many random ones.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "model/traffic.hpp"

namespace cisa::detail {
std::pair<int, double> wave_split_of(double works, double slots, double tiles);
int fa2_split_count_of(double blocks, double kv_tokens, double head_dim, const KernelShape& sh);
}  // namespace cisa::detail

namespace {

// ---- the full searches (reference) ----
std::pair<int, double> wave_split_full(double works, double slots, double tiles) {
  constexpr double kFixed = 4, kPartial = 36;
  constexpr int kMaxSplits = 64, kMaxTail = 16, kMinTiles = 64;
  auto cost = [&](int n) {
    return std::ceil(works * n / slots) * (std::ceil(tiles / n) + kFixed) + (n > 1 ? kPartial * works * n / slots : 0.0);
  };
  const double c1 = cost(1);
  std::pair<int, double> best{1, 0.0};
  double best_cost = c1;
  for (int n = 2; n <= kMaxSplits && std::floor(tiles / n) >= kMinTiles; ++n)
    if (cost(n) < best_cost) best_cost = cost(n), best.first = n;
  if (best_cost >= 0.99 * c1) best = {1, 0.0}, best_cost = c1;
  const double full_waves = std::floor(works / slots), k = works - full_waves * slots;
  if (full_waves >= 1 && k > 0)
    for (int n = 2; n <= kMaxTail && std::floor(tiles / n) >= kMinTiles; ++n) {
      const double c = full_waves * (tiles + kFixed) + std::ceil(k * n / slots) * (std::ceil(tiles / n) + kFixed) +
                       kPartial * k * n / slots;
      if (c < best_cost && c < 0.99 * c1) best_cost = c, best = {n, full_waves * slots};
    }
  return best;
}

int fa2_split_count_full(double blocks, double kv_tokens, double head_dim, const cisa::KernelShape& sh) {
  const double slots = 2.0 * sh.sms;
  if (blocks <= 0 || blocks >= 0.8 * slots) return 1;
  const double block_n = head_dim <= 64 ? 256 : head_dim <= 128 ? 128 : 64;
  const double n_blocks = std::ceil(kv_tokens / block_n);
  const int most = static_cast<int>(std::min({128.0, slots, n_blocks}));
  auto eligible = [&](int n) { return n == 1 || std::ceil(n_blocks / n) != std::ceil(n_blocks / (n - 1)); };
  auto efficiency = [&](int n) {
    const double waves = blocks * n / slots;
    return waves / std::ceil(waves);
  };
  double best = 0;
  for (int n = 1; n <= most; ++n)
    if (eligible(n)) best = std::max(best, efficiency(n));
  for (int n = 1; n <= most; ++n)
    if (eligible(n) && efficiency(n) >= 0.85 * best) return n;
  return 1;
}

const std::vector<int> kSms = {1, 2, 7, 16, 46, 66, 78, 80, 108, 114, 128, 132, 144, 148, 160, 170, 264};

}  // namespace

TEST_CASE("wave_split: the early-stopping search chooses what the full search does", "[traffic][split]") {
  std::size_t checked = 0, split = 0, tail = 0;
  auto check = [&](double works, double slots, double tiles) {
    const auto want = wave_split_full(works, slots, tiles);
    const auto got = cisa::detail::wave_split_of(works, slots, tiles);
    if (got != want) {
      INFO("works " << works << ", slots " << slots << ", tiles " << tiles);
      CHECK(got.first == want.first);
      CHECK(got.second == want.second);
    }
    ++checked;
    split += want.first > 1;
    tail += want.second > 0;
  };
  // The sweep's keys: slots = SMs or 2 x SMs; works past half the slots; tiles = ceil(tokens / 64).
  for (int sms : kSms)
    for (double slots : {1.0 * sms, 2.0 * sms}) {
      for (double works = std::ceil(slots / 2); works <= 6 * slots; works += 1)
        for (double tiles : {1.0, 63.0, 64.0, 127.0, 128.0, 129.0, 200.0, 255.0, 256.0, 257.0, 705.0, 1024.0,
                             2048.0, 4095.0, 4096.0, 8193.0, 18432.0, 20480.0, 65536.0, 1e6})
          check(works, slots, tiles);
      for (double tiles = 1; tiles <= 5000; tiles += 1) check(std::ceil(slots * 0.75), slots, tiles);
    }
  // Random keys: integer and fractional works, tiles over many decades.
  std::mt19937_64 rng(12);
  std::uniform_int_distribution<int> pick_sms(0, static_cast<int>(kSms.size()) - 1);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 400000; ++i) {
    const double slots = kSms[static_cast<std::size_t>(pick_sms(rng))] * (u(rng) < 0.5 ? 1.0 : 2.0);
    double works = slots * std::exp(u(rng) * std::log(200.0)) / 2.0;
    if (u(rng) < 0.7) works = std::ceil(works);
    double tiles = std::ceil(std::exp(u(rng) * std::log(4e6)));
    if (u(rng) < 0.05) tiles = u(rng) * 1e4;  // not an integer (callers pass ceil'd values)
    check(works, slots, tiles);
  }
  INFO(checked << " keys, " << split << " split, " << tail << " tail splits");
  CHECK(split > checked / 10);
  CHECK(tail > checked / 100);
}

TEST_CASE("fa2_split_count: the one-pass search chooses what the two passes do", "[traffic][split]") {
  std::size_t checked = 0, split = 0;
  cisa::KernelShape sh;
  auto check = [&](double blocks, double kv, double d) {
    const int want = fa2_split_count_full(blocks, kv, d, sh);
    const int got = cisa::detail::fa2_split_count_of(blocks, kv, d, sh);
    if (got != want) {
      INFO("blocks " << blocks << ", kv " << kv << ", head_dim " << d << ", sms " << sh.sms);
      CHECK(got == want);
    }
    ++checked;
    split += want > 1;
  };
  for (int sms : kSms) {
    sh.sms = sms;
    for (double d : {64.0, 96.0, 128.0, 192.0, 256.0})
      for (double blocks = 0; blocks <= 1.7 * sms; blocks += 1)
        for (double kv : {1.0, 100.0, 128.0, 129.0, 1000.0, 4096.0, 16384.0, 65535.0, 131072.0, 131584.0, 262144.0,
                          524800.0, 1048576.0, 1310720.0, 4194304.0, 1e8})
          check(blocks, kv, d);
  }
  std::mt19937_64 rng(13);
  std::uniform_int_distribution<int> pick_sms(0, static_cast<int>(kSms.size()) - 1);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 300000; ++i) {
    sh.sms = kSms[static_cast<std::size_t>(pick_sms(rng))];
    double blocks = u(rng) * 1.7 * sh.sms;
    if (u(rng) < 0.8) blocks = std::ceil(blocks);
    const double kv = std::ceil(std::exp(u(rng) * std::log(2e7)));
    const double d = u(rng) < 0.7 ? 128.0 : (u(rng) < 0.5 ? 64.0 : 256.0);
    check(blocks, kv, d);
  }
  INFO(checked << " keys, " << split << " split");
  CHECK(split > checked / 10);
}
