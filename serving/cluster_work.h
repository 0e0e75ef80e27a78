// The work of the cluster simulation's requests (serving/cluster_serving.h), read once from the servers' traces: each
// sequence as a list of passes, a pass being what one layer does for its tokens -- the dense part, then each
// routed expert with the tokens routed to it.
//
// A sequence's prefill records (canonical order: by layer, then prompt position) become one pass per layer
// over all its prompt tokens, each expert with the number of prompt tokens that picked it (experts in id
// order); each decode record becomes a pass of one token (experts in rank order). Its first token is out
// after the prompt's last pass, or, without a prompt, after the first generated token's last layer.
#pragma once

#include <cstdint>
#include <vector>

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

}  // namespace moesim::serving
