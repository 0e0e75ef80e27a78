#include "serving/load_layout.h"

#include "base/error.h"

namespace moesim {
namespace {

class WholeTensorLoads final : public LoadLayout {
 public:
  void add_load(const TensorLoad& load, OpGraph& g, std::vector<uint32_t>& tails) const override {
    if (load.to != ExpertState::kFull || load.from != ExpertState::kMissed)
      throw Error(
          std::string("whole-tensor loads: a tensor is either held whole or missed, not loaded from ") +
          expert_state_name(load.from) + " to " + expert_state_name(load.to));
    auto make = [&](OpKind k) {
      Op o = load.base;
      o.kind = k;
      o.resource = default_resource(k);
      o.bytes = load.bytes;
      return o;
    };
    const uint32_t read = g.add(make(OpKind::kSsdRead), load.roots);
    if (load.compute_on == ResourceClass::kGpu) {
      tails.push_back(g.add(make(OpKind::kTransfer), {read}));
    } else if (load.compute_after_loads) {  // copied into its slot on a CPU worker as it arrives
      Op copy = make(OpKind::kTransfer);
      copy.resource = ResourceClass::kCpu;
      tails.push_back(g.add(copy, {read}));
    } else {
      tails.push_back(read);
    }
  }
};

}  // namespace

const LoadLayout& whole_tensor_loads() {
  static const WholeTensorLoads loads;
  return loads;
}

}  // namespace moesim
