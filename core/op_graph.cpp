#include "core/op_graph.h"

#include <cassert>

namespace moesim {

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::kSsdRead:
      return "ssd_read";
    case OpKind::kDecompress:
      return "decompress";
    case OpKind::kRecover:
      return "recover";
    case OpKind::kTransfer:
      return "transfer";
    case OpKind::kExpertCompute:
      return "expert_compute";
    case OpKind::kDenseCompute:
      return "dense_compute";
  }
  return "?";
}

const char* tensor_part_name(TensorPart p) {
  switch (p) {
    case TensorPart::kWhole:
      return "whole";
    case TensorPart::kSm:
      return "sm";
    case TensorPart::kE:
      return "e";
  }
  return "?";
}

ResourceClass default_resource(OpKind k) {
  switch (k) {
    case OpKind::kSsdRead:
      return ResourceClass::kSsd;
    case OpKind::kDecompress:
      return ResourceClass::kCpu;
    case OpKind::kTransfer:
      return ResourceClass::kLink;
    case OpKind::kRecover:
    case OpKind::kExpertCompute:
    case OpKind::kDenseCompute:
      return ResourceClass::kGpu;
  }
  return ResourceClass::kGpu;
}

void OpGraph::clear() {
  ops_.clear();
  dep_begin_.assign(1, 0);
  dep_.clear();
  succ_begin_.clear();
  succ_.clear();
}

void OpGraph::finalize() {
  const size_t n = ops_.size();
  succ_begin_.assign(n + 1, 0);
  for (uint32_t d : dep_) ++succ_begin_[d + 1];
  for (size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
  succ_.resize(dep_.size());
  fill_.assign(succ_begin_.begin(), succ_begin_.end() - 1);  // a member: no allocation per graph
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t k = dep_begin_[i]; k < dep_begin_[i + 1]; ++k) succ_[fill_[dep_[k]]++] = i;
}

}  // namespace moesim
