// The skeleton every replay sweep shares (cache_replay.h, routing_replay.h, prefetch_replay.h): each
// configuration is prepared -- validated, so a bad one fails the sweep before any work is done -- then the
// runs go to up to `threads` threads (base/parallel.h; 0 = std::thread::hardware_concurrency()). Results come
// in the order of `configs` whatever the thread count: runs share nothing mutable, and randomized policies
// draw from their own seeded moesim::Rng.
#pragma once

#include <algorithm>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "base/parallel.h"

namespace moesim::replay {

// prepare(config) -> what the run needs (thrown errors abort the sweep); run(config, prepared) -> result.
// on_done (progress) is called once per finished configuration, from the worker threads.
template <typename Config, typename Prepare, typename Run>
auto replay_sweep_runs(const std::vector<Config>& configs, unsigned threads,
                       const std::function<void()>& on_done, Prepare&& prepare, Run&& run) {
  using Prepared = decltype(prepare(configs.front()));
  using Result = decltype(run(configs.front(), std::declval<const Prepared&>()));
  std::vector<Prepared> prepared;
  prepared.reserve(configs.size());
  for (const auto& c : configs) prepared.push_back(prepare(c));
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<Result> out(configs.size());
  parallel_for(configs.size(), threads, [&](size_t i) {
    out[i] = run(configs[i], prepared[i]);
    if (on_done) on_done();
  });
  return out;
}

}  // namespace moesim::replay
