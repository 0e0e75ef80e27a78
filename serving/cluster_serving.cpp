#include "serving/cluster_serving.h"

#include "base/error.h"
#include "serving/system.h"

namespace moesim::serving {

std::unique_ptr<System> make_cluster_system(const std::string& spec) {
  std::unique_ptr<System> system = make_system(spec);
  if (!system->cluster()) {
    std::string known;
    for (const std::string& name : system_names())
      if (make_system(name)->traits().cluster) known += (known.empty() ? "" : ", ") + name;
    throw UsageError("system '" + spec + "' serves one device, not a cluster (cluster systems: " + known + ")");
  }
  return system;
}

ClusterResult serve_cluster(const ClusterInput& in, const ClusterOptions& opt, ClusterPlatform& platform) {
  return make_cluster_system(opt.system)->cluster()->serve(in, opt, platform);
}

}  // namespace moesim::serving
