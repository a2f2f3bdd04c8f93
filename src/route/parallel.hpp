// Minimal thread pool-free parallel loop (std::thread + atomic counter). Internal.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace cisa::route::detail {

// Calls fn(i, worker) for i in [0, n) on up to `threads` threads; rethrows the first exception.
template <class Fn>
void parallel_for(std::int64_t n, int threads, Fn&& fn) {
  if (n <= 0) return;
  const int t = static_cast<int>(std::min<std::int64_t>(std::max(threads, 1), n));
  if (t == 1) {
    for (std::int64_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&](int worker) {
    try {
      for (std::int64_t i = next++; i < n; i = next++) fn(i, worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next = n;
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(t - 1));
  for (int w = 1; w < t; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace cisa::route::detail
