#include "core/scheduling.h"

namespace moesim {

std::unique_ptr<SchedulingPolicy> make_scheduling_policy(const std::string& spec) {
  return SchedulingRegistry::instance().create(spec, "scheduling");
}

}  // namespace moesim
