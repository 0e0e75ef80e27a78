// Bounds and validation of the cluster's expert RPC (exec/cluster_rpc.proto), apart from the server so that
// the fuzz target checks exactly what the server checks, without a server. Nothing of a request is used
// before validate() passed: ranges index the weights, sizes index the activations.
//
// Message bounds: gRPC refuses (RESOURCE_EXHAUSTED) any message over max_message_bytes() before it is parsed,
// so a peer cannot make a server allocate more than one request of the largest legal size plus one expert's
// weights; validate() then checks that the parsed request is self-consistent.
#pragma once

#include <iterator>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <grpcpp/support/status.h>

#include "exec/cluster_control.pb.h"
#include "exec/cluster_rpc.pb.h"

namespace moesim::exec {

// The model a server computes: its routed experts' FFN shape (kernels/expert_ffn.h).
struct ModelShape {
  uint32_t layers = 0;
  uint32_t experts = 0;  // routed experts per layer
  uint32_t hidden = 0;
  uint32_t inter = 0;  // the expert's intermediate size
  uint64_t weight_elements() const { return uint64_t{inter} * hidden; }  // of each of gate, up, down
  uint64_t expert_bytes() const { return 3 * weight_elements() * 2; }    // BF16 gate + up + down
};

// Throws moesim::Error when a dimension is 0 or the shape is too large for one message.
void check_shape(const ModelShape& shape);

// What one message may hold: max_tokens tokens of activations (FP32) and one expert's weights, plus the
// fields around them (a work costs at most 18 bytes encoded, a timing 18). Below 2 GiB (gRPC's int limit) or
// moesim::Error.
uint64_t max_message_bytes(const ModelShape& shape, uint32_t max_tokens);

// Refuses a request the server cannot serve, with INVALID_ARGUMENT and a message naming the field path
// ("work[2].expert: 70 >= 64 experts"): layer < layers; at least one work; per work expert < experts,
// gpu < units, tokens > 0; total tokens <= max_tokens; activations of total tokens x hidden x 4 bytes. Then,
// when `held` is given, every work's expert must be held (held(layer, expert)); one that is not gives
// FAILED_PRECONDITION naming it: the caller's placement is stale, not its request malformed.
grpc::Status validate(const cluster::ComputeRequest& req, const ModelShape& shape, uint32_t units,
                      uint32_t max_tokens, const std::function<bool(uint32_t, uint32_t)>& held = {});
// layer < layers, expert < experts, gate/up/down of weight_elements() x 2 bytes each.
grpc::Status validate(const cluster::LoadRequest& req, const ModelShape& shape);
grpc::Status validate(const cluster::DropRequest& req, const ModelShape& shape);
// The coordinator's calls (exec/cluster_control.proto), before a server acts on them: `servers` in the run,
// `units` of this server, at most `max_tokens` tokens (the activations a server makes for them are bounded
// by it). INVALID_ARGUMENT naming the field.
grpc::Status validate(const cluster::DenseRequest& req, uint32_t units, uint32_t max_tokens);
grpc::Status validate(const cluster::InvokeRequest& req, const ModelShape& shape, uint32_t servers,
                      uint32_t max_tokens);
grpc::Status validate(const cluster::PushRequest& req, const ModelShape& shape, uint32_t servers);

// The secret's metadata key, and a comparison whose time does not depend on where the strings differ (a
// peer cannot guess the secret byte by byte from response times); only the lengths may leak.
inline constexpr char kSecretMetadataKey[] = "x-moesim-secret";
bool secret_equal(std::string_view given, std::string_view secret);
// Whether a call's metadata (a server context's client_metadata()) carries exactly one kSecretMetadataKey
// equal to `secret`: every service of the cluster admits a call by it.
template <class Metadata>
bool carries_secret(const Metadata& md, std::string_view secret) {
  const auto range = md.equal_range(kSecretMetadataKey);
  if (range.first == md.end() || std::next(range.first) != range.second) return false;
  return secret_equal(std::string_view(range.first->second.data(), range.first->second.size()), secret);
}

}  // namespace moesim::exec
