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
  ops_.n = 0;
  dep_begin_.n = 1;  // dep_begin_[0] == 0 always
  dep_.n = 0;
  first_succ_.n = 0;
  succ_.n = 0;
}

}  // namespace moesim
