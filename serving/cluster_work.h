// The work of the cluster simulation's requests (serving/cluster_serving.h), read once from the servers'
// traces: each sequence as a list of passes, a pass being what one layer does for its tokens -- the dense
// part, then each routed expert with the tokens routed to it.
//
// A sequence's prefill records (canonical order: by layer, then prompt position) become one pass per layer
// over all its prompt tokens, each expert with the number of prompt tokens that picked it (experts in id
// order); each decode record becomes a pass of one token (experts in rank order). Its first token is out
// after the prompt's last pass, or, without a prompt, after the first generated token's last layer.
#pragma once

#include <cstdint>
#include <vector>

#include "base/rng.h"
#include "serving/cluster_serving.h"

namespace moesim::serving {

struct ClusterPass {
  uint16_t layer = 0;
  uint32_t tokens = 0;
  uint32_t begin = 0, end = 0;  // its experts: ClusterWork::pass_expert/pass_tokens[begin, end)
};

struct SequencePlan {
  uint32_t pass_begin = 0, pass_end = 0;  // ClusterWork::passes
  uint32_t first_token_pass = 0;          // relative to pass_begin: after this pass the first token is out
  uint32_t tokens_after_first = 0;        // generated tokens after the first (TPOT's divisor)
  uint64_t tokens = 0;                    // prompt + generated
};

struct ClusterWork {
  std::vector<ClusterPass> passes;
  std::vector<uint16_t> pass_expert;
  std::vector<uint32_t> pass_tokens;
  std::vector<SequencePlan> plans;
  std::vector<std::vector<uint32_t>> server_plans;  // [server]: its sequences (plans), in trace order
};

// Throws moesim::Error naming the server when its traces hold no sequence.
ClusterWork build_cluster_work(const ClusterInput& in);

// A cluster system's completion token (ClusterPlatform's callbacks carry one uint32_t): the kind of event in
// the top bits, the index of its request, pass or move below. Ids must stay below 2^kClusterTokenKindShift.
constexpr int kClusterTokenKindShift = 28;
constexpr uint32_t kClusterTokenIdMask = (uint32_t{1} << kClusterTokenKindShift) - 1;
inline uint32_t cluster_token(uint32_t kind, uint64_t id) {
  return (kind << kClusterTokenKindShift) | static_cast<uint32_t>(id);
}
inline uint32_t cluster_token_kind(uint32_t token) {
  return token >> kClusterTokenKindShift;
}
inline uint32_t cluster_token_id(uint32_t token) {
  return token & kClusterTokenIdMask;
}

// What every cluster system refuses before it serves: no servers, a platform of another size, a server
// without GPU, a duration or bucket that is not positive (UsageError), arrivals that would bring more
// requests than the simulation keeps (each request's state is kept until the end).
void check_cluster_run(const ClusterInput& in, const ClusterOptions& opt, const ClusterPlatform& platform);

// The requests' arrivals and sequences, as every cluster system draws them: server n's Poisson intervals from
// Rng(seed).split(2n), its random sequence draws from split(2n + 1); replayed timestamps in their order.
class ClusterArrivals {
 public:
  ClusterArrivals(const ClusterInput& in, const ClusterOptions& opt);
  // Server n's next arrival time, or a negative value when none comes before the duration ends. A Poisson
  // interval counts from the last arrival's own time, not from when the platform woke for it: a real clock
  // wakes late, and drawing from now() would drift the arrivals and lose some of the duration's.
  double next(uint32_t n);
  // The sequence (an index of w.plans) of server n's next request: round robin over its sequences, or a
  // seeded draw (ClusterOptions::random_draw).
  uint32_t draw(uint32_t n, const ClusterWork& w);

 private:
  const ClusterInput& in_;
  const ClusterOptions& opt_;
  std::vector<Rng> arrival_rng_, draw_rng_;
  std::vector<uint64_t> arrivals_, next_timestamp_;
  std::vector<double> last_arrival_;  // [server] the last Poisson arrival's drawn time
};

}  // namespace moesim::serving
