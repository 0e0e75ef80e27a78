// ExecPlatform: the Platform interface (core/platform.h) in wall-clock time, on real data
// (docs/architecture.md §6, §9). The serving code that `moesim run` drives on the simulator runs unchanged on
// it; every op does what it names, on the bytes of a packed expert store (exec/expert_store.h):
//
//   kSsdRead      the I/O thread(s) pread (or with --io uring read through io_uring: a whole tensor's
//                 chunks all in flight at once) the op's chunk with O_DIRECT into a 4 KiB-aligned buffer and
//                 verify its checksum: an E-chunk shard, an SM-chunk, or a whole tensor (full-tensor
//                 offloading: the SM-chunk and the raw exponent chunks of a store packed with --codec raw,
//                 merged into BF16 by the I/O thread; a compressed store is refused for whole reads)
//   kDecompress   a CPU worker decompresses one E-chunk shard into the tensor's exponent buffer (zstd/lz4
//                 frame content checksums verified); a fused read (Op::read_bytes, ZipMoE §4's prototype)
//                 first preads the shard itself, buffered (through the page cache, never O_DIRECT), and
//                 verifies its checksum, in the same task
//   kRecover      SM-chunk + exponents -> the BF16 tensor (the vectorized CPU kernel, kernels/bf16.h)
//   kTransfer     host -> device: with a CUDA GPU (ExecOptions::gpu) the link thread copies the tensor's
//                 host data to device memory on its own CUDA stream: the recovered BF16 tensor when there is
//                 one (full-tensor offloading, recovery on the CPU, a host-tier copy), else the decompressed
//                 exponents and the SM-chunk for recovery on the GPU. Without a GPU nothing moves (UMA and
//                 CPU-only machines share memory).
//   kExpertCompute  the expert's SwiGLU FFN over its tokens on the recovered BF16 weights: on the GPU three
//                 cuBLAS BF16 GEMMs and a SwiGLU kernel (kernels/gpu_exec.h), else kernels/expert_ffn.h on a
//                 CPU thread (gate/up/down found by role)
//   kDenseCompute a BF16 GEMM of the layer's dense shape (the dense weights are not in the store: a
//                 synthetic matrix of the same size, resident, as the simulator assumes; on the GPU in device
//                 memory)
//   kRecover      on the GPU resource with a GPU: the CUDA recovery kernel (kernels/bf16_cuda.h) into device
//                 memory; with ExecOptions::verify_gpu every GPU-recovered tensor is copied back and compared
//                 with the CPU kernel's result on the same host bytes (a mismatch stops the run).
//
// Units: `io_depth` I/O threads (1 = one blocking read at a time, ZipMoE §3.3), L CPU worker threads, one
// GPU stream and one link. With a CUDA GPU the GPU stream's thread and the link's thread each drive a CUDA
// stream and wait for every op to finish on the device (so an op's recorded time is its real duration);
// without one the GPU stream is one more CPU thread running the CPU kernels ("cpu-emulated GPU stream");
// describe() says which. Each resource serves its queue by Op::priority, then submission order, like the
// simulator. Device buffers are recycled by size (cudaFree would synchronize the whole device).
//
// Buffers live in a table keyed by (expert, tensor, component, shard). An op's output is allocated when it
// runs. The residency's memory events (core/residency.h) say which components of an expert its pools hold;
// once no planned op of an expert is left (Platform::ops_planned counts them), the components no pool holds
// are freed. So the bytes alive are the pools' contents plus the data of the ops in flight; the peak is
// measured (memory_peak_bytes()).
//
// Errors: a short read, an I/O error, a checksum mismatch (a store changed under the run), a corrupt frame
// or an allocation failure stop the run: the failing op's moesim::Error (naming the chunk) is rethrown by
// run_until_idle() after every unit thread has finished its current op; the destructor joins all threads.
//
// Thread safety: submit(), run_until_idle(), memory_event() and ops_planned() are called from one thread
// (the pipeline's); the unit threads only touch the queues, the buffer table and the completion list, each
// under its own mutex.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/platform.h"
#include "exec/store_reader.h"
#include "kernels/gpu_exec.h"

namespace moesim::exec {

// Appended to the error of a store that lacks a tensor the trace names: the store, the --model and the trace
// were made for different shapes (a `weights synth --layers 4` store against a 48-layer trace), and the fix
// is to make one from the other.
inline constexpr const char* kShapeMismatchHint =
    "; make store, model and trace agree: pack the store from weights of the trace's model (`moesim weights "
    "synth --model M` without --layers/--experts), or synthesize a trace of the store's shape from a model JSON "
    "whose moe_layers and routed_experts match it (`moesim trace synth --zipf 1 --model small.json`; "
    "docs/model-format.md)";

struct ExecOptions {
  uint32_t cpu_workers = 1;  // L
  uint32_t io_depth = 1;     // I/O threads, each with one outstanding read
  bool direct_io = true;     // O_DIRECT (falls back to buffered reads with a warning where refused)
  uint64_t seed = 1;         // activations fed to the compute ops
  bool gpu = false;          // run transfers, GPU-resource recovery and compute on the CUDA GPU
  bool verify_gpu = false;   // compare every GPU-recovered tensor with the CPU kernel (costs a copy back)
};

// What exec needs of the model beyond the store: the tensor roles in ModelCosts::tensor_names order
// (Op::tensor indexes it), the experts per layer (MemoryEvent::key = layer * experts + expert), and the
// dense weights' BF16 bytes per layer.
struct ExecModel {
  std::vector<std::string> tensor_roles;
  uint32_t layers = 0;
  uint32_t experts = 0;
  uint32_t hidden = 0;  // model width (activation size)
  std::vector<uint64_t> dense_bytes;
};

// Counters of what exec really did (for the lossless statement and the reports).
struct ExecCounters {
  uint64_t chunks_read = 0, bytes_read = 0, chunks_verified = 0;
  uint64_t frames_decoded = 0, tensors_recovered = 0, expert_computes = 0, dense_computes = 0;
  uint64_t buffers_freed = 0;
  uint64_t memory_peak_bytes = 0;  // bytes of live data buffers (pool contents + data in flight), host + device
  uint64_t device_peak_bytes = 0;  // of which in device memory (GPU runs)
  uint64_t transfers = 0, transfer_bytes = 0;  // host -> device copies (GPU runs)
  uint64_t gpu_recoveries = 0, gpu_recoveries_verified = 0;
  // The runtime's own overheads over the run (seconds): from an op's submission to its start on a
  // unit that was idle (a thread wake-up), and from an op's end to the pipeline seeing it (the completion
  // hand-off). Their sum is what every dependency costs beyond the ops themselves.
  // Means (not medians: they add up along every chain of ops). pipeline_latency: the pipeline's own work per
  // completed op (op_done on the pipeline thread: building the next layer's graph, lookups, scheduling).
  double handoff_latency = 0;
  double handoff[kResourceClasses] = {};  // the same per resource class (its threads wake differently)
  double completion_latency = 0;
  // Its distribution: kRuntimeQuantiles equally likely values (the 2.5%, 7.5%, ..., 97.5% quantiles; empty when
  // no completion woke the pipeline thread). A cost that is not linear in it (a short hand-off spares a wake-up)
  // is charged wrong by its mean: the simulator can draw from these instead.
  std::vector<double> completion_quantiles;
  double pipeline_latency = 0;
  // The pipeline's work to start a layer invocation (lookups, planning, scheduling, building its graph), per op
  // of the graph it plans, up to its first submission: on the critical path, unlike the per-completion work
  // above (which it excludes).
  double plan_latency_per_op = 0;
  double plan_latency_fixed = 0;  // and per planning call: the fit is fixed + per_op * ops (least squares)
  // The rest of a planning call, after its first submission (submitting the other ready ops, waking their
  // units, freeing buffers): the submitted ops already run, but the pipeline thread is busy and the
  // completions that arrive meanwhile wait. Fitted the same way.
  double plan_tail_per_op = 0;
  double plan_tail_fixed = 0;
  // Every planned graph's own head and tail (a planning call's split among its graphs by their ops; the
  // ordinary per-completion work taken out), in the run's order: `moesim validate` feeds them to the
  // structure simulation.
  std::vector<PlanningTime> planning;
  // Per resource class (ResourceClass order): from an op's end to its unit starting the next op that was
  // already waiting (reporting the completion, taking the next one; preemption on a busy machine).
  double turnaround[kResourceClasses] = {};
  // Where the cores went: each resource's threads' CPU time over the run (seconds, summed over its units: its
  // ops and its own waking and reporting) and the pipeline thread's (the caller's, from the platform's making
  // on: planning, completions, memory events). < 0 where the clock is missing (Linux has it).
  double thread_cpu[kResourceClasses] = {-1, -1, -1, -1};
  double pipeline_cpu = -1;
};

class ExecPlatform : public Platform {
 public:
  // `store` and `estimator` must outlive the platform. `estimator` answers estimate() (the calibrated
  // profile through the simulator's cost model, injected by the caller since exec/ never includes sim/).
  ExecPlatform(const StoreReader& store, ExecModel model, const OpEstimator& estimator, ExecOptions opt);
  ~ExecPlatform() override;
  ExecPlatform(const ExecPlatform&) = delete;
  ExecPlatform& operator=(const ExecPlatform&) = delete;

  double now() const override;
  void submit(const Op& op, OpSink* sink, uint32_t token) override;
  void run_until_idle() override;
  std::vector<ResourceStats> resource_stats() const override;
  std::string describe() const override;
  double estimate(const Op& op) const override { return estimator_.estimate(op); }
  uint32_t units(ResourceClass r) const override;
  void memory_pools(const std::vector<PoolInfo>& pools) override;
  void memory_event(const MemoryEvent& e) override;
  void ops_planned(const OpGraph& graph) override;

  ExecCounters counters() const;
  bool direct_io_active() const { return store_.direct_io_active(); }

 private:
  struct Job {
    Op op;
    OpSink* sink = nullptr;
    uint32_t token = 0;
    uint64_t seq = 0;
    double submitted = 0;
    bool idle_unit = false;  // a unit was free when it was submitted
  };
  struct JobOrder {
    bool operator()(const Job& a, const Job& b) const {
      return a.op.priority != b.op.priority ? a.op.priority > b.op.priority : a.seq > b.seq;
    }
  };
  struct Resource {
    std::string name;
    uint32_t units = 1;
    std::priority_queue<Job, std::vector<Job>, JobOrder> queue;
    double busy = 0;
    uint64_t ops = 0, bytes = 0;
    uint32_t running = 0;
    std::condition_variable cv;  // its units wait here (one per resource: no thundering herd)
  };
  struct Done {
    Job job;
    OpTiming timing;
  };
  // Buffers: one per (expert key, tensor, component, shard).
  // Host: kFull (BF16), kSm, kEChunk (compressed shard), kExp (decompressed exponents); device: kDev*.
  enum class Comp : uint8_t { kFull, kSm, kEChunk, kExp, kDevFull, kDevExp, kDevSm };
  struct BufKey {
    uint32_t key;
    uint16_t tensor;
    Comp comp;
    uint16_t shard;
    bool operator==(const BufKey& o) const {
      return key == o.key && tensor == o.tensor && comp == o.comp && shard == o.shard;
    }
  };
  struct BufHash {
    size_t operator()(const BufKey& k) const {
      return (static_cast<size_t>(k.key) << 24) ^ (static_cast<size_t>(k.tensor) << 18) ^
             (static_cast<size_t>(k.comp) << 16) ^ k.shard;
    }
  };
  struct Held {
    uint32_t whole = 0, sm = 0, e = 0;  // pools holding each component
    uint32_t whole_host = 0;            // of `whole`: pools in the host tier of a discrete GPU
  };
  using DevBuf = std::shared_ptr<kernels::gpu::DeviceMemory>;
  struct DevicePool {  // freed device buffers by size, reused (shared with the buffers' deleters)
    std::mutex mu;
    std::unordered_map<size_t, std::vector<std::unique_ptr<kernels::gpu::DeviceMemory>>> free;
  };

  void unit_loop(ResourceClass r, uint32_t unit);
  void run_op(const Op& op, uint32_t unit);
  void read_op(const Op& op);
  void decompress_op(const Op& op);
  std::shared_ptr<AlignedBuffer> read_e_chunk(const Op& op, const StoreEntry& en, uint32_t key);
  void recover_op(const Op& op);
  void expert_compute_op(const Op& op, uint32_t unit);
  void dense_compute_op(const Op& op, uint32_t unit);
  void transfer_op(const Op& op, uint32_t unit);
  void recover_gpu_op(const Op& op, uint32_t unit);
  DevBuf dev_alloc(size_t bytes);
  DevBuf dev_get(const BufKey& k, const char* what, const Op& op) const;
  void dev_put(const BufKey& k, DevBuf b);
  kernels::gpu::GpuStream& stream(uint32_t unit, const Op& op);
  const StoreEntry& entry(const Op& op) const;
  const float* activations(uint32_t unit, size_t n);  // the unit's seeded input activations
  float* outputs(uint32_t unit, size_t n);
  void note_peak();  // with buf_mu_ held
  std::shared_ptr<AlignedBuffer> get(const BufKey& k, const char* what, const Op& op) const;
  std::shared_ptr<AlignedBuffer> get_or_make(const BufKey& k, size_t bytes);
  void put(const BufKey& k, std::shared_ptr<AlignedBuffer> b);
  void collect(uint32_t key);  // frees what no pool holds once no planned op of `key` is left
  void collect_pending();      // collect() the experts a pool released, where no planned op is left
  void stop_threads();

  const StoreReader& store_;
  ExecModel model_;
  const OpEstimator& estimator_;
  ExecOptions opt_;
  std::chrono::steady_clock::time_point t0_;

  mutable std::mutex mu_;  // queues, completions, stats
  std::condition_variable done_cv_;
  Resource res_[kResourceClasses];
  std::deque<Done> done_;
  uint64_t seq_ = 0;
  uint64_t outstanding_ = 0;  // submitted, not yet reported to the sink
  bool stopping_ = false;
  std::string error_;  // first op failure
  std::vector<double> handoff_, completion_;  // latency samples (the first kMaxSamples)
  double handoff_sum_[kResourceClasses] = {};
  uint64_t handoff_n_[kResourceClasses] = {};
  double pipeline_time_ = 0;                  // inside sink->op_done (pipeline thread only), no planning
  // Least squares of time = fixed + per_op * ops over the planning calls, in relative terms (each call
  // weighted by 1 / ops^2): a prefill's graphs are 100x a decode step's, and a plain fit of both would let
  // the few large ones set the line that the many small ones (the TPOT) are charged by.
  struct LineFit {
    double k = 0, sn = 0, st = 0, snn = 0, snt = 0;
    void add(double n, double t) {
      const double w = 1 / std::max(1.0, n * n);
      k += w;
      sn += w * n;
      st += w * t;
      snn += w * n * n;
      snt += w * n * t;
    }
    // {fixed, per_op}; a line that does not grow with the ops is all fixed.
    std::pair<double, double> solve() const;
  };
  LineFit plan_head_, plan_tail_;  // op_done calls that planned an invocation: before / after their 1st submit
  uint64_t planned_in_call_ = 0;   // ops planned during the current op_done call
  std::vector<uint32_t> call_graphs_;  // the sizes of the graphs planned in it
  std::vector<PlanningTime> planning_;  // per graph: head, tail (raw: with the ordinary completion work)
  std::vector<double> planning_share_;  // per graph: its share of its call
  double first_submit_ = -1;       // when the current op_done call first submitted an op after planning
  double turnaround_sum_[kResourceClasses] = {};
  uint64_t turnaround_n_[kResourceClasses] = {};
  uint64_t pipeline_calls_ = 0;
  std::vector<std::thread> threads_;
  // threads_[i]'s handle, for its CPU clock in counters() (the threads in res_ order, each resource's units)
  std::vector<std::thread::native_handle_type> handles_;
  double caller_cpu0_ = -1;  // the pipeline thread's CPU time when the platform was made

  mutable std::mutex buf_mu_;
  std::unordered_map<BufKey, std::shared_ptr<AlignedBuffer>, BufHash> bufs_;
  std::unordered_map<BufKey, DevBuf, BufHash> dbufs_;
  uint64_t live_bytes_ = 0, device_live_ = 0;
  std::shared_ptr<DevicePool> dev_pool_ = std::make_shared<DevicePool>();
  std::vector<std::unique_ptr<kernels::gpu::GpuStream>> streams_;  // per unit thread (GPU and link units)
  kernels::gpu::DeviceMemory dense_dev_;                           // the synthetic dense weights on the GPU

  // Pipeline-thread state (no lock): what pools hold, and the planned ops of every expert.
  std::vector<Held> held_;
  std::vector<uint32_t> planned_;
  std::vector<uint32_t> to_collect_;
  std::vector<PoolInfo> pools_;
  std::vector<std::vector<const StoreEntry*>> entries_;  // [key][tensor]
  std::vector<uint16_t> dense_scratch_;                  // the synthetic dense weights (largest layer)
  std::atomic<uint64_t> chunks_read_{0}, bytes_read_{0}, frames_{0}, recovered_{0}, expert_computes_{0},
      dense_computes_{0}, freed_{0}, peak_bytes_{0}, device_peak_{0}, transfers_{0}, transfer_bytes_{0},
      gpu_recoveries_{0}, gpu_verified_{0};
  std::vector<std::vector<float>> act_;  // per GPU/CPU unit: input activations (seeded)
  std::vector<std::vector<float>> out_;  // and outputs
  int role_gate_ = -1, role_up_ = -1, role_down_ = -1;
};

}  // namespace moesim::exec
