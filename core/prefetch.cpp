#include "core/prefetch.h"

#include "base/error.h"

namespace moesim {

std::unique_ptr<PrefetchPolicy> make_prefetch_policy(const std::string& spec, const PrefetchSetup& setup) {
  return PrefetchRegistry::instance().create(spec, "prefetch", setup);
}

void check_prefetch_request(const PrefetchRequest& pr, uint32_t layers, uint32_t experts) {
  if (pr.layer >= layers || pr.expert >= experts)
    throw Error("prefetch policy proposed expert " + std::to_string(pr.expert) + " of layer " +
                std::to_string(pr.layer) + " outside the model (" + std::to_string(layers) + " layers x " +
                std::to_string(experts) + " experts)");
}

}  // namespace moesim
