#include "core/cost_model.h"

#include <algorithm>

#include "base/error.h"

namespace moesim {

Op fused_chunk_read(uint64_t bytes, bool prefill) {
  Op read;
  read.kind = OpKind::kSsdRead;
  read.resource = ResourceClass::kSsd;
  read.part = TensorPart::kE;
  read.bytes = bytes;
  read.prefill = prefill;
  return read;
}

double CostModel::roof(uint64_t bytes, double flops) const {
  reads_.mark(HwParam::kGpuMemoryBandwidth);
  reads_.mark(HwParam::kGpuBf16Flops);
  return std::max(static_cast<double>(bytes) / hw_.gpu_memory_bandwidth, flops / hw_.gpu_bf16_flops);
}

double CostModel::roofline(uint64_t bytes, double flops) const {
  reads_.mark(HwParam::kGpuKernelOverhead);
  return roof(bytes, flops) + hw_.gpu_kernel_overhead;
}

double CostModel::gpu_compute(const Op& op) const {
  // An expert's SwiGLU FFN is several kernels (three GEMMs and the activation), a dense op one.
  // An op of 2+ tokens runs GEMMs, not GEMVs: the roofline and their fixed cost, where the profile has one
  // for its kind (for an expert whether its weights are fresh or not: the FLOPs dominate).
  const bool expert = op.kind == OpKind::kExpertCompute;
  if (op.tokens >= 2) {
    const double gemm = expert ? hw_.gpu_expert_gemm_overhead : hw_.gpu_dense_gemm_overhead;
    if (gemm >= 0) {
      reads_.mark(expert ? HwParam::kGpuExpertGemmOverhead : HwParam::kGpuDenseGemmOverhead);
      // The kind's own line where the profile has one: the fixed part and the FLOPs in series.
      if (const double rate = expert ? hw_.gpu_expert_gemm_flops : hw_.gpu_dense_gemm_flops; rate > 0) {
        reads_.mark(expert ? HwParam::kGpuExpertGemmFlops : HwParam::kGpuDenseGemmFlops);
        return gemm + op.flops / rate;
      }
      return roof(op.bytes, op.flops) + gemm;
    }
  }
  // An expert on fresh weights (Op::fresh) reads them from the last-level cache: the profile's fixed cost,
  // where it has one.
  if (expert && op.fresh && hw_.gpu_fresh_expert_overhead >= 0) {
    reads_.mark(HwParam::kGpuBf16Flops);
    reads_.mark(HwParam::kGpuFreshExpertOverhead);
    return op.flops / hw_.gpu_bf16_flops + hw_.gpu_fresh_expert_overhead;
  }
  if (!expert) return roofline(op.bytes, op.flops);
  // The kernel overhead cancels: an expert's fixed cost is expert_overhead alone.
  reads_.mark(HwParam::kGpuExpertOverhead);
  return roof(op.bytes, op.flops) + hw_.gpu_kernel_overhead +
         (hw_.gpu_expert_overhead - hw_.gpu_kernel_overhead);
}

double CostModel::dequant(uint16_t layer, ResourceClass resource) const {
  if (layer >= storage_.size()) return 0.0;
  const auto& rates =
      resource == ResourceClass::kCpu ? hw_.cpu_dequant_time_per_element : hw_.gpu_dequant_time_per_element;
  double s = 0;
  for (const auto& [type, elements] : storage_[layer])
    if (auto r = rates.find(type); r != rates.end()) s += static_cast<double>(elements) * r->second;
  return s;
}

double CostModel::duration(const Op& op) const {
  const bool compute = op.kind == OpKind::kDenseCompute || op.kind == OpKind::kExpertCompute;
  if (compute && op.prefill && hw_.cpu_prefill_compute_slowdown != 1) {
    reads_.mark(HwParam::kCpuPrefillComputeSlowdown);
    return unscaled(op) * hw_.cpu_prefill_compute_slowdown;
  }
  return unscaled(op);
}

double CostModel::unscaled(const Op& op) const {
  const double base = unscaled_base(op);
  return op.kind == OpKind::kExpertCompute ? base + dequant(op.layer, op.resource) : base;
}

double CostModel::unscaled_base(const Op& op) const {
  const auto bytes = static_cast<double>(op.bytes);
  const bool on_cpu = op.resource == ResourceClass::kCpu;
  switch (op.kind) {
    case OpKind::kDenseCompute:
    case OpKind::kExpertCompute:
      if (on_cpu) {
        // One worker: its share of the memory bandwidth for the weights, or its FLOP/s.
        if (!(hw_.cpu_flops_per_core > 0))
          throw Error(hw_.origin +
                      ": field 'cpu.flops_per_core' is needed to cost expert compute on the CPU");
        const bool own_rate = hw_.cpu_expert_bandwidth > 0 && op.kind == OpKind::kExpertCompute;
        reads_.mark(own_rate ? HwParam::kCpuExpertBandwidth : HwParam::kCpuMemcpyBandwidth);
        reads_.mark(HwParam::kCpuFlopsPerCore);
        const double stream = own_rate ? hw_.cpu_expert_bandwidth : hw_.cpu_memcpy_bandwidth;
        return std::max(bytes / stream, op.flops / hw_.cpu_flops_per_core);
      }
      return gpu_compute(op);
    case OpKind::kRecover:
      // Reads SM + exponent bytes and writes the tensor: memory-bound on either side.
      if (on_cpu) {
        reads_.mark(HwParam::kCpuMemcpyBandwidth);
        if (op.prefill) reads_.mark(HwParam::kCpuPrefillRecoverSlowdown);
        return 2 * bytes / hw_.cpu_memcpy_bandwidth * (op.prefill ? hw_.cpu_prefill_recover_slowdown : 1.0);
      }
      reads_.mark(HwParam::kGpuRecoverBandwidth);
      reads_.mark(HwParam::kGpuRecoverOverhead);
      return 2 * bytes / hw_.gpu_recover_bandwidth + hw_.gpu_recover_overhead;
    case OpKind::kDecompress:
      if (!(hw_.cpu_decompress_bandwidth > 0))
        throw Error(hw_.origin +
                    ": field 'cpu.decompress_bandwidth_per_core' is needed to cost decompression");
      reads_.mark(HwParam::kCpuDecompressBandwidth);
      if (op.prefill) reads_.mark(HwParam::kCpuPrefillSlowdown);
      return bytes / hw_.cpu_decompress_bandwidth * (op.prefill ? hw_.cpu_prefill_slowdown : 1.0);
    case OpKind::kTransfer:
      // On a CPU worker: the copy of a read tensor into its cache slot
      // (PipelineOptions::compute_after_loads).
      if (on_cpu) {
        if (!(hw_.cpu_load_copy_bandwidth > 0)) return 0.0;
        reads_.mark(HwParam::kCpuLoadCopyBandwidth);
        return bytes / hw_.cpu_load_copy_bandwidth;
      }
      reads_.mark(HwParam::kLinkLatency);
      if (uma_) return hw_.link_latency;
      reads_.mark(HwParam::kLinkBandwidth);
      return hw_.link_latency + bytes / hw_.link_bandwidth;
    case OpKind::kSsdRead:
      break;
  }
  throw Error("CostModel::duration: SSD reads are modelled by sim::Ssd");
}

void CostModel::mark_ssd_read(bool prefill) const {
  const bool own = prefill && hw_.ssd_prefill_read_bandwidth > 0;
  reads_.mark(own ? HwParam::kSsdPrefillReadLatency : HwParam::kSsdReadLatency);
  reads_.mark(own ? HwParam::kSsdPrefillReadBandwidth : HwParam::kSsdReadBandwidth);
}

double CostModel::estimate(const Op& op) const {
  if (op.resource == ResourceClass::kSsd) {
    // An idle SSD: the per-request latency plus the bytes at full bandwidth (sim/resources.h's Ssd).
    mark_ssd_read(op.prefill);
    if (op.prefill && hw_.ssd_prefill_read_bandwidth > 0)
      return hw_.ssd_prefill_read_latency + static_cast<double>(op.bytes) / hw_.ssd_prefill_read_bandwidth;
    return hw_.ssd_read_latency + static_cast<double>(op.bytes) / hw_.ssd_read_bandwidth;
  }
  if (op.fused_read()) {  // the worker's own read on an idle SSD and its CPU tail (ssd.read_cpu_*), then the
                          // op itself
    const Op read = fused_chunk_read(op.read_bytes, op.prefill);
    Op rest = op;
    rest.read_bytes = 0;
    return estimate(read) + read_cpu(read.bytes, read.prefill) + duration(rest);
  }
  return duration(op);
}

double CostModel::read_cpu(uint64_t bytes, bool prefill) const {
  if (hw_.has_read_cpu()) {
    reads_.mark(prefill ? HwParam::kSsdPrefillReadCpuOverhead : HwParam::kSsdReadCpuOverhead);
    reads_.mark(prefill ? HwParam::kSsdPrefillReadCpuBandwidth : HwParam::kSsdReadCpuBandwidth);
  }
  return hw_.read_cpu(bytes, prefill);
}

double cluster_op_seconds(const CostModel& cost, const HardwareProfile& hw, const Op& op) {
  if (op.kind == OpKind::kTransfer) {
    const double io = migration_io_bytes_per_s(hw);
    return io > 0 ? static_cast<double>(op.bytes) / io : 0;
  }
  return cost.duration(op);
}

}  // namespace moesim
