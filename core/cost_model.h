// The cost model: the one predictor of an op's duration (docs/architecture.md §2, §5) that the simulated
// platform's resources hold ops for and that simulated and real runs' estimates share (which is why it is in
// core/: sim/ and exec/ both use it, and neither may include the other). Every duration is linear in
// the op's bytes (or a roofline max of bytes and FLOPs) plus a fixed overhead, with every parameter taken
// from the HardwareProfile. SSD reads are not costed here: sim/resources.h's Ssd models them (latency +
// bytes / bandwidth, shared by concurrent requests).
//
//   dense_compute   max(bytes / gpu_memory_bandwidth, flops / gpu_bf16_flops) + gpu_kernel_overhead
//   expert_compute  the same roofline: weights are read once per invocation (bytes), 2 FLOPs per weight
//                   element per routed token (flops); so a decode token with few tokens is memory-bound; its
//                   fixed cost is gpu_expert_overhead (several kernels: default gpu_kernel_overhead); on
//                   weights its request has just produced (Op::fresh: still in the last-level cache) it is
//                   flops / gpu_bf16_flops + gpu_fresh_expert_overhead where the profile has that field; of
//                   2+ tokens (GEMMs, not GEMVs) the roofline + gpu_expert_gemm_overhead where the profile
//                   has it (a dense op of 2+ tokens: + gpu_dense_gemm_overhead where the profile has it);
//                   where the profile also has the kind's gpu_{expert,dense}_gemm_flops, that overhead +
//                   flops / that rate instead of the roofline (a GEMM's line: core/hardware_profile.h)
//   recover         2 * bytes / gpu_recover_bandwidth + gpu_recover_overhead (reads SM + exponent bytes,
//   writes
//                   the BF16 tensor: memory-bound, ZipMoE §3.3 "memory-coalesced kernel"); a profile without
//                   gpu.recover_* uses gpu_memory_bandwidth and gpu_kernel_overhead
//   on the CPU (Op::resource kCpu, placed by the system): expert/dense compute max(bytes / cpu memcpy
//                   bandwidth, flops / cpu.flops_per_core) on one worker (an expert: bytes /
//                   cpu.expert_bandwidth where the profile has it); recovery 2 * bytes / cpu memcpy bandwidth
//                   (the vectorized CPU kernel); a transfer (the copy of a read tensor into its cache slot,
//                   compute_after_loads) bytes / cpu.load_copy_bandwidth (0 without it)
//   decompress      bytes / cpu_decompress_bandwidth (bytes = decompressed output of one shard)
//   expert compute on weights of a quantized type (set_expert_storage): + the layer's expert elements of each
//                   type x that type's {gpu,cpu}.dequant_time_per_element on the op's resource (absent: 0),
//                   once per op whatever its tokens
//   a prefill step's compute ops (dense and expert): times cpu.prefill_compute_slowdown (default 1)
//   a prefill step's decompressions (Op::prefill): times cpu_prefill_slowdown (default 1); its CPU recoveries
//                   times cpu_prefill_recover_slowdown (default cpu_prefill_slowdown)
//   transfer        uma:  link_latency (zero-copy: the GPU reads host memory in place; no copy)
//                   pcie: link_latency + bytes / link_bandwidth
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/cluster_platform.h"
#include "core/hardware_profile.h"
#include "core/op_graph.h"
#include "core/platform.h"
#include "core/profile_reads.h"

namespace moesim {

// The predictor of an op's duration from the profile alone: the simulator's resources hold ops for
// duration(), and estimate() is what the planner and schedulers ask before they decide, in simulated and in
// real runs alike (an exec run's estimates come from here, not from a simulated platform).
// The SSD read of a fused op's E-chunk (Op::read_bytes): what its worker reads before decompressing.
Op fused_chunk_read(uint64_t bytes, bool prefill);

class CostModel : public OpEstimator {
 public:
  explicit CostModel(const HardwareProfile& hw) : hw_(hw), uma_(hw.link_kind == "uma") {}
  // duration(op), and for an SSD read an idle device's latency plus the bytes at full bandwidth (the prefill
  // figures where the profile has them): what the op would take alone. A fused read (Op::read_bytes): that
  // read's estimate plus the op's duration, the time its worker is held on an idle SSD.
  double estimate(const Op& op) const override;
  // Seconds `op` holds its resource (not for kSsdRead; for a fused read, its own part only: the read is the
  // SSD model's). Throws moesim::Error when the profile lacks a needed parameter.
  double duration(const Op& op) const;
  // max(bytes / gpu.memory_bandwidth, flops / gpu.bf16_flops) + gpu.kernel_overhead.
  double roofline(uint64_t bytes, double flops) const;
  const HardwareProfile& hardware() const { return hw_; }
  // The elements of one routed expert of each MoE layer by storage type name ([layer] -> (type, elements)),
  // for the dequantization term; empty (the default): none is added.
  using ExpertStorage = std::vector<std::vector<std::pair<std::string, uint64_t>>>;
  void set_expert_storage(ExpertStorage storage) { storage_ = std::move(storage); }
  // Seconds an expert compute op of `layer` on `resource` spends dequantizing its weights (0 where the
  // profile gives no time for the layer's types, or no storage was set).
  double dequant(uint16_t layer, ResourceClass resource) const;
  // The profile's quantities read so far (core/profile_reads.h): by every duration and estimate, and by
  // whoever else marks them here (the simulated SSD, mark_ssd_read).
  const HwReads& reads() const { return reads_; }
  // Records that an SSD read was served from the profile's read latency and bandwidth (the prefill pair for
  // a prefill read where the profile has one).
  void mark_ssd_read(bool prefill) const;
  // The CPU work of the thread that issues a read of `bytes` after the device (ssd.read_cpu_*; 0 without the
  // fields), recording the fields it read: the I/O thread's reads and a fused read's worker pay it alike.
  double read_cpu(uint64_t bytes, bool prefill) const;

 private:
  double roof(uint64_t bytes, double flops) const;  // the roofline without a fixed cost
  double gpu_compute(const Op& op) const;           // dense or expert compute on the GPU
  double unscaled(const Op& op) const;              // duration() before cpu.prefill_compute_slowdown
  double unscaled_base(const Op& op) const;         // unscaled() without the dequantization term
  HardwareProfile hw_;
  bool uma_;  // hw_.link_kind == "uma", asked by every transfer
  HwReads reads_;
  ExpertStorage storage_;
};

// What an op takes on a cluster server of profile `hw` in the model: the cost model's duration, and for a
// migration's load (kTransfer on kGpu) bytes / migration_io_bytes_per_s(hw). The simulated cluster
// (sim/sim_cluster_platform.h) holds its GPUs for it; the real one (exec/exec_cluster_platform.h) estimates
// with it.
double cluster_op_seconds(const CostModel& cost, const HardwareProfile& hw, const Op& op);

}  // namespace moesim
