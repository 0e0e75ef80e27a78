#include "core/prefetch.h"

namespace moesim {

std::unique_ptr<PrefetchPolicy> make_prefetch_policy(const std::string& spec, const PrefetchSetup& setup) {
  return PrefetchRegistry::instance().create(spec, "prefetch", setup);
}

}  // namespace moesim
