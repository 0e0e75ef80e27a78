#include "exec/rpc_limits.h"

#include <algorithm>
#include <limits>

#include "base/error.h"

namespace moesim::exec {
namespace {

grpc::Status invalid(const std::string& field, const std::string& what) {
  return {grpc::StatusCode::INVALID_ARGUMENT, field + ": " + what};
}

std::string ge(uint64_t value, uint64_t bound, const char* unit) {
  return std::to_string(value) + " >= " + std::to_string(bound) + " " + unit;
}

grpc::Status check_expert(uint32_t layer, uint32_t expert, const ModelShape& shape) {
  if (layer >= shape.layers) return invalid("layer", ge(layer, shape.layers, "layers"));
  if (expert >= shape.experts) return invalid("expert", ge(expert, shape.experts, "experts"));
  return grpc::Status::OK;
}

// A request's works: each expert in range, on a unit below `units`, with tokens; their tokens (`total`) at
// most max_tokens.
grpc::Status check_works(const google::protobuf::RepeatedPtrField<cluster::Work>& works, const ModelShape& shape,
                         uint32_t units, uint32_t max_tokens, uint64_t& total) {
  if (works.empty()) return invalid("work", "no work");
  for (int i = 0; i < works.size(); ++i) {
    const auto& w = works.Get(i);
    const std::string at = "work[" + std::to_string(i) + "].";
    if (w.expert() >= shape.experts) return invalid(at + "expert", ge(w.expert(), shape.experts, "experts"));
    if (w.gpu() >= units) return invalid(at + "gpu", ge(w.gpu(), units, "units"));
    if (w.tokens() == 0) return invalid(at + "tokens", "0 (must be > 0)");
    total += w.tokens();  // at most 2^31 works of < 2^32 tokens: no overflow
    if (total > max_tokens)
      return invalid(at + "tokens", "the works' tokens add up to " + std::to_string(total) + " > " +
                                        std::to_string(max_tokens) + " tokens per request");
  }
  return grpc::Status::OK;
}

grpc::Status check_weight(const std::string& bytes, const char* field, const ModelShape& shape) {
  const uint64_t want = shape.weight_elements() * 2;
  if (bytes.size() != want)
    return invalid(field, std::to_string(bytes.size()) + " bytes, expected " + std::to_string(want) +
                              " (" + std::to_string(shape.weight_elements()) + " BF16 values)");
  return grpc::Status::OK;
}

}  // namespace

void check_shape(const ModelShape& s) {
  if (s.layers == 0 || s.experts == 0 || s.hidden == 0 || s.inter == 0)
    throw Error("model shape: layers, experts, hidden and inter must be > 0 (got " + std::to_string(s.layers) +
                ", " + std::to_string(s.experts) + ", " + std::to_string(s.hidden) + ", " +
                std::to_string(s.inter) + ")");
  (void)max_message_bytes(s, 1);
}

uint64_t max_message_bytes(const ModelShape& shape, uint32_t max_tokens) {
  constexpr uint64_t kSlack = 64 * 1024, kPerToken = 2 * 18;  // a work and a timing per token at most
  const uint64_t bytes = uint64_t{max_tokens} * (uint64_t{shape.hidden} * 4 + kPerToken) +
                         shape.expert_bytes() + kSlack;
  if (bytes > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    throw Error("expert RPC: a message of " + std::to_string(max_tokens) + " tokens of hidden " +
                std::to_string(shape.hidden) + " and one expert of " + std::to_string(shape.expert_bytes()) +
                " bytes needs " + std::to_string(bytes) + " bytes, over gRPC's 2 GiB message limit");
  return bytes;
}

grpc::Status validate(const cluster::ComputeRequest& req, const ModelShape& shape, uint32_t units,
                      uint32_t max_tokens, const std::function<bool(uint32_t, uint32_t)>& held) {
  if (req.layer() >= shape.layers) return invalid("layer", ge(req.layer(), shape.layers, "layers"));
  uint64_t total = 0;
  if (grpc::Status st = check_works(req.work(), shape, units, max_tokens, total); !st.ok()) return st;
  const uint64_t want = total * shape.hidden * 4;
  if (req.activations().size() != want)
    return invalid("activations", std::to_string(req.activations().size()) + " bytes, expected " +
                                      std::to_string(want) + " (" + std::to_string(total) + " tokens x " +
                                      std::to_string(shape.hidden) + " hidden x 4)");
  if (held)
    for (int i = 0; i < req.work_size(); ++i)
      if (!held(req.layer(), req.work(i).expert()))
        return {grpc::StatusCode::FAILED_PRECONDITION,
                "work[" + std::to_string(i) + "].expert: layer " + std::to_string(req.layer()) + " expert " +
                    std::to_string(req.work(i).expert()) + " is not held by this server"};
  return grpc::Status::OK;
}

grpc::Status validate(const cluster::LoadRequest& req, const ModelShape& shape) {
  if (auto s = check_expert(req.layer(), req.expert(), shape); !s.ok()) return s;
  if (auto s = check_weight(req.gate(), "gate", shape); !s.ok()) return s;
  if (auto s = check_weight(req.up(), "up", shape); !s.ok()) return s;
  return check_weight(req.down(), "down", shape);
}

grpc::Status validate(const cluster::DropRequest& req, const ModelShape& shape) {
  return check_expert(req.layer(), req.expert(), shape);
}

grpc::Status validate(const cluster::DenseRequest& req, uint32_t units, uint32_t max_tokens) {
  if (req.unit() >= units) return invalid("unit", ge(req.unit(), units, "units"));
  if (req.tokens() == 0 || req.tokens() > max_tokens)
    return invalid("tokens", std::to_string(req.tokens()) + " not in [1, " + std::to_string(max_tokens) + "]");
  return grpc::Status::OK;
}

grpc::Status validate(const cluster::InvokeRequest& req, const ModelShape& shape, uint32_t servers,
                      uint32_t max_tokens) {
  if (req.peer() >= servers) return invalid("peer", ge(req.peer(), servers, "servers"));
  if (req.layer() >= shape.layers) return invalid("layer", ge(req.layer(), shape.layers, "layers"));
  uint64_t total = 0;
  // The units are the peer's, which its ExpertService checks.
  return check_works(req.work(), shape, UINT32_MAX, max_tokens, total);
}

grpc::Status validate(const cluster::PushRequest& req, const ModelShape& shape, uint32_t servers) {
  if (req.peer() >= servers) return invalid("peer", ge(req.peer(), servers, "servers"));
  return check_expert(req.layer(), req.expert(), shape);
}

bool secret_equal(std::string_view given, std::string_view secret) {
  // Every byte of the longer string is visited whatever the contents, and the lengths are folded in.
  const size_t n = std::max(given.size(), secret.size());
  unsigned diff = given.size() == secret.size() ? 0u : 1u;
  for (size_t i = 0; i < n; ++i) {
    const auto a = static_cast<unsigned char>(i < given.size() ? given[i] : 0);
    const auto b = static_cast<unsigned char>(i < secret.size() ? secret[i] : 0);
    diff |= static_cast<unsigned>(a ^ b);
  }
  return diff == 0 && !secret.empty();
}

}  // namespace moesim::exec
