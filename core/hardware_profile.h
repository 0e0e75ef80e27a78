// HardwareProfile: the machine a simulation models, loaded from data/hardware/*.json.
// Each field in a profile is {"value": V, "source": "..."} or {"value": V, "assumption": "why; replace by
// `moesim calibrate`"}; V is a number or a string with a unit ("3.5GB/s", "80us", "64GiB").
// Sections: ssd, memory, cpu, gpu, link (required), runtime (optional); the full schema, every field's unit
// and constraint, is docs/hardware-format.md. Cost models built from these are linear in bytes with a fixed
// overhead (docs/architecture.md); calibrated profiles replace the defaults.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/json_io.h"

namespace moesim {

// The machine a calibrated profile was measured on (the profile's optional "measured_on"), so that a run
// elsewhere can say its numbers may not apply. Empty strings and 0 cores: not recorded.
struct MeasuredOn {
  std::string host;
  std::string cpu_model;
  uint32_t cores = 0;
  std::string gpu;
};

// The profile's quantities the cost models read, one per member of HardwareProfile below that holds one (a
// run records which it read: core/profile_reads.h). kHwParamFields names each one's field.
enum class HwParam : uint8_t {
  kSsdReadBandwidth,
  kSsdReadLatency,
  kSsdPrefillReadBandwidth,
  kSsdPrefillReadLatency,
  kSsdQueueDepth,
  kSsdReadCpuOverhead,
  kSsdReadCpuBandwidth,
  kSsdPrefillReadCpuOverhead,
  kSsdPrefillReadCpuBandwidth,
  kCpuCores,
  kCpuMemcpyBandwidth,
  kCpuDecompressBandwidth,
  kCpuFlopsPerCore,
  kCpuPrefillSlowdown,
  kCpuPrefillRecoverSlowdown,
  kGpuBf16Flops,
  kGpuMemoryBandwidth,
  kGpuKernelOverhead,
  kGpuRecoverBandwidth,
  kGpuExpertOverhead,
  kGpuFreshExpertOverhead,
  kGpuExpertGemmOverhead,
  kGpuDenseGemmOverhead,
  kGpuRecoverOverhead,
  kLinkBandwidth,
  kLinkLatency,
  kCpuExpertBandwidth,
  kCpuLoadCopyBandwidth,
  kCpuPrefillComputeSlowdown,
  kSsdQueueDepthCurve,
  kGpuExpertGemmFlops,
  kGpuDenseGemmFlops,
  kCount
};
inline constexpr size_t kHwParams = static_cast<size_t>(HwParam::kCount);
inline constexpr std::array<const char*, kHwParams> kHwParamFields = {"ssd.read_bandwidth",
                                                                      "ssd.read_latency",
                                                                      "ssd.prefill_read_bandwidth",
                                                                      "ssd.prefill_read_latency",
                                                                      "ssd.queue_depth",
                                                                      "ssd.read_cpu_overhead",
                                                                      "ssd.read_cpu_bandwidth",
                                                                      "ssd.prefill_read_cpu_overhead",
                                                                      "ssd.prefill_read_cpu_bandwidth",
                                                                      "cpu.cores",
                                                                      "cpu.memcpy_bandwidth_per_core",
                                                                      "cpu.decompress_bandwidth_per_core",
                                                                      "cpu.flops_per_core",
                                                                      "cpu.prefill_slowdown",
                                                                      "cpu.prefill_recover_slowdown",
                                                                      "gpu.bf16_flops",
                                                                      "gpu.memory_bandwidth",
                                                                      "gpu.kernel_overhead",
                                                                      "gpu.recover_bandwidth",
                                                                      "gpu.expert_overhead",
                                                                      "gpu.fresh_expert_overhead",
                                                                      "gpu.expert_gemm_overhead",
                                                                      "gpu.dense_gemm_overhead",
                                                                      "gpu.recover_overhead",
                                                                      "link.bandwidth",
                                                                      "link.latency",
                                                                      "cpu.expert_bandwidth",
                                                                      "cpu.load_copy_bandwidth",
                                                                      "cpu.prefill_compute_slowdown",
                                                                      "ssd.queue_depth_curve",
                                                                      "gpu.expert_gemm_flops",
                                                                      "gpu.dense_gemm_flops"};

// One point of an SSD's queue-depth curve (ssd.queue_depth_curve): with `depth` reads in flight at the
// device, a read's fixed latency (s) and the device's aggregate bandwidth (bytes/s) that the reads
// transferring share.
struct SsdDepthPoint {
  double depth = 1;
  double latency = 0;
  double bandwidth = 0;
};
// The curve at `depth` reads in flight: linear between its points, its first or last point's values outside
// them. `curve` non-empty, depths increasing (as hardware_from_json checks).
SsdDepthPoint ssd_curve_at(const std::vector<SsdDepthPoint>& curve, double depth);

struct HardwareProfile {
  std::string name;
  std::string display_name;
  std::string origin;

  // ssd
  double ssd_read_bandwidth = 0;  // bytes/s, sequential
  double ssd_read_latency = 0;    // s, fixed cost per request
  // Reads issued by a prefill step (Op::prefill: a bulk load of nearly every expert of each layer, back to
  // back). Optional (ssd.prefill_read_bandwidth, ssd.prefill_read_latency); absent, the two above. calibrate
  // fits them apart where both phases read, because a disk need not serve a bulk load at its sparse-read rate
  // (it may be slower or faster; measured in bench/results/validate.md, "the calibration checks itself").
  double ssd_prefill_read_bandwidth = 0;
  double ssd_prefill_read_latency = 0;
  uint32_t ssd_queue_depth = 1;  // requests served concurrently
  // Optional (ssd.queue_depth_curve): a read's latency and the aggregate bandwidth as functions of the reads
  // in flight at the device, whichever thread issued them (sim/resources.h, Ssd). Where given, the SSD model
  // uses it in place of read_latency and read_bandwidth (which the cost model's estimates keep using); empty:
  // those two at every depth.
  std::vector<SsdDepthPoint> ssd_queue_depth_curve;
  // The CPU work of the thread that issues a read (its I/O thread): read_cpu_overhead + bytes /
  // read_cpu_bandwidth seconds on a core, after the device's latency + bytes / bandwidth, shared with the
  // other CPU-bound threads where the simulation models the cores (runtime.cpu_cores). The kernel's O_DIRECT
  // path, the checksum and (full tensors) the merge cost CPU time of the same order as the decompressions
  // on a machine with few cores, so leaving it out under-estimates every run that shares its cores
  // (bench/results/validate.md, "the I/O thread's CPU work"). Optional (ssd.read_cpu_overhead,
  // ssd.read_cpu_bandwidth); absent, a read takes no CPU (read_cpu_bandwidth 0: no per-byte term). A prefill
  // step's reads have their own (ssd.prefill_read_cpu_*; absent, the same): bulk reads of whole layers need
  // not cost the CPU what sparse ones do.
  double ssd_read_cpu_overhead = 0;
  double ssd_read_cpu_bandwidth = 0;
  double ssd_prefill_read_cpu_overhead = 0;
  double ssd_prefill_read_cpu_bandwidth = 0;
  bool has_read_cpu() const {
    return ssd_read_cpu_overhead > 0 || ssd_read_cpu_bandwidth > 0 || ssd_prefill_read_cpu_overhead > 0 ||
           ssd_prefill_read_cpu_bandwidth > 0;
  }
  // That work for a read of `bytes` (0 without the fields).
  double read_cpu(uint64_t bytes, bool prefill) const {
    const double fixed = prefill ? ssd_prefill_read_cpu_overhead : ssd_read_cpu_overhead;
    const double bw = prefill ? ssd_prefill_read_cpu_bandwidth : ssd_read_cpu_bandwidth;
    return fixed + (bw > 0 ? static_cast<double>(bytes) / bw : 0.0);
  }
  // memory
  uint64_t memory_capacity = 0;  // bytes
  double memory_bandwidth = 0;   // bytes/s
  bool unified_memory = false;   // CPU and GPU share DRAM (Jetson-class SoC)
  // What the OS, the engine's code and the runtime (CUDA context, allocator slack) keep of DRAM, out of reach
  // of the model (memory.os_reserve; optional, 0 = not stated: the memory model then treats all DRAM as
  // usable).
  uint64_t memory_reserve = 0;  // bytes
  // A discrete GPU's own memory (gpu.memory_capacity), where its expert cache and the dense weights live; 0
  // on a unified-memory device (one memory: memory_capacity) or where the profile does not say.
  uint64_t gpu_memory_capacity = 0;  // bytes
  // What the CUDA context and the libraries' workspaces keep of that memory (gpu.memory_reserve; optional,
  // 0).
  uint64_t gpu_memory_reserve = 0;  // bytes
  // cpu
  uint32_t cpu_cores = 1;
  double cpu_memcpy_bandwidth = 0;  // bytes/s per core
  // bytes/s of decompressed output per core (ZipMoE E-chunk decompression,
  // §3.3); optional in a profile: 0 = unknown, and costing a decompression then fails with an Error.
  double cpu_decompress_bandwidth = 0;
  // FLOP/s of one core running an expert's FFN (BF16 weights, FP32 accumulation): expert compute placed
  // on the CPU (`--compute-on cpu`). Optional: 0 = unknown, and costing such an op fails with an Error.
  double cpu_flops_per_core = 0;
  // Bytes of weights per second a CPU worker streams through computing an expert (the memory-bound side of
  // its roofline): an engine's quantized matmul kernels run below a plain copy. Optional
  // (cpu.expert_bandwidth); 0 = absent, cpu_memcpy_bandwidth.
  double cpu_expert_bandwidth = 0;
  // A CPU worker copies each tensor a run with compute_after_loads has read into its cache slot at this rate
  // (an engine that reads into an I/O buffer and moves the expert on its compute thread as it arrives:
  // BigMoeOnEdge's mgmt_ms). Optional (cpu.load_copy_bandwidth); 0 = the copy takes no time.
  double cpu_load_copy_bandwidth = 0;
  // A prefill step's compute ops (dense and routed experts, on whichever lane) take this many times their
  // roofline: an engine whose prompt pass computes slower per FLOP than its decode tokens (fitted by
  // `calibrate --from-log` from the log's prefill time). Optional (cpu.prefill_compute_slowdown, default 1).
  double cpu_prefill_compute_slowdown = 1;
  // A prefill step's decompressions and CPU recoveries (Op::prefill) take this many times the models' time:
  // they share the cores with every other thread of the engine, on buffers touched for the first time.
  // Optional (cpu.prefill_slowdown, default 1); calibrate fits it against the decode steps' models.
  double cpu_prefill_slowdown = 1;
  // The same for a prefill step's CPU recoveries alone (cpu.prefill_recover_slowdown): recoveries and
  // decompressions need not slow down alike, and one factor fitted over both is set by the decompressions'
  // time, which dominates, leaving the recoveries short (bench/results/validate.md, "compute of 2+ tokens and
  // a prefill's CPU recoveries"). Optional; absent, cpu.prefill_slowdown.
  double cpu_prefill_recover_slowdown = 1;
  // gpu
  double gpu_bf16_flops = 0;        // FLOP/s, dense
  double gpu_memory_bandwidth = 0;  // bytes/s
  double gpu_kernel_overhead = 0;   // s per kernel launch
  // The recovery kernel (ZipMoE §3.3) on the GPU: 2 * bytes / recover_bandwidth + recover_overhead. Optional
  // in a profile (gpu.recover_bandwidth, gpu.recover_overhead); absent, they are memory_bandwidth and
  // kernel_overhead. A calibrated profile fits them apart: an expert's compute is four launches and a
  // recovery one, so one overhead cannot serve both on a GPU where launches dominate small ops.
  double gpu_recover_bandwidth = 0;  // bytes/s
  // Fixed cost of one expert's FFN (three GEMMs and the activation: four launches and one synchronization)
  // in place of kernel_overhead. Optional (gpu.expert_overhead); absent, kernel_overhead.
  double gpu_expert_overhead = 0;
  // An expert's compute on weights its request has just produced (Op::fresh: read, recovered or copied in the
  // same layer, still in the last-level cache): no memory-bound term, this fixed cost instead (its FLOPs at
  // the peak still bound it). Optional (gpu.fresh_expert_overhead); absent (< 0), such an expert costs like
  // any other. calibrate fits it on a CPU emulating the GPU stream, where such an expert runs markedly faster
  // than a resident one (bench/results/validate.md, "the calibration checks itself").
  double gpu_fresh_expert_overhead = -1;
  // An expert's compute on 2+ tokens: max(bytes / memory_bandwidth, flops / bf16_flops) plus this fixed cost,
  // in place of expert_overhead and fresh_expert_overhead. Its kernels are GEMMs, where one token's are
  // GEMVs: on a CPU thread (Eigen) each GEMM call packs and blocks its operands, a fixed cost per call that
  // the roofline does not see and that dominates small experts (bench/results/validate.md, "compute of 2+
  // tokens"). Optional (gpu.expert_gemm_overhead); absent (< 0), such an expert costs like any other.
  // calibrate fits it where a CPU thread emulates the GPU stream.
  double gpu_expert_gemm_overhead = -1;
  // The same for a dense op of 2+ tokens (gpu.dense_gemm_overhead), in place of kernel_overhead: a batch's
  // decode step multiplies the dense weights by several tokens, and those GEMMs pay the same per-call cost
  // above their roofline (bench/results/validate.md, "compute of 2+ tokens": a batch's decode step).
  double gpu_dense_gemm_overhead = -1;
  // A GEMM's own line over its FLOPs (gpu.expert_gemm_flops, gpu.dense_gemm_flops; FLOP/s): where the profile
  // has it for a kind, an op of that kind of 2+ tokens costs its GEMM overhead above + flops / this rate, in
  // series, not the roofline + that overhead. On a CPU thread a GEMM widens and packs every weight before it
  // multiplies (kernels/expert_ffn.h): a fixed part per call and a part per token, one after the other, so
  // the roofline's max() of bytes and FLOPs, fitted where a prefill's many tokens dominate, under-costs a
  // batch's decode GEMMs of a few tokens (a dense op of 4 tokens 31-46% under on two models;
  // bench/results/batch-transfer-2026-12-05.md). Each kind has its own rate: Eigen multiplies a dense layer's
  // wide matrix faster per FLOP than a narrow expert's. Optional (0: the roofline); calibrate measures both
  // lines at the run's shapes (harness/calibrate/gemm_probe.h) where a CPU thread emulates the GPU stream.
  double gpu_expert_gemm_flops = 0;
  double gpu_dense_gemm_flops = 0;
  double gpu_recover_overhead = 0;  // s per recovery
  // Seconds per weight element to dequantize a routed expert stored in a type as it is computed, by storage
  // type name (core/storage_type.h): gpu.dequant_time_per_element and cpu.dequant_time_per_element, objects
  // of type -> time. Absent, or a type not listed: 0 (not modelled, or already in the compute rates, as in a
  // profile calibrated on a quantized engine). Added once per expert compute op, whatever its tokens.
  std::map<std::string, double> gpu_dequant_time_per_element, cpu_dequant_time_per_element;
  // link between host memory and GPU memory
  std::string link_kind = "uma";  // "uma" (zero-copy) or "pcie"
  double link_bandwidth = 0;      // bytes/s
  double link_latency = 0;        // s per transfer

  std::optional<MeasuredOn> measured_on;

  // The field of the profile each member's value came from: its own where the profile has it, else the one
  // it defaults to (gpu.expert_overhead absent: "gpu.kernel_overhead"); "" where the value is a built-in
  // default that no field gives. A run that reads a member rests on that field.
  std::array<std::string, kHwParams> field_of;

  Json raw;
};

// Reads a profile file (a preset name or a path) and checks it against the schema: every error names the
// file and the JSON path ("ssd.read_bandwidth.value: expected a positive value, found the number 0"), an
// unknown field is an error naming the closest known one, and every quantity must carry a source or an
// assumption.
HardwareProfile load_hardware(const std::string& name_or_path);
// The same checks on JSON already read; `require_provenance` false accepts bare values (profiles built in
// code, where no reader needs to be told where a number came from).
HardwareProfile hardware_from_json(const Json& j, const std::string& origin, bool require_provenance = false);

// Reads section.key's "value" (or a bare value) and converts it: kind is "rate", "time", "bytes" or
// "number". Throws naming origin and "section.key".
double hardware_value(const Json& j, const char* section, const char* key, const char* kind,
                      const std::string& origin);
// The kind of quantity section.key holds ("rate", "time", "bytes", "number", or "any" for a list or a flag),
// or nullptr for a field the schema does not know.
const char* hardware_field_kind(const std::string& section, const std::string& key);

}  // namespace moesim
