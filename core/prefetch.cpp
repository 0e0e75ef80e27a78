// TEMPORARY (integrator's local stand-in until the prefetch helper's version lands)
#include "core/prefetch.h"
namespace moesim {
namespace {
class NoneP final : public PrefetchPolicy { public: void propose(const PrefetchContext&, std::vector<PrefetchRequest>&) override {} };
}
MOESIM_REGISTER(PrefetchRegistry, "none", "no prefetch", {}, [](const Params&, const PrefetchSetup&) -> std::unique_ptr<PrefetchPolicy> { return std::make_unique<NoneP>(); });
std::unique_ptr<PrefetchPolicy> make_prefetch_policy(const std::string& spec, const PrefetchSetup& setup) {
  return PrefetchRegistry::instance().create(spec, "prefetch", setup);
}
}
