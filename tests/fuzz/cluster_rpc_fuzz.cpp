// libFuzzer target: the cluster's RPC messages (exec/cluster_rpc.proto, exec/cluster_control.proto) as a
// server receives them: arbitrary bytes parsed as ComputeRequest, LoadRequest, DropRequest and the
// coordinator's DenseRequest, InvokeRequest and PushRequest, then exec/rpc_limits.h's validate().
// Parsing may fail and validation may refuse; nothing may crash. A ComputeRequest that validates is computed
// as the server does (each work's rows of the activations through kernels::expert_ffn), so a bound that
// validate() misses shows up as an out-of-bounds read under ASan; a LoadRequest that validates must hold
// exactly one expert's weights.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "exec/rpc_limits.h"
#include "kernels/expert_ffn.h"

namespace {

const moesim::exec::ModelShape kShape{2, 4, 4, 6};
constexpr uint32_t kUnits = 2, kMaxTokens = 16, kServers = 3;

bool held(uint32_t layer, uint32_t expert) { return (layer + expert) % 2 == 0; }

void compute(const moesim::cluster::ComputeRequest& req) {
  const std::vector<uint16_t> w(kShape.weight_elements(), 0x3c00);  // 0.0078125 in BF16
  std::vector<float> x, y;
  uint64_t row = 0;
  for (const auto& work : req.work()) {
    if (work.expert() >= kShape.experts || work.gpu() >= kUnits || !held(req.layer(), work.expert())) std::abort();
    const uint64_t n = uint64_t{work.tokens()} * kShape.hidden;
    x.resize(n);
    y.resize(n);
    // The server's copy: an activations buffer shorter than the works' rows would be read past its end here.
    std::memcpy(x.data(), req.activations().data() + row * kShape.hidden * 4, n * 4);
    moesim::kernels::expert_ffn(w.data(), w.data(), w.data(), kShape.hidden, kShape.inter, x.data(), y.data(),
                                work.tokens());
    row += work.tokens();
  }
  if (row == 0 || row > kMaxTokens || row * kShape.hidden * 4 != req.activations().size()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int n = static_cast<int>(size);
  if (static_cast<size_t>(n) != size) return 0;
  moesim::cluster::ComputeRequest req;
  if (req.ParseFromArray(data, n) && moesim::exec::validate(req, kShape, kUnits, kMaxTokens, held).ok())
    compute(req);
  moesim::cluster::LoadRequest load;
  if (load.ParseFromArray(data, n) && moesim::exec::validate(load, kShape).ok()) {
    const uint64_t bytes = kShape.weight_elements() * 2;
    if (load.layer() >= kShape.layers || load.expert() >= kShape.experts || load.gate().size() != bytes ||
        load.up().size() != bytes || load.down().size() != bytes)
      std::abort();
  }
  // The coordinator's calls: what validates is in range, and an invocation's activations (tokens x hidden) are
  // within the server's bound.
  moesim::cluster::DenseRequest dense;
  if (dense.ParseFromArray(data, n) && moesim::exec::validate(dense, kUnits, kMaxTokens).ok())
    if (dense.unit() >= kUnits || dense.tokens() == 0 || dense.tokens() > kMaxTokens) std::abort();
  moesim::cluster::InvokeRequest invoke;
  if (invoke.ParseFromArray(data, n) && moesim::exec::validate(invoke, kShape, kServers, kMaxTokens).ok()) {
    uint64_t tokens = 0;
    for (const auto& w : invoke.work()) {
      if (w.expert() >= kShape.experts) std::abort();
      tokens += w.tokens();
    }
    if (invoke.peer() >= kServers || invoke.layer() >= kShape.layers || tokens == 0 || tokens > kMaxTokens) std::abort();
  }
  moesim::cluster::PushRequest push;
  if (push.ParseFromArray(data, n) && moesim::exec::validate(push, kShape, kServers).ok())
    if (push.peer() >= kServers || push.layer() >= kShape.layers || push.expert() >= kShape.experts) std::abort();
  moesim::cluster::DropRequest drop;
  if (drop.ParseFromArray(data, n) && moesim::exec::validate(drop, kShape).ok())
    if (drop.layer() >= kShape.layers || drop.expert() >= kShape.experts) std::abort();
  return 0;
}
