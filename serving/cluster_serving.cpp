#include "serving/cluster_serving.h"

#include "base/error.h"
#include "serving/system.h"

namespace moesim::serving {

std::vector<std::string> server_names(const ClusterInput& in) {
  std::vector<std::string> names;
  for (const ClusterServer& s : in.servers) names.push_back(s.name);
  return names;
}

Op cluster_compute_op(const ModelSpec& model, OpKind kind, uint16_t layer, uint32_t tokens, uint16_t expert) {
  Op op;
  op.kind = kind;
  op.resource = ResourceClass::kGpu;
  op.layer = layer;
  op.expert = expert;
  op.tokens = tokens;
  if (kind == OpKind::kExpertCompute) {
    op.bytes = model.bytes_per_expert(layer);
    op.flops = model.expert_flops_per_token() * tokens;
  } else {
    op.bytes = model.dense_bytes_per_layer(layer);
    op.flops = 2.0 * static_cast<double>(model.dense_elements_per_layer()) * tokens;
  }
  return op;
}

std::unique_ptr<System> make_cluster_system(const PolicySpec& spec) {
  std::unique_ptr<System> system = make_system(spec);
  if (!system->cluster()) {
    std::string known;
    for (const auto& e : SystemRegistry::instance().entries())
      if (e.traits.cluster) known += (known.empty() ? "" : ", ") + e.name;
    throw UsageError("system '" + spec.text() +
                     "' serves one device, not a cluster (cluster systems: " + known + ")");
  }
  return system;
}

ClusterResult serve_cluster(const ClusterInput& in, const ClusterOptions& opt, ClusterPlatform& platform) {
  return make_cluster_system(opt.system)->cluster()->serve(in, opt, platform);
}

}  // namespace moesim::serving
