// A minimal parallel loop for independent work items whose results land in per-index slots, so that the
// output does not depend on the thread count (compare's cells, replay's (policy, capacity) runs).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace moesim {

// Calls f(i) for every i in [0, n) on min(threads, n) threads (threads 0 is treated as 1; 1 runs inline).
// Items are handed out through an atomic index. When a call throws, no new items start; after all threads
// stop, the exception of the lowest index among those that threw is rethrown.
template <class F>
void parallel_for(size_t n, unsigned threads, F&& f) {
  const size_t t = std::min<size_t>(std::max(1u, threads), n);
  if (t <= 1) {
    for (size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex m;
  size_t err_index = n;
  std::exception_ptr err;
  auto worker = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      const size_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        f(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (i < err_index) {
          err_index = i;
          err = std::current_exception();
        }
        stop = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(t - 1);
  for (size_t k = 1; k < t; ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (err) std::rethrow_exception(err);
}

}  // namespace moesim
