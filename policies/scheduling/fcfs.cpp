// fcfs: first come, first served (on-demand loading). Every op keeps priority 0, so each resource serves
// ops in the order they became ready: an invocation's experts are requested in router order (rank order
// of first appearance, traces/lookup_stream.h), their reads queue in that order on the I/O thread, and
// each expert computes as soon as its tensors are in place.
//   order(ctx, requests, graph): for each op: op.priority = 0
#include "core/scheduling.h"

namespace moesim::policies {
namespace {

class Fcfs final : public SchedulingPolicy {
 public:
  void order(const ScheduleContext&, std::span<const ExpertRequest>, OpGraph& graph) override {
    for (uint32_t i = 0; i < graph.size(); ++i) graph.op(i).priority = 0;
  }
};

}  // namespace

MOESIM_REGISTER(SchedulingRegistry, "fcfs", "first come, first served: ops run in the order they become ready", {},
                           [](const Params&) -> std::unique_ptr<SchedulingPolicy> {
                             return std::make_unique<Fcfs>();
                           });

}  // namespace moesim::policies
