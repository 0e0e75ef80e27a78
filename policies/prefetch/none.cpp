// none: no prefetching; every expert is loaded on demand when its layer's router reveals it (the default).
//   propose(ctx, out): return
#include "core/prefetch.h"

namespace moesim::policies {
namespace {

class NoPrefetch final : public PrefetchPolicy {
 public:
  void propose(const PrefetchContext&, std::vector<PrefetchRequest>&) override {}
};

}  // namespace

MOESIM_REGISTER(
    PrefetchRegistry, "none", "no prefetching: experts load on demand", {},
    [](const Params&, const PrefetchSetup&) -> std::unique_ptr<PrefetchPolicy> {
      return std::make_unique<NoPrefetch>();
    },
    PolicyNeeds{}, PolicyTraits{.no_op = true});

}  // namespace moesim::policies
