#include "exec/exec_platform.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "base/error.h"
#include "base/rng.h"
#include "exec/thread_cpu.h"
#include "kernels/bf16.h"
#include "kernels/bf16_cuda.h"
#include "kernels/codec.h"
#include "kernels/expert_ffn.h"

namespace moesim::exec {
namespace {

constexpr size_t kMaxSamples = size_t{1} << 20;

bool role_is(const std::string& role, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (role == n) return true;
  return false;
}

std::string op_label(const Op& op) {
  std::string s = op_kind_name(op.kind);
  if (op.layer != kNoLabel) s += " layer " + std::to_string(op.layer);
  if (op.expert != kNoLabel) s += " expert " + std::to_string(op.expert);
  if (op.tensor != kNoLabel) s += " tensor " + std::to_string(op.tensor);
  if (op.shard != kNoLabel) s += " shard " + std::to_string(op.shard);
  return s;
}

}  // namespace

ExecPlatform::ExecPlatform(const StoreReader& store, ExecModel model, const OpEstimator& estimator,
                           ExecOptions opt)
    : store_(store), model_(std::move(model)), estimator_(estimator), opt_(opt) {
  if (opt_.cpu_workers == 0) throw Error("exec: at least one CPU worker is needed");
  if (opt_.io_depth == 0) throw Error("exec: the I/O depth must be at least 1");
  if (model_.layers == 0 || model_.experts == 0 || model_.tensor_roles.empty())
    throw Error("exec: the model has no experts");
  // Every (layer, expert, role) the pipeline can name must be in the store: checked once, up front.
  const uint32_t keys = model_.layers * model_.experts;
  entries_.assign(keys, std::vector<const StoreEntry*>(model_.tensor_roles.size(), nullptr));
  for (uint32_t l = 0; l < model_.layers; ++l)
    for (uint32_t e = 0; e < model_.experts; ++e)
      for (size_t t = 0; t < model_.tensor_roles.size(); ++t) {
        const StoreEntry* en = store_.find(l, e, model_.tensor_roles[t]);
        if (!en)
          throw Error(store_.path() + ": the store has no tensor " + model_.tensor_roles[t] + " for layer " +
                      std::to_string(l) + " expert " + std::to_string(e) + " (the trace has " +
                      std::to_string(model_.layers) + " layers x " + std::to_string(model_.experts) +
                      " experts)" + kShapeMismatchHint);
        entries_[l * model_.experts + e][t] = en;
      }
  for (size_t t = 0; t < model_.tensor_roles.size(); ++t) {
    const std::string& r = model_.tensor_roles[t];
    if (role_is(r, {"gate_proj", "w1"})) role_gate_ = static_cast<int>(t);
    if (role_is(r, {"up_proj", "w3"})) role_up_ = static_cast<int>(t);
    if (role_is(r, {"down_proj", "w2"})) role_down_ = static_cast<int>(t);
  }
  if (role_gate_ < 0 || role_up_ < 0 || role_down_ < 0)
    throw Error(store_.path() +
                ": exec computes SwiGLU experts and needs gate/up/down tensors "
                "(gate_proj/up_proj/down_proj or w1/w3/w2)");
  if (model_.hidden == 0) {
    const StoreEntry& g = *entries_[0][static_cast<size_t>(role_gate_)];
    model_.hidden = g.shape.size() == 2 ? static_cast<uint32_t>(g.shape[1]) : 0;
  }
  if (model_.hidden == 0)
    throw Error(store_.path() + ": cannot tell the model width from the gate tensor's shape");
  held_.assign(keys, Held{});
  planned_.assign(keys, 0);
  uint64_t dense_max = 0;
  for (uint64_t b : model_.dense_bytes) dense_max = std::max(dense_max, b);
  // Small values: the GEMM's time does not depend on them, and no denormals slow it down.
  dense_scratch_.assign(dense_max / 2, kernels::f32_to_bf16(0.01f));

  // The resource vocabulary of core/op_graph.h: exec's SSD reads are issued by its I/O threads.
  for (ResourceClass r : {ResourceClass::kCpu, ResourceClass::kGpu, ResourceClass::kLink})
    res_[static_cast<int>(r)].name = resource_pool_name(r);
  res_[static_cast<int>(ResourceClass::kSsd)].name = kIoThreadPool;
  res_[static_cast<int>(ResourceClass::kSsd)].units = opt_.io_depth;
  res_[static_cast<int>(ResourceClass::kCpu)].units = opt_.cpu_workers;
  t0_ = std::chrono::steady_clock::now();
  uint32_t unit_threads = 0;
  for (const auto& r : res_) unit_threads += r.units;
  act_.resize(unit_threads);
  out_.resize(unit_threads);
  streams_.resize(unit_threads);
  if (opt_.gpu) {
    // One CUDA stream (and cuBLAS handle) per GPU and link unit, made here so that no op pays for it.
    uint32_t i = 0;
    for (int r = 0; r < kResourceClasses; ++r)
      for (uint32_t u = 0; u < res_[r].units; ++u, ++i)
        if (r == static_cast<int>(ResourceClass::kGpu) || r == static_cast<int>(ResourceClass::kLink))
          streams_[i] = std::make_unique<kernels::gpu::GpuStream>(opt_.seed ^ (uint64_t{i} << 32));
    if (!dense_scratch_.empty()) {
      dense_dev_ = kernels::gpu::DeviceMemory(dense_scratch_.size() * 2);
      streams_[res_[0].units + res_[1].units]->upload(dense_dev_.data(), dense_scratch_.data(),
                                                      dense_scratch_.size() * 2);
    }
  }
  uint32_t index = 0;
  try {
    for (int r = 0; r < kResourceClasses; ++r)
      for (uint32_t u = 0; u < res_[r].units; ++u, ++index) {
        threads_.emplace_back([this, r, index] { unit_loop(static_cast<ResourceClass>(r), index); });
        handles_.push_back(threads_.back().native_handle());
      }
  } catch (...) {
    stop_threads();
    throw;
  }
  caller_cpu0_ = thread_cpu_seconds();
}

ExecPlatform::~ExecPlatform() {
  stop_threads();
}

void ExecPlatform::stop_threads() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  for (auto& r : res_) r.cv.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

double ExecPlatform::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

uint32_t ExecPlatform::units(ResourceClass r) const {
  return res_[static_cast<int>(r)].units;
}

std::string ExecPlatform::describe() const {
  return "exec: " + store_.path() + " (" + std::to_string(opt_.cpu_workers) + " CPU workers, " +
         std::to_string(opt_.io_depth) + " I/O thread" + (opt_.io_depth > 1 ? "s" : "") + ", " +
         (store_.direct_io_active() ? "O_DIRECT" : "buffered reads") + ", " +
         (store_.io_backend() == IoBackend::kUring ? "io_uring, " : "") +
         (opt_.gpu ? "CUDA GPU " + kernels::cuda_device_description()
                   : std::string("cpu-emulated GPU stream")) +
         (opt_.verify_gpu ? ", GPU recoveries verified" : "") + ")";
}

void ExecPlatform::submit(const Op& op, OpSink* sink, uint32_t token) {
  if (planned_in_call_ > 0 && first_submit_ < 0) first_submit_ = now();  // the pipeline thread's own field
  {
    std::lock_guard<std::mutex> lk(mu_);
    Resource& r = res_[static_cast<int>(op.resource)];
    const bool idle = r.queue.size() + r.running < r.units;
    r.queue.push(Job{op, sink, token, seq_++, now(), idle});
    ++outstanding_;
    if (!idle) return;  // every unit is busy: the next one to finish takes it
  }
  res_[static_cast<int>(op.resource)].cv.notify_one();
}

void ExecPlatform::unit_loop(ResourceClass rc, uint32_t unit) {
  Resource& r = res_[static_cast<int>(rc)];
  const auto ri = static_cast<size_t>(rc);
  double last_end = -1;
  for (;;) {
    Job job;
    bool direct = false;  // the next op was waiting: no sleep between the two
    {
      std::unique_lock<std::mutex> lk(mu_);
      direct = !r.queue.empty();
      r.cv.wait(lk, [&] { return stopping_ || !r.queue.empty(); });
      if (stopping_) return;
      job = r.queue.top();
      r.queue.pop();
      ++r.running;
    }
    OpTiming t;
    t.unit = unit;
    t.submitted = job.submitted;
    t.start = now();
    const double cpu0 = thread_cpu_seconds();
    std::string failure;
    try {
      run_op(job.op, unit);
    } catch (const std::bad_alloc&) {
      failure = "exec: out of memory running " + op_label(job.op);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    t.end = now();
    const double cpu1 = thread_cpu_seconds();
    if (cpu0 >= 0 && cpu1 >= cpu0) t.cpu = cpu1 - cpu0;
    if (job.idle_unit) t.handoff = t.start - job.submitted;
    if (direct && last_end >= 0) t.turnaround = t.start - last_end;
    {
      std::lock_guard<std::mutex> lk(mu_);
      r.busy += t.end - t.start;
      --r.running;
      ++r.ops;
      r.bytes += job.op.bytes;
      if (!failure.empty() && error_.empty()) error_ = failure;
      done_.push_back(Done{job, t});
      if (job.idle_unit) {
        if (handoff_.size() < kMaxSamples) handoff_.push_back(t.start - job.submitted);
        handoff_sum_[ri] += t.start - job.submitted;
        ++handoff_n_[ri];
      }
      if (direct && last_end >= 0) {
        turnaround_sum_[ri] += t.start - last_end;
        ++turnaround_n_[ri];
      }
    }
    done_cv_.notify_one();
    last_end = t.end;
  }
}

void ExecPlatform::run_until_idle() {
  double prev_end = now();
  for (;;) {
    Done d;
    bool slept = false;
    double popped = 0;
    {
      std::unique_lock<std::mutex> lk(mu_);
      slept = done_.empty();
      done_cv_.wait(lk, [&] { return !done_.empty() || outstanding_ == 0 || !error_.empty(); });
      if (!error_.empty()) {
        // Stop: drop what is queued, let running ops finish, then report the first failure.
        for (auto& r : res_)
          while (!r.queue.empty()) r.queue.pop();
        const std::string msg = error_;
        lk.unlock();
        stop_threads();
        throw Error(msg);
      }
      if (done_.empty()) return;  // outstanding_ == 0
      d = done_.front();
      done_.pop_front();
      popped = now();
      // A completion that woke the sleeping pipeline thread: the pure hand-off, without waiting for the
      // pipeline to finish other completions (that queueing is the simulator's to model).
      if (slept && completion_.size() < kMaxSamples) completion_.push_back(popped - d.timing.end);
    }
    const Op& op = d.job.op;
    const bool keyed = op.layer != kNoLabel && op.expert != kNoLabel;
    const uint32_t key = keyed ? op.layer * model_.experts + op.expert : 0;
    if (keyed && planned_[key] > 0) --planned_[key];
    // Graphs planned outside a completion (the first, when the run starts) cost the run nothing measured.
    for (uint32_t g : call_graphs_) {
      planning_.push_back(PlanningTime{g, 0, 0});
      planning_share_.push_back(0);
    }
    call_graphs_.clear();
    planned_in_call_ = 0;
    first_submit_ = -1;
    d.job.sink->op_done(d.job.token, d.timing);  // may plan and submit more ops, and move memory
    {
      std::lock_guard<std::mutex> lk(mu_);
      --outstanding_;
    }
    if (keyed && planned_[key] == 0) collect(key);
    collect_pending();
    // The pipeline thread's time for this completion: from when it could take it (it woke for it, or it
    // finished the previous one) to now; preemption on a busy machine included.
    const double end = now();
    const double turn_start = slept ? popped : prev_end;
    const double spent = end - turn_start;
    prev_end = end;
    if (planned_in_call_ > 0) {
      // Split at the first submission: the ops wait for the head; the tail only keeps this thread busy.
      const double head = std::clamp((first_submit_ >= 0 ? first_submit_ : end) - turn_start, 0.0, spent);
      const auto n = static_cast<double>(planned_in_call_);
      plan_head_.add(n, head);
      plan_tail_.add(n, spent - head);
      for (uint32_t g : call_graphs_) {
        const double share = static_cast<double>(g) / n;
        planning_.push_back(PlanningTime{g, head * share, (spent - head) * share});
        planning_share_.push_back(share);
      }
      call_graphs_.clear();
    } else {
      pipeline_time_ += spent;
      ++pipeline_calls_;
    }
  }
}

std::vector<ResourceStats> ExecPlatform::resource_stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<ResourceStats> out;
  for (ResourceClass rc :
       {ResourceClass::kSsd, ResourceClass::kCpu, ResourceClass::kGpu, ResourceClass::kLink}) {
    const Resource& r = res_[static_cast<int>(rc)];
    out.push_back(ResourceStats{r.name, r.units, r.busy, r.ops, r.bytes});
  }
  return out;
}

void ExecPlatform::memory_pools(const std::vector<PoolInfo>& pools) {
  pools_ = pools;
}

void ExecPlatform::memory_event(const MemoryEvent& e) {
  if (e.key >= held_.size())
    throw Error("exec: memory event for expert key " + std::to_string(e.key) + " outside the model");
  Held& h = held_[e.key];
  // What the pool keeps of the expert: ZipMoE's C pool holds the whole expert compressed (its SM-chunks
  // and E-chunks; the event says kWhole), every other pool the component the event names.
  const bool compressed = e.pool < pools_.size() && pools_[e.pool].name == "C";
  std::vector<uint32_t*> parts;
  if (compressed) {
    parts = {&h.sm, &h.e};
  } else if (e.part == TensorPart::kWhole) {
    parts = {&h.whole};
    if (e.pool < pools_.size() && pools_[e.pool].tier == MemoryTier::kHost) parts.push_back(&h.whole_host);
  } else {
    parts = {e.part == TensorPart::kSm ? &h.sm : &h.e};
  }
  for (uint32_t* c : parts) {
    if (e.adds()) {
      ++*c;
    } else {
      if (*c == 0)
        throw Error("exec: internal error: a pool released a component of expert key " +
                    std::to_string(e.key) + " it did not hold");
      --*c;
    }
  }
  // Collected later: the events of an invocation come before its ops are planned (ops_planned), and an
  // expert this invocation demotes may still be computed from the component it leaves.
  if (!e.adds()) to_collect_.push_back(e.key);
}

void ExecPlatform::ops_planned(const OpGraph& graph) {
  planned_in_call_ += graph.size();
  call_graphs_.push_back(static_cast<uint32_t>(graph.size()));
  for (size_t i = 0; i < graph.size(); ++i) {
    const Op& op = graph.op(static_cast<uint32_t>(i));
    if (op.layer == kNoLabel || op.expert == kNoLabel) continue;
    const uint32_t key = op.layer * model_.experts + op.expert;
    if (key >= planned_.size()) throw Error("exec: an op names " + op_label(op) + " outside the model");
    ++planned_[key];
  }
  collect_pending();
}

void ExecPlatform::collect_pending() {
  for (uint32_t key : to_collect_)
    if (planned_[key] == 0) collect(key);
  to_collect_.clear();
}

void ExecPlatform::collect(uint32_t key) {
  const Held& h = held_[key];
  std::lock_guard<std::mutex> lk(buf_mu_);
  for (uint16_t t = 0; t < model_.tensor_roles.size(); ++t) {
    auto drop = [&](Comp c, uint16_t shard) {
      auto it = bufs_.find(BufKey{key, t, c, shard});
      if (it == bufs_.end()) return;
      live_bytes_ -= it->second->capacity();
      bufs_.erase(it);
      freed_.fetch_add(1, std::memory_order_relaxed);
    };
    auto drop_dev = [&](Comp c) {
      auto it = dbufs_.find(BufKey{key, t, c, 0});
      if (it == dbufs_.end()) return;
      live_bytes_ -= it->second->size();
      device_live_ -= it->second->size();
      dbufs_.erase(it);
      freed_.fetch_add(1, std::memory_order_relaxed);
    };
    // The full tensor: the device copy stays while a device (or unified) pool holds the expert; the host copy
    // while a host-tier pool does, or while it is the only copy (computed on the CPU, no GPU).
    const bool dev_full = dbufs_.count(BufKey{key, t, Comp::kDevFull, 0}) > 0;
    if (h.whole - h.whole_host == 0) drop_dev(Comp::kDevFull);
    if (h.whole_host == 0 && (h.whole == 0 || dev_full)) drop(Comp::kFull, 0);
    drop_dev(Comp::kDevExp);
    drop_dev(Comp::kDevSm);
    if (h.sm == 0) drop(Comp::kSm, 0);
    drop(Comp::kExp, 0);
    if (h.e == 0) {
      const StoreEntry* en = entries_[key][t];
      for (uint16_t s = 0; s < en->shards.size(); ++s) drop(Comp::kEChunk, s);
    }
  }
}

const StoreEntry& ExecPlatform::entry(const Op& op) const {
  if (op.layer >= model_.layers || op.expert >= model_.experts || op.tensor >= model_.tensor_roles.size())
    throw Error("exec: " + op_label(op) + " names no tensor of the store");
  return *entries_[op.layer * model_.experts + op.expert][op.tensor];
}

std::shared_ptr<AlignedBuffer> ExecPlatform::get(const BufKey& k, const char* what, const Op& op) const {
  std::lock_guard<std::mutex> lk(buf_mu_);
  auto it = bufs_.find(k);
  if (it == bufs_.end())
    throw Error("exec: internal error: " + op_label(op) + " found no " + what + " in memory");
  return it->second;
}

void ExecPlatform::put(const BufKey& k, std::shared_ptr<AlignedBuffer> b) {
  std::lock_guard<std::mutex> lk(buf_mu_);
  auto& slot = bufs_[k];
  if (slot) live_bytes_ -= slot->capacity();
  live_bytes_ += b->capacity();
  slot = std::move(b);
  note_peak();
}

void ExecPlatform::note_peak() {
  uint64_t peak = peak_bytes_.load(std::memory_order_relaxed);
  while (live_bytes_ > peak && !peak_bytes_.compare_exchange_weak(peak, live_bytes_)) {
  }
  uint64_t dpeak = device_peak_.load(std::memory_order_relaxed);
  while (device_live_ > dpeak && !device_peak_.compare_exchange_weak(dpeak, device_live_)) {
  }
}

ExecPlatform::DevBuf ExecPlatform::dev_alloc(size_t bytes) {
  std::unique_ptr<kernels::gpu::DeviceMemory> m;
  {
    std::lock_guard<std::mutex> lk(dev_pool_->mu);
    auto it = dev_pool_->free.find(bytes);
    if (it != dev_pool_->free.end() && !it->second.empty()) {
      m = std::move(it->second.back());
      it->second.pop_back();
    }
  }
  if (!m) {
    try {
      m = std::make_unique<kernels::gpu::DeviceMemory>(bytes);
    } catch (const Error&) {
      // The device is full: give back the recycled buffers of other sizes and try once more.
      {
        std::lock_guard<std::mutex> lk(dev_pool_->mu);
        dev_pool_->free.clear();
      }
      m = std::make_unique<kernels::gpu::DeviceMemory>(bytes);
    }
  }
  std::shared_ptr<DevicePool> pool = dev_pool_;
  return DevBuf(m.release(), [pool](kernels::gpu::DeviceMemory* p) {
    std::unique_ptr<kernels::gpu::DeviceMemory> own(p);
    std::lock_guard<std::mutex> lk(pool->mu);
    pool->free[own->size()].push_back(std::move(own));
  });
}

ExecPlatform::DevBuf ExecPlatform::dev_get(const BufKey& k, const char* what, const Op& op) const {
  std::lock_guard<std::mutex> lk(buf_mu_);
  auto it = dbufs_.find(k);
  if (it == dbufs_.end())
    throw Error("exec: internal error: " + op_label(op) + " found no " + what + " in device memory");
  return it->second;
}

void ExecPlatform::dev_put(const BufKey& k, DevBuf b) {
  std::lock_guard<std::mutex> lk(buf_mu_);
  auto& slot = dbufs_[k];
  if (slot) {
    live_bytes_ -= slot->size();
    device_live_ -= slot->size();
  }
  live_bytes_ += b->size();
  device_live_ += b->size();
  slot = std::move(b);
  note_peak();
}

kernels::gpu::GpuStream& ExecPlatform::stream(uint32_t unit, const Op& op) {
  if (unit >= streams_.size() || !streams_[unit])
    throw Error("exec: internal error: " + op_label(op) + " ran on a unit without a CUDA stream");
  return *streams_[unit];
}

std::shared_ptr<AlignedBuffer> ExecPlatform::get_or_make(const BufKey& k, size_t bytes) {
  {
    std::lock_guard<std::mutex> lk(buf_mu_);
    auto it = bufs_.find(k);
    if (it != bufs_.end() && it->second->size() == bytes) return it->second;
  }
  auto b = std::make_shared<AlignedBuffer>(bytes);
  std::lock_guard<std::mutex> lk(buf_mu_);
  auto& slot = bufs_[k];
  if (slot && slot->size() == bytes) return slot;  // another shard's worker made it first
  if (slot) live_bytes_ -= slot->capacity();
  live_bytes_ += b->capacity();
  slot = b;
  note_peak();
  return b;
}

void ExecPlatform::run_op(const Op& op, uint32_t unit) {
  switch (op.kind) {
    case OpKind::kSsdRead:
      read_op(op);
      break;
    case OpKind::kDecompress:
      decompress_op(op);
      break;
    case OpKind::kRecover:
      if (opt_.gpu && op.resource == ResourceClass::kGpu) {
        recover_gpu_op(op, unit);
      } else {
        recover_op(op);
      }
      break;
    case OpKind::kTransfer:
      if (opt_.gpu) transfer_op(op, unit);  // else shared memory: nothing to move (see the header)
      break;
    case OpKind::kExpertCompute:
      expert_compute_op(op, unit);
      break;
    case OpKind::kDenseCompute:
      dense_compute_op(op, unit);
      break;
  }
}

void ExecPlatform::read_op(const Op& op) {
  const StoreEntry& en = entry(op);
  const uint32_t key = op.layer * model_.experts + op.expert;
  auto count = [&](const AlignedBuffer& b) {
    chunks_read_.fetch_add(1, std::memory_order_relaxed);
    bytes_read_.fetch_add(b.size(), std::memory_order_relaxed);
  };
  if (op.part == TensorPart::kSm) {
    auto b = std::make_shared<AlignedBuffer>(store_.read_chunk(en, -1));
    count(*b);
    put(BufKey{key, op.tensor, Comp::kSm, 0}, std::move(b));
    return;
  }
  if (op.part == TensorPart::kE) {
    if (op.shard >= en.shards.size())
      throw Error(store_.path() + ": " + en.label() + " has " + std::to_string(en.shards.size()) +
                  " E-chunk shards; the run asked for shard " + std::to_string(op.shard) +
                  " (run with the store's K: --shards " + std::to_string(en.shards.size()) + ")");
    auto b = std::make_shared<AlignedBuffer>(store_.read_chunk(en, op.shard));
    count(*b);
    put(BufKey{key, op.tensor, Comp::kEChunk, op.shard}, std::move(b));
    return;
  }
  // A whole tensor: the SM-chunk and the raw exponent chunks, merged into BF16 here.
  if (en.codec != kernels::CodecId::kRaw)
    throw Error(store_.path() + ": " + en.label() + " is stored compressed (" +
                kernels::make_codec(en.codec, en.level)->name() +
                "); full-tensor offloading reads whole tensors: pack the store with --codec raw");
  // One request per chunk, all in flight at once with io_uring (sequential preads otherwise).
  std::vector<int> which{-1};
  for (uint32_t s = 0; s < en.shards.size(); ++s) which.push_back(static_cast<int>(s));
  const std::vector<AlignedBuffer> chunks = store_.read_chunks(en, which);
  const AlignedBuffer& sm = chunks[0];
  count(sm);
  auto full = std::make_shared<AlignedBuffer>(en.bf16_bytes());
  auto* out = reinterpret_cast<uint16_t*>(full->data());
  for (uint32_t s = 0; s < en.shards.size(); ++s) {
    const AlignedBuffer& e = chunks[s + 1];
    count(e);
    const uint64_t b = en.shard_begin(s), n = en.shard_begin(s + 1) - b;
    if (e.size() != n)
      throw Error(store_.path() + ": " + en.chunk_label(static_cast<int>(s)) +
                  " has the wrong size for a raw chunk");
    kernels::merge_bf16(e.data(), sm.data() + b, n, out + b);
  }
  recovered_.fetch_add(1, std::memory_order_relaxed);
  put(BufKey{key, op.tensor, Comp::kFull, 0}, std::move(full));
}

void ExecPlatform::decompress_op(const Op& op) {
  const StoreEntry& en = entry(op);
  const uint32_t key = op.layer * model_.experts + op.expert;
  if (op.shard >= en.shards.size())
    throw Error(store_.path() + ": " + en.label() + " has " + std::to_string(en.shards.size()) +
                " E-chunk shards; the run asked for shard " + std::to_string(op.shard));
  // A fused read (ZipMoE §4's prototype): this worker reads the E-chunk itself, the way every read of the run
  // goes (--io: through the page cache when buffered, as the prototype reads; O_DIRECT otherwise, so that a
  // comparison with offloading reads alike), and keeps it where an I/O thread's read would have put it (the
  // pools may keep the expert compressed).
  auto chunk = op.fused_read() ? read_e_chunk(op, en, key)
                               : get(BufKey{key, op.tensor, Comp::kEChunk, op.shard}, "E-chunk", op);
  auto exp = get_or_make(BufKey{key, op.tensor, Comp::kExp, 0}, en.elements);
  const uint64_t b = en.shard_begin(op.shard), n = en.shard_begin(op.shard + 1u) - b;
  const std::string what = store_.path() + ": " + en.chunk_label(op.shard);
  static thread_local std::map<std::pair<int, int>, std::unique_ptr<kernels::Codec>> codecs;
  auto& c = codecs[{static_cast<int>(en.codec), en.level}];
  if (!c) c = kernels::make_codec(en.codec, en.level);
  // The stored bytes were checked against the index's checksum when read; the frame's own content check
  // (zstd checksum, lz4 trailer) is verified too, so the exponents are known to be exact.
  c->decompress(chunk->data(), chunk->size(), exp->data() + b, n, what.c_str(), kernels::FrameCheck::kVerify);
  frames_.fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<AlignedBuffer> ExecPlatform::read_e_chunk(const Op& op, const StoreEntry& en, uint32_t key) {
  auto b = std::make_shared<AlignedBuffer>(opt_.direct_io ? store_.read_chunk(en, op.shard)
                                                          : store_.read_chunk_buffered(en, op.shard));
  chunks_read_.fetch_add(1, std::memory_order_relaxed);
  bytes_read_.fetch_add(b->size(), std::memory_order_relaxed);
  put(BufKey{key, op.tensor, Comp::kEChunk, op.shard}, b);
  return b;
}

void ExecPlatform::recover_op(const Op& op) {
  const StoreEntry& en = entry(op);
  const uint32_t key = op.layer * model_.experts + op.expert;
  auto exp = get(BufKey{key, op.tensor, Comp::kExp, 0}, "decompressed exponents", op);
  auto sm = get(BufKey{key, op.tensor, Comp::kSm, 0}, "SM-chunk", op);
  auto full = std::make_shared<AlignedBuffer>(en.bf16_bytes());
  kernels::merge_bf16(exp->data(), sm->data(), en.elements, reinterpret_cast<uint16_t*>(full->data()));
  recovered_.fetch_add(1, std::memory_order_relaxed);
  put(BufKey{key, op.tensor, Comp::kFull, 0}, std::move(full));
}

void ExecPlatform::transfer_op(const Op& op, uint32_t unit) {
  const StoreEntry& en = entry(op);
  const uint32_t key = op.layer * model_.experts + op.expert;
  std::shared_ptr<AlignedBuffer> full, exp, sm;
  {
    std::lock_guard<std::mutex> lk(buf_mu_);
    auto find = [&](Comp c) {
      auto it = bufs_.find(BufKey{key, op.tensor, c, 0});
      return it == bufs_.end() ? nullptr : it->second;
    };
    full = find(Comp::kFull);
    if (!full) {
      exp = find(Comp::kExp);
      sm = find(Comp::kSm);
    }
  }
  kernels::gpu::GpuStream& s = stream(unit, op);
  try {
    if (full) {  // the BF16 tensor: recovered on the CPU, read whole, or a host-tier copy
      DevBuf d = dev_alloc(en.bf16_bytes());
      s.upload(d->data(), full->data(), en.bf16_bytes());
      dev_put(BufKey{key, op.tensor, Comp::kDevFull, 0}, std::move(d));
      transfer_bytes_.fetch_add(en.bf16_bytes(), std::memory_order_relaxed);
    } else {  // the two streams the GPU recovers the tensor from
      if (!exp || !sm)
        throw Error(std::string("internal error: no ") + (exp ? "SM-chunk" : "decompressed exponents") +
                    " in host memory to copy to the GPU");
      DevBuf de = dev_alloc(en.elements), ds = dev_alloc(en.elements);
      s.upload(de->data(), exp->data(), en.elements);
      s.upload(ds->data(), sm->data(), en.elements);
      dev_put(BufKey{key, op.tensor, Comp::kDevExp, 0}, std::move(de));
      dev_put(BufKey{key, op.tensor, Comp::kDevSm, 0}, std::move(ds));
      transfer_bytes_.fetch_add(2 * en.elements, std::memory_order_relaxed);
    }
  } catch (const Error& e) {
    throw Error("exec: " + op_label(op) + " (" + store_.path() + ": " + en.label() + "): " + e.what());
  }
  transfers_.fetch_add(1, std::memory_order_relaxed);
}

void ExecPlatform::recover_gpu_op(const Op& op, uint32_t unit) {
  const StoreEntry& en = entry(op);
  const uint32_t key = op.layer * model_.experts + op.expert;
  DevBuf de = dev_get(BufKey{key, op.tensor, Comp::kDevExp, 0}, "decompressed exponents", op);
  DevBuf ds = dev_get(BufKey{key, op.tensor, Comp::kDevSm, 0}, "SM-chunk", op);
  kernels::gpu::GpuStream& s = stream(unit, op);
  DevBuf out;
  try {
    out = dev_alloc(en.bf16_bytes());
    s.merge(de->data(), ds->data(), en.elements, out->data());
  } catch (const Error& e) {
    throw Error("exec: " + op_label(op) + " (" + store_.path() + ": " + en.label() + "): " + e.what());
  }
  if (opt_.verify_gpu) {
    // The device's tensor against the CPU kernel on the same host bytes (still held: this op is planned).
    auto exp = get(BufKey{key, op.tensor, Comp::kExp, 0}, "decompressed exponents", op);
    auto sm = get(BufKey{key, op.tensor, Comp::kSm, 0}, "SM-chunk", op);
    std::vector<uint16_t> got(en.elements), want(en.elements);
    s.download(got.data(), out->data(), en.bf16_bytes());
    kernels::merge_bf16(exp->data(), sm->data(), en.elements, want.data());
    if (got != want) {
      size_t i = 0;
      while (got[i] == want[i]) ++i;
      throw Error("exec: " + store_.path() + ": " + en.label() +
                  ": the GPU-recovered tensor differs from the CPU "
                  "kernel's at value " +
                  std::to_string(i) + " (" + std::to_string(got[i]) + " != " + std::to_string(want[i]) + ")");
    }
    gpu_verified_.fetch_add(1, std::memory_order_relaxed);
  }
  recovered_.fetch_add(1, std::memory_order_relaxed);
  gpu_recoveries_.fetch_add(1, std::memory_order_relaxed);
  dev_put(BufKey{key, op.tensor, Comp::kDevFull, 0}, std::move(out));
}

const float* ExecPlatform::activations(uint32_t unit, size_t n) {
  auto& x = act_[unit];
  if (x.size() < n) {  // seeded values, extended as larger batches come
    Rng rng(opt_.seed ^ (uint64_t{unit} << 32) ^ x.size());
    const size_t old = x.size();
    x.resize(n);
    for (size_t i = old; i < n; ++i) x[i] = static_cast<float>(rng.uniform() - 0.5);
  }
  return x.data();
}

float* ExecPlatform::outputs(uint32_t unit, size_t n) {
  auto& y = out_[unit];
  if (y.size() < n) y.resize(n);
  return y.data();
}

void ExecPlatform::expert_compute_op(const Op& op, uint32_t unit) {
  if (op.tokens == 0) return;
  const uint32_t key = op.layer * model_.experts + op.expert;
  const StoreEntry& ge = *entries_[key][static_cast<size_t>(role_gate_)];
  if (ge.shape.size() != 2) throw Error(store_.path() + ": " + ge.label() + " is not a matrix");
  const auto inter = static_cast<uint32_t>(ge.shape[0]);
  const auto hidden = static_cast<uint32_t>(ge.shape[1]);
  if (opt_.gpu && op.resource == ResourceClass::kGpu) {
    auto dg = dev_get(BufKey{key, static_cast<uint16_t>(role_gate_), Comp::kDevFull, 0}, "gate tensor", op);
    auto du = dev_get(BufKey{key, static_cast<uint16_t>(role_up_), Comp::kDevFull, 0}, "up tensor", op);
    auto dd = dev_get(BufKey{key, static_cast<uint16_t>(role_down_), Comp::kDevFull, 0}, "down tensor", op);
    try {
      stream(unit, op).expert_ffn(dg->data(), du->data(), dd->data(), hidden, inter, op.tokens);
    } catch (const Error& e) {
      throw Error("exec: " + op_label(op) + ": " + e.what());
    }
    expert_computes_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  auto g = get(BufKey{key, static_cast<uint16_t>(role_gate_), Comp::kFull, 0}, "gate tensor", op);
  auto u = get(BufKey{key, static_cast<uint16_t>(role_up_), Comp::kFull, 0}, "up tensor", op);
  auto d = get(BufKey{key, static_cast<uint16_t>(role_down_), Comp::kFull, 0}, "down tensor", op);
  const size_t n = size_t{op.tokens} * hidden;
  kernels::expert_ffn(reinterpret_cast<const uint16_t*>(g->data()),
                      reinterpret_cast<const uint16_t*>(u->data()),
                      reinterpret_cast<const uint16_t*>(d->data()), hidden, inter, activations(unit, n),
                      outputs(unit, n), op.tokens);
  expert_computes_.fetch_add(1, std::memory_order_relaxed);
}

void ExecPlatform::dense_compute_op(const Op& op, uint32_t unit) {
  if (op.tokens == 0 || op.layer >= model_.dense_bytes.size()) return;
  const uint64_t elements = model_.dense_bytes[op.layer] / 2;
  const uint64_t cols = model_.hidden;
  const uint64_t rows = elements / cols;
  if (rows == 0) return;
  if (opt_.gpu && op.resource == ResourceClass::kGpu) {
    try {
      stream(unit, op).dense_gemm(dense_dev_.data(), rows, cols, op.tokens);
    } catch (const Error& e) {
      throw Error("exec: " + op_label(op) + ": " + e.what());
    }
    dense_computes_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  kernels::dense_gemm(dense_scratch_.data(), rows, cols, activations(unit, size_t{op.tokens} * cols),
                      outputs(unit, size_t{op.tokens} * rows), op.tokens);
  dense_computes_.fetch_add(1, std::memory_order_relaxed);
}

std::pair<double, double> ExecPlatform::LineFit::solve() const {
  if (k <= 0) return {0.0, 0.0};
  const double det = k * snn - sn * sn;
  double fixed = 0, per_op = sn > 0 ? st / sn : 0;
  if (det > 1e-12 * k * snn) {
    per_op = (k * snt - sn * st) / det;
    fixed = (st - per_op * sn) / k;
  }
  if (per_op < 0) return {st / k, 0.0};                    // not growing with the graph: all of it is fixed
  if (fixed < 0) return {0.0, snn > 0 ? snt / snn : 0.0};  // through the origin
  return {fixed, per_op};
}

ExecCounters ExecPlatform::counters() const {
  ExecCounters c;
  // Each unit thread's CPU clock, read from here (the threads run until the platform goes or a failure stops
  // them, which empties threads_).
#ifdef __linux__
  size_t h = 0;
  for (int r = 0; r < kResourceClasses && threads_.size() == handles_.size(); ++r)
    for (uint32_t u = 0; u < res_[r].units && h < handles_.size(); ++u, ++h) {
      clockid_t id;
      if (pthread_getcpuclockid(handles_[h], &id) != 0) continue;
      const double s = cpu_clock_seconds(id);
      if (s < 0) continue;
      double& sum = c.thread_cpu[r];
      sum = std::max(sum, 0.0) + s;
    }
#endif
  if (const double now_cpu = thread_cpu_seconds(); caller_cpu0_ >= 0 && now_cpu >= caller_cpu0_)
    c.pipeline_cpu = now_cpu - caller_cpu0_;
  c.chunks_read = chunks_read_.load();
  c.bytes_read = bytes_read_.load();
  c.chunks_verified = c.chunks_read;  // read_chunk verifies every chunk it returns
  c.frames_decoded = frames_.load();
  c.tensors_recovered = recovered_.load();
  c.expert_computes = expert_computes_.load();
  c.dense_computes = dense_computes_.load();
  c.buffers_freed = freed_.load();
  c.memory_peak_bytes = peak_bytes_.load();
  c.device_peak_bytes = device_peak_.load();
  c.transfers = transfers_.load();
  c.transfer_bytes = transfer_bytes_.load();
  c.gpu_recoveries = gpu_recoveries_.load();
  c.gpu_recoveries_verified = gpu_verified_.load();
  std::lock_guard<std::mutex> lk(mu_);
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  c.handoff_latency = mean(handoff_);
  for (size_t i = 0; i < kResourceClasses; ++i)
    c.handoff[i] = handoff_n_[i] ? handoff_sum_[i] / static_cast<double>(handoff_n_[i]) : c.handoff_latency;
  c.completion_latency = mean(completion_);
  c.completion_quantiles = runtime_quantiles(completion_);
  c.pipeline_latency = pipeline_calls_ ? pipeline_time_ / static_cast<double>(pipeline_calls_) : 0.0;
  // What a planning call costs beyond an ordinary completion (whose work the pipeline_latency above already
  // charges), split at its first submission: least squares of time = fixed + per_op * ops over the planning
  // calls (a layer's lookups, planning and scheduling cost something whatever its size).
  if (plan_head_.k > 0) {
    const auto [head_fixed, head_per_op] = plan_head_.solve();
    const auto [tail_fixed, tail_per_op] = plan_tail_.solve();
    const double ordinary = c.pipeline_latency;
    c.plan_latency_fixed = std::max(0.0, head_fixed - ordinary);
    c.plan_latency_per_op = head_per_op;
    c.plan_tail_fixed = std::max(0.0, tail_fixed - std::max(0.0, ordinary - head_fixed));
    c.plan_tail_per_op = tail_per_op;
  }
  c.planning = planning_;
  for (size_t i = 0; i < c.planning.size(); ++i) {  // the ordinary work first comes out of the head
    PlanningTime& p = c.planning[i];
    const double ordinary = c.pipeline_latency * planning_share_[i];
    const double from_head = std::min(p.head, ordinary);
    p.head -= from_head;
    p.tail = std::max(0.0, p.tail - (ordinary - from_head));
  }
  for (size_t i = 0; i < kResourceClasses; ++i)
    c.turnaround[i] = turnaround_n_[i] ? turnaround_sum_[i] / static_cast<double>(turnaround_n_[i]) : 0.0;
  return c;
}

}  // namespace moesim::exec
