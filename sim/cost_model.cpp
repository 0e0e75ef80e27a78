#include "sim/cost_model.h"

#include <algorithm>

#include "core/error.h"

namespace moesim::sim {

double CostModel::roofline(uint64_t bytes, double flops) const {
  return std::max(static_cast<double>(bytes) / hw_.gpu_memory_bandwidth, flops / hw_.gpu_bf16_flops) +
         hw_.gpu_kernel_overhead;
}

double CostModel::duration(const Op& op) const {
  const auto bytes = static_cast<double>(op.bytes);
  switch (op.kind) {
    case OpKind::kDenseCompute:
    case OpKind::kExpertCompute:
      return roofline(op.bytes, op.flops);
    case OpKind::kRecover:
      return 2 * bytes / hw_.gpu_memory_bandwidth + hw_.gpu_kernel_overhead;
    case OpKind::kDecompress:
      if (!(hw_.cpu_decompress_bandwidth > 0))
        throw Error(hw_.origin +
                    ": field 'cpu.decompress_bandwidth_per_core' is needed to cost decompression");
      return bytes / hw_.cpu_decompress_bandwidth;
    case OpKind::kTransfer:
      return hw_.link_kind == "uma" ? hw_.link_latency : hw_.link_latency + bytes / hw_.link_bandwidth;
    case OpKind::kSsdRead:
      break;
  }
  throw Error("CostModel::duration: SSD reads are modelled by sim::Ssd");
}

}  // namespace moesim::sim
