// A serving run in real time: the same serving::run as `moesim run`, on an exec::ExecPlatform reading a
// packed expert store (`moesim exec`, and the exec half of `moesim validate`). The hardware profile answers
// the schedulers' and planner's estimates (through the simulator's cost model, wired here because exec/
// never includes sim/).
#pragma once

#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/hardware_profile.h"
#include "core/profile_reads.h"
#include "exec/exec_platform.h"
#include "serving/pipeline.h"
#include "serving/system.h"

namespace moesim::harness {

struct ExecRunOptions {
  std::string store;
  uint32_t workers = 1;
  uint32_t io_depth = 1;
  bool direct_io = true;
  exec::IoBackend io = exec::IoBackend::kPread;
  uint64_t seed = 1;
  bool gpu = false;  // the CUDA path (resolved from --gpu)
  bool verify_gpu = false;
};

struct ExecReport {
  exec::ExecCounters counters;
  bool direct_io = false;
  std::string io = "pread";  // the backend used
  std::string io_fallback;   // why --io uring fell back to pread ("" otherwise)
  std::string platform;      // describe()
  bool gpu = false;          // the CUDA path ran
  std::vector<ResourceStats> resources;
};

// Checks that the store holds every tensor the trace's layers and experts need with the sizes the costs
// assume (the model the store was packed from), then runs. Throws moesim::Error naming the store. `reads`,
// when given, gets the profile's quantities its estimates read (the planner's, the schedulers').
serving::RunResult run_exec(const serving::SystemConfig& cfg, const traces::LookupStream& stream,
                            const traces::TraceInfo& info, const serving::SourcedCosts& costs,
                            const HardwareProfile& hw, const ExecRunOptions& opt, Json* config,
                            ExecReport* report, HwReads* reads = nullptr);

// CPU contention (sim/cpu_cores.h): exec's CPU-bound ops are the CPU workers' and, without a CUDA GPU, the
// GPU stream's (a CPU thread then). op_work() gives each op of a recorded run its work on `cores` cores: its
// wall time, deflated by the share of a core it had while the other CPU-bound ops ran (other ops: their wall
// time). What calibrate fits and validate's structure check replays, with the simulator's contention model
// (SimOptions::cpu_cores) putting the sharing back.
// An SSD read whose CPU time exec recorded (OpTiming::cpu: the I/O thread's own work, the kernel's O_DIRECT
// path, the checksum, a full tensor's merge) is a device phase, then that CPU work
// (HardwareProfile::read_cpu) as one more CPU-bound op at the read's end: it deflates the ops beside it, and
// its device time is the wall time less the CPU phase at the share of a core it had there. Only with
// `split_reads` (O_DIRECT reads: a buffered read that the page cache serves is a copy, CPU through and
// through, and leaves no device time to fit). A CPU worker's fused read (Op::read_bytes) splits the same way,
// always: the device time of its read, then its CPU work (the decompression), which the simulator replays as
// such (sim/sim_platform.h).
bool cpu_bound_op(const Op& op, bool gpu);
struct OpWork {
  std::vector<double> work;  // per event: a CPU-bound op's work, a read's device time, else wall time
  std::vector<double>
      read_cpu;  // per event: a read's CPU work after the device (0: none recorded, not a read)
};
OpWork op_work(const std::vector<TimelineEvent>& timeline, uint32_t cores, bool gpu, bool split_reads);
// The CPUs this process may run on (at least 1).
uint32_t machine_cores();

// A moesim built without exec (-DMOESIM_EXEC=OFF, docs/build.md) refuses what needs it with a UsageError
// "this moesim was built without exec (-DMOESIM_EXEC=OFF): <what>": refuse_without_exec always throws it,
// require_exec only in such a build (and returns otherwise), so a command can refuse before any work.
bool exec_built();
[[noreturn]] void refuse_without_exec(const std::string& what);
void require_exec(const std::string& what);

// The "exec" section of a run's JSON: what really ran and the lossless statement.
Json exec_report_json(const ExecReport& r);
std::string exec_report_text(const ExecReport& r);
// "I/O 4.3 s, CPU workers 7.5 s, GPU stream 6 s, pipeline 7.1 s" (ExecCounters::thread_cpu, pipeline_cpu;
// "" without the clocks).
std::string thread_cpu_text(const exec::ExecCounters& c);

}  // namespace moesim::harness
