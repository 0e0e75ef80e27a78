// zipmoe: ZipMoE's cache-affinity scheduler (ZipMoE §3.3; Appendix A, Alg. 1 and Definition A.1).
//
// One task per expert tensor (the ops with Op::tensor == t of one request). Type-I tasks read an SM-chunk
// (states M and E; a full-tensor read counts as an SM read of the whole tensor with no decompression),
// Type-II tasks only decompress, possibly after reading E-chunks (states C and S). Both lists are sorted by
// the expert's compute time p_n, non-increasing (stable, so one expert's tensors stay together). Blocks:
//   while σI is not empty:
//     B <- (head of σI); U <- (σII, σI)
//     while B is not compute-dominant and U is not empty:
//       j <- head of U
//       Type-II j: at the earliest position of B where the block model shows no more worker idle time
//                  than without j; else after the last Type-II task of B with p >= p_j (or, if B holds no
//                  Type-II task, after the last Type-I task with p >= p_j)
//       Type-I j (σII exhausted): after the last Type-I task of B, which keeps σI's order
//   Type-II tasks left when σI is empty form one last block (Alg. 1's loop would drop them).
// Priorities then follow block order, and inside a block: all E-chunk reads in task order, then all SM
// reads in task order (the I/O thread's order, §3.3); decompressions, transfers and recoveries in task order;
// an expert's compute right after its last task. Experts in state F (compute only) come first.
//
// The block model ("offline-profiled delays", Appendix A: OpEstimator) runs the blocks one after another
// from the resources' state the previous blocks left: the I/O thread serially (the block's E-chunk reads,
// then its SM reads), the L workers as a work-conserving list schedule in priority order, each
// decompression ready when its E-chunk read ends (at once when the E-chunk is cached). Compute-dominant
// (Definition A.1, in the wording of §3.3): with worker completion times sorted F(1) <= ... <= F(L) and
// F_IO the I/O thread's, F(l) - F_IO >= l * e for every 1 <= l <= min(L, K), where e = rho*u/K is the
// longest E-chunk read of the invocation (0 when nothing reads an E-chunk).
//
// Cost: each Type-II insertion tries every position with one block simulation, O(n^3 K) for n tasks per
// layer invocation; fine for decode (top-k experts) but it grows quickly for prefill with many experts.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/warnings.h"
#include "core/scheduling.h"

namespace moesim::policies {
namespace {

struct Decompression {
  uint32_t op = 0;
  double duration = 0;
  int e_read = -1;  // index into Task::e_reads of the read it waits for; -1: E-chunk cached
};

struct Task {
  double p = 0;  // the expert compute's duration
  bool type1 = false;
  std::vector<uint32_t> e_reads;
  std::vector<double> e_read_durations;
  std::vector<uint32_t> sm_reads;  // kSm, or kWhole for a full-tensor request
  double sm_duration = 0;
  std::vector<Decompression> decompressions;
  std::vector<uint32_t> others;  // transfers, recoveries
};

struct Resources {
  double io = 0;
  std::vector<double> workers;  // when each worker is free
};

struct BlockRun {
  Resources end;
  double idle = 0;  // worker time spent waiting between the block's start and each worker's last op
};

constexpr double kRelEps = 1e-9;

BlockRun run_block(std::span<const Task> tasks, const std::vector<size_t>& block, const Resources& start) {
  BlockRun run;
  run.end = start;
  double io = start.io;
  std::vector<std::vector<double>> e_end(block.size());
  for (size_t i = 0; i < block.size(); ++i)
    for (double d : tasks[block[i]].e_read_durations) e_end[i].push_back(io += d);
  for (size_t b : block) io += tasks[b].sm_duration;
  run.end.io = io;

  struct Ready {
    double at, duration;
  };
  std::vector<Ready> ready;
  for (size_t i = 0; i < block.size(); ++i)
    for (const Decompression& d : tasks[block[i]].decompressions)
      ready.push_back({d.e_read >= 0 ? e_end[i][static_cast<size_t>(d.e_read)] : 0.0, d.duration});
  std::vector<double>& w = run.end.workers;
  // A work-conserving list schedule: the earliest-free worker takes the lowest-index (highest-priority)
  // decompression ready by then, or waits for the first to become ready. O(D log D).
  std::vector<uint32_t> by_at(ready.size());
  for (uint32_t i = 0; i < by_at.size(); ++i) by_at[i] = i;
  std::stable_sort(by_at.begin(), by_at.end(),
                   [&](uint32_t a, uint32_t b) { return ready[a].at < ready[b].at; });
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> avail;
  size_t next = 0;
  for (size_t n = 0; n < ready.size(); ++n) {
    const size_t k = static_cast<size_t>(std::min_element(w.begin(), w.end()) - w.begin());
    double now = w[k];
    while (next < by_at.size() && ready[by_at[next]].at <= now) avail.push(by_at[next++]);
    if (avail.empty()) {  // nothing ready when the worker frees: it waits for the first
      now = ready[by_at[next]].at;
      while (next < by_at.size() && ready[by_at[next]].at <= now) avail.push(by_at[next++]);
    }
    const uint32_t pick = avail.top();
    avail.pop();
    run.idle += now - w[k];
    w[k] = now + ready[pick].duration;
  }
  return run;
}

bool compute_dominant(const Resources& r, uint32_t shards, double e_read) {
  std::vector<double> w = r.workers;
  std::sort(w.begin(), w.end());
  const size_t m = std::min<size_t>(w.size(), shards);
  const double tol = kRelEps * std::max(1.0, r.io);
  for (size_t l = 1; l <= m; ++l)
    if (w[l - 1] - r.io < static_cast<double>(l) * e_read - tol) return false;
  return true;
}

// A field's bytes as they lie in memory, as an unsigned integer that orders as memcmp orders those bytes.
template <typename T>
auto bytewise(T v) {
  if constexpr (sizeof(T) == 8) {
    const auto u = std::bit_cast<uint64_t>(v);
    return std::endian::native == std::endian::little ? __builtin_bswap64(u) : u;
  } else {
    static_assert(sizeof(T) == 4);
    const auto u = std::bit_cast<uint32_t>(v);
    return std::endian::native == std::endian::little ? __builtin_bswap32(u) : u;
  }
}

// The canonical order of tasks: byte by byte on their features (-p, type1, the SM read, the E-chunk read
// count, the E-chunk reads, each decompression's duration and E-chunk read), as a memcmp of those fields
// laid end to end in memory orders them, a shorter sequence first when it is a prefix. Alg. 1's ties of p
// go by this order, so it is kept exactly (a change would move tasks of equal p within their blocks).
bool canonical_before(const Task& a, const Task& b) {
  const uint64_t pa = bytewise(-a.p), pb = bytewise(-b.p);
  if (pa != pb) return pa < pb;
  if (a.type1 != b.type1) return a.type1 < b.type1;
  const uint64_t sa = bytewise(a.sm_duration), sb = bytewise(b.sm_duration);
  if (sa != sb) return sa < sb;
  const auto ea = static_cast<uint32_t>(a.e_read_durations.size());
  const auto eb = static_cast<uint32_t>(b.e_read_durations.size());
  if (ea != eb) return bytewise(ea) < bytewise(eb);
  for (size_t k = 0; k < ea; ++k) {
    const uint64_t da = bytewise(a.e_read_durations[k]), db = bytewise(b.e_read_durations[k]);
    if (da != db) return da < db;
  }
  const size_t n = std::min(a.decompressions.size(), b.decompressions.size());
  for (size_t k = 0; k < n; ++k) {
    const Decompression& x = a.decompressions[k];
    const Decompression& y = b.decompressions[k];
    const uint64_t da = bytewise(x.duration), db = bytewise(y.duration);
    if (da != db) return da < db;
    if (x.e_read != y.e_read) return bytewise(x.e_read) < bytewise(y.e_read);
  }
  return a.decompressions.size() < b.decompressions.size();
}

// The memo's key for one task: every feature canonical_before reads, bit for bit (so two keys are equal
// exactly when the features' bytes are), as 64-bit words. An E-chunk read count below 2^31 (shards are
// 16-bit).
void append_key(const Task& t, std::vector<uint64_t>& key) {
  key.push_back(std::bit_cast<uint64_t>(t.p));
  key.push_back(std::bit_cast<uint64_t>(t.sm_duration));
  key.push_back(static_cast<uint64_t>(t.type1) | static_cast<uint64_t>(t.e_read_durations.size()) << 1 |
                static_cast<uint64_t>(t.decompressions.size()) << 32);
  for (double d : t.e_read_durations) key.push_back(std::bit_cast<uint64_t>(d));
  for (const Decompression& d : t.decompressions) {
    key.push_back(std::bit_cast<uint64_t>(d.duration));
    key.push_back(static_cast<uint32_t>(d.e_read));
  }
}

struct KeyHash {
  size_t operator()(const std::vector<uint64_t>& key) const noexcept {
    uint64_t h = key.size();
    for (uint64_t w : key) {
      h = (h ^ w) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 32;
    }
    return h;
  }
};

// Blocks laid end to end: block i is tasks[ends[i - 1], ends[i]) (ends[-1] = 0), task indices in canonical
// order.
struct FlatBlocks {
  std::vector<uint32_t> tasks, ends;
};

FlatBlocks flatten(const std::vector<std::vector<size_t>>& blocks) {
  FlatBlocks f;
  for (const auto& block : blocks) {
    for (size_t b : block) f.tasks.push_back(static_cast<uint32_t>(b));
    f.ends.push_back(static_cast<uint32_t>(f.tasks.size()));
  }
  return f;
}

// One request shape's tensor tasks (ExpertRequest::shape): their ops as offsets from the request's first op,
// their durations asked once per run (OpEstimator's contract), p left to set per request.
struct Shape {
  std::vector<Task> tasks;
  std::vector<uint32_t> unlabelled;  // offsets of the request's ops outside a tensor task (set_request)
  uint32_t compute = 0;              // offset of the expert compute
  double e_read = 0;                 // its longest E-chunk read
  // The task classes for the last p seen (decode repeats one token count per expert).
  uint64_t p_bits = 0;
  bool has_classes = false;
  std::vector<uint32_t> classes;
};

// A task of the invocation: its class (features), request, and where its ops are (op index = base + entry).
struct Active {
  uint32_t cls = 0;
  uint32_t request = 0;
  uint32_t base = 0;
  const Task* task = nullptr;
};

class ZipMoE final : public SchedulingPolicy {
 public:
  void order(const ScheduleContext& ctx, std::span<const ExpertRequest> requests, OpGraph& graph) override {
    if (ctx.estimator == nullptr) {
      if (!warned_) warn("scheduling 'zipmoe' got no op estimator; its layers keep FCFS order");
      warned_ = true;
      return;
    }
    const OpEstimator& est = *ctx.estimator;
    if (ctx.run != run_) {  // shapes name templates of one pipeline run only
      run_ = ctx.run;
      shapes_.clear();
    }
    if (classes_.size() >= kMaxClasses) clear_classes();  // bounded memory; results do not depend on it
    size_t used = 0;
    count_of_.assign(requests.size(), 0);  // tensor tasks per request
    active_.clear();
    double e_read = 0;
    for (size_t r = 0; r < requests.size(); ++r) {
      const ExpertRequest& req = requests[r];
      const double p = est.estimate(graph.op(req.compute_op));
      if (req.shape != kNoShape && ctx.run != 0) {
        Shape& sh = shape(est, graph, req);
        const uint64_t pb = std::bit_cast<uint64_t>(p);
        if (!sh.has_classes || sh.p_bits != pb) {
          sh.classes.clear();
          for (Task& t : sh.tasks) {
            t.p = p;
            sh.classes.push_back(intern(t));
          }
          sh.p_bits = pb;
          sh.has_classes = true;
        }
        for (size_t k = 0; k < sh.tasks.size(); ++k)
          active_.push_back(Active{sh.classes[k], static_cast<uint32_t>(r), req.first_op, &sh.tasks[k]});
        count_of_[r] = static_cast<uint32_t>(sh.tasks.size());
        e_read = std::max(e_read, sh.e_read);
        continue;
      }
      const size_t before = used;
      e_read = std::max(e_read, build_tasks(est, graph, req, p, pool_, used, by_tensor_));
      count_of_[r] = static_cast<uint32_t>(used - before);
      for (size_t k = before; k < used; ++k)
        active_.push_back(Active{0, static_cast<uint32_t>(r), 0, nullptr});
    }
    // Pool tasks: their addresses are final now that the pool has grown.
    if (used > 0)
      for (size_t a = 0, k = 0, n = active_.size(); a < n; ++a)
        if (active_[a].task == nullptr) {
          active_[a].task = &pool_[k++];
          active_[a].cls = intern(pool_[k - 1]);
        }
    const uint32_t workers = std::max(ctx.cpu_workers, 1u), shards = std::max(ctx.shards, 1u);
    // The blocks depend only on the tasks' timing features, and decode layers repeat the same few patterns
    // (top-k experts in a handful of states): memoize them by those features, with the active put in a
    // canonical order first (tasks with equal features are interchangeable; Alg. 1 breaks ties of p
    // arbitrarily, here by that order). A class stands for one feature set bit for bit, and classes are
    // ranked in canonical order, so sorting by (rank, index) is the stable canonical sort of the tasks.
    canonical_order();
    key_.clear();
    key_.push_back(workers | static_cast<uint64_t>(shards) << 32);
    key_.push_back(std::bit_cast<uint64_t>(e_read));
    for (uint32_t c : canon_) key_.push_back(active_[c].cls);
    auto it = memo_.find(key_);
    if (it == memo_.end()) {
      if (memo_.size() >= kMemoEntries) memo_.clear();
      ordered_.clear();
      for (uint32_t c : canon_) ordered_.push_back(class_task_[active_[c].cls]);
      it = memo_.emplace(key_, flatten(build_blocks(ordered_, workers, shards, e_read))).first;
    }
    assign_priorities(it->second, requests, graph);
  }

 private:
  static std::vector<std::vector<size_t>> build_blocks(std::span<const Task> tasks, uint32_t workers,
                                                       uint32_t shards, double e_read) {
    std::vector<size_t> sigma1, sigma2;
    for (size_t i = 0; i < tasks.size(); ++i) (tasks[i].type1 ? sigma1 : sigma2).push_back(i);
    auto by_p = [&](size_t a, size_t b) { return tasks[a].p > tasks[b].p; };
    std::stable_sort(sigma1.begin(), sigma1.end(), by_p);
    std::stable_sort(sigma2.begin(), sigma2.end(), by_p);
    size_t next1 = 0, next2 = 0;  // heads of σI and σII
    Resources state{0.0, std::vector<double>(workers, 0.0)};
    std::vector<std::vector<size_t>> blocks;
    while (next1 < sigma1.size()) {
      std::vector<size_t> block{sigma1[next1++]};
      BlockRun run = run_block(tasks, block, state);
      while (!compute_dominant(run.end, shards, e_read) && (next2 < sigma2.size() || next1 < sigma1.size())) {
        if (next2 < sigma2.size()) {
          insert_type2(tasks, block, sigma2[next2++], state, run.idle);
        } else {
          const size_t j = sigma1[next1++];
          size_t pos = 0;
          for (size_t q = 0; q < block.size(); ++q)
            if (tasks[block[q]].type1) pos = q + 1;
          block.insert(block.begin() + static_cast<std::ptrdiff_t>(pos), j);
        }
        run = run_block(tasks, block, state);
      }
      state = run.end;
      blocks.push_back(std::move(block));
    }
    if (next2 < sigma2.size())
      blocks.emplace_back(sigma2.begin() + static_cast<std::ptrdiff_t>(next2), sigma2.end());
    return blocks;
  }

  // Alg. 1 lines 13-19 for a Type-II task j.
  static void insert_type2(std::span<const Task> tasks, std::vector<size_t>& block, size_t j,
                           const Resources& state, double idle_without) {
    const double tol = kRelEps * std::max(1.0, state.io + idle_without);
    for (size_t q = 0; q <= block.size(); ++q) {
      std::vector<size_t> trial = block;
      trial.insert(trial.begin() + static_cast<std::ptrdiff_t>(q), j);
      if (run_block(tasks, trial, state).idle <= idle_without + tol) {
        block = std::move(trial);
        return;
      }
    }
    const bool any_type2 = std::any_of(block.begin(), block.end(), [&](size_t b) { return !tasks[b].type1; });
    size_t pos = block.size(), first_of_type = block.size();
    bool found = false;
    for (size_t q = 0; q < block.size(); ++q) {
      const Task& t = tasks[block[q]];
      if (t.type1 == any_type2) continue;  // only the tasks of the type Alg. 1 appends behind
      first_of_type = std::min(first_of_type, q);
      if (t.p >= tasks[j].p) pos = q + 1, found = true;
    }
    if (!found) pos = first_of_type;  // every task of that type has fewer tokens: j goes before them
    block.insert(block.begin() + static_cast<std::ptrdiff_t>(pos), j);
  }

  // Priorities in block order (see the top of the file); `blocks` index the tasks in canonical order.
  void assign_priorities(const FlatBlocks& blocks, std::span<const ExpertRequest> requests, OpGraph& graph) {
    int64_t next = 0;
    for (size_t r = 0; r < requests.size(); ++r)  // F experts: compute only, ready at once
      if (count_of_[r] == 0) set_request(graph, requests[r], next++);
    size_t first = 0;
    for (uint32_t end : blocks.ends) {
      const std::span<const uint32_t> block(blocks.tasks.data() + first, end - first);
      first = end;
      for (uint32_t b : block) {
        const Active& a = active_[canon_[b]];
        for (uint32_t op : a.task->e_reads) graph.op(a.base + op).priority = next++;
      }
      for (uint32_t b : block) {
        const Active& a = active_[canon_[b]];
        for (uint32_t op : a.task->sm_reads) graph.op(a.base + op).priority = next++;
      }
      for (uint32_t b : block) {
        const Active& a = active_[canon_[b]];
        for (const Decompression& d : a.task->decompressions) graph.op(a.base + d.op).priority = next++;
        for (uint32_t op : a.task->others) graph.op(a.base + op).priority = next++;
        if (--count_of_[a.request] == 0) set_request(graph, requests[a.request], next++);
      }
    }
  }

  // The request's compute and any of its ops outside a tensor task (unlabelled, not prefetches).
  void set_request(OpGraph& graph, const ExpertRequest& req, int64_t priority) const {
    if (req.shape != kNoShape && run_ != 0 && req.shape < shapes_.size() && shapes_[req.shape]) {
      const Shape& sh = *shapes_[req.shape];
      for (uint32_t op : sh.unlabelled) graph.op(req.first_op + op).priority = priority;
      graph.op(req.first_op + sh.compute).priority = priority;
      return;
    }
    for (uint32_t i = req.first_op; i <= req.compute_op; ++i) {
      Op& op = graph.op(i);
      if (i == req.compute_op || (!op.prefetch && op.tensor == kNoLabel)) op.priority = priority;
    }
  }

  // The tensor tasks of `req` (ops of graph), appended to tasks[used...]; returns the longest E-chunk read.
  // by_tensor: scratch (tensor label -> index into tasks (+1), 0: none yet), its capacity kept between calls.
  static double build_tasks(const OpEstimator& est, const OpGraph& graph, const ExpertRequest& req, double p,
                            std::vector<Task>& tasks, size_t& used, std::vector<size_t>& by_tensor) {
    double e_read = 0;
    by_tensor.clear();
    for (uint32_t i = req.first_op; i < req.compute_op; ++i) {
      const Op& op = graph.op(i);
      if (op.prefetch || op.tensor == kNoLabel) continue;
      if (by_tensor.size() <= op.tensor) by_tensor.resize(op.tensor + 1u, 0);
      if (by_tensor[op.tensor] == 0) {
        if (used == tasks.size()) tasks.emplace_back();
        Task& task = tasks[used++];
        task.p = p;
        task.type1 = false;
        task.e_reads.clear();
        task.e_read_durations.clear();
        task.sm_reads.clear();
        task.sm_duration = 0;
        task.decompressions.clear();
        task.others.clear();
        by_tensor[op.tensor] = used;
      }
      Task& t = tasks[by_tensor[op.tensor] - 1];
      const double d = est.estimate(op);
      if (op.kind == OpKind::kSsdRead && op.part == TensorPart::kE) {
        t.e_reads.push_back(i);
        t.e_read_durations.push_back(d);
        e_read = std::max(e_read, d);
      } else if (op.kind == OpKind::kSsdRead) {
        t.sm_reads.push_back(i);
        t.sm_duration += d;
        t.type1 = true;
      } else if (op.kind == OpKind::kDecompress) {
        Decompression dc;
        dc.op = i;
        dc.duration = d;
        for (uint32_t dep : graph.deps(i))
          for (size_t k = 0; k < t.e_reads.size(); ++k)
            if (t.e_reads[k] == dep) dc.e_read = static_cast<int>(k);
        t.decompressions.push_back(dc);
      } else {
        t.others.push_back(i);
      }
    }
    return e_read;
  }

  // The shape of `req`, built from its ops the first time the run shows it.
  Shape& shape(const OpEstimator& est, const OpGraph& graph, const ExpertRequest& req) {
    if (shapes_.size() <= req.shape) shapes_.resize(req.shape + size_t{1});
    std::unique_ptr<Shape>& slot = shapes_[req.shape];
    if (slot) return *slot;
    slot = std::make_unique<Shape>();
    Shape& sh = *slot;
    size_t used = 0;
    sh.e_read = build_tasks(est, graph, req, 0, sh.tasks, used, by_tensor_);
    sh.tasks.resize(used);
    const uint32_t base = req.first_op;
    for (Task& t : sh.tasks) {
      for (uint32_t& op : t.e_reads) op -= base;
      for (uint32_t& op : t.sm_reads) op -= base;
      for (Decompression& d : t.decompressions) d.op -= base;
      for (uint32_t& op : t.others) op -= base;
    }
    for (uint32_t i = req.first_op; i < req.compute_op; ++i) {
      const Op& op = graph.op(i);
      if (!op.prefetch && op.tensor == kNoLabel) sh.unlabelled.push_back(i - base);
    }
    sh.compute = req.compute_op - base;
    return sh;
  }

  // The class of a task's features (bit for bit), ranked among the classes in canonical order.
  uint32_t intern(const Task& t) {
    ckey_.clear();
    append_key(t, ckey_);
    auto [it, added] = classes_.try_emplace(ckey_, static_cast<uint32_t>(class_task_.size()));
    if (!added) return it->second;
    const auto c = static_cast<uint32_t>(class_task_.size());
    class_task_.push_back(t);
    auto pos = std::lower_bound(by_rank_.begin(), by_rank_.end(), c, [&](uint32_t x, uint32_t y) {
      return canonical_before(class_task_[x], class_task_[y]);
    });
    by_rank_.insert(pos, c);
    rank_.resize(class_task_.size());
    for (size_t k = 0; k < by_rank_.size(); ++k) rank_[by_rank_[k]] = static_cast<uint32_t>(k);
    return c;
  }

  void clear_classes() {
    classes_.clear();
    class_task_.clear();
    by_rank_.clear();
    rank_.clear();
    memo_.clear();
    for (auto& sh : shapes_)
      if (sh) sh->has_classes = false;
  }

  // canon_: the active tasks sorted by (class rank, index), as one integer each; insertion for a decode
  // layer's few tasks.
  void canonical_order() {
    const size_t n = active_.size();
    sort_keys_.resize(n);
    for (size_t i = 0; i < n; ++i) sort_keys_[i] = uint64_t{rank_[active_[i].cls]} << 32 | i;
    if (n > 32) {
      std::sort(sort_keys_.begin(), sort_keys_.end());
    } else {
      for (size_t i = 1; i < n; ++i) {
        const uint64_t x = sort_keys_[i];
        size_t j = i;
        for (; j > 0 && x < sort_keys_[j - 1]; --j) sort_keys_[j] = sort_keys_[j - 1];
        sort_keys_[j] = x;
      }
    }
    canon_.resize(n);
    for (size_t i = 0; i < n; ++i) canon_[i] = static_cast<uint32_t>(sort_keys_[i]);
  }
  static constexpr size_t kMemoEntries = 1 << 16;
  static constexpr size_t kMaxClasses = 1 << 12;
  bool warned_ = false;
  std::vector<uint64_t> key_, ckey_;
  std::vector<Task> pool_;          // tasks of requests without a shape
  std::vector<uint32_t> count_of_;  // per request: its tensor tasks (not yet given priorities)
  std::vector<Active> active_;      // the invocation's tasks in request order
  std::vector<size_t> by_tensor_;   // build_tasks' scratch
  std::vector<Task> ordered_;
  std::vector<uint32_t> canon_;      // the active tasks in canonical order
  std::vector<uint64_t> sort_keys_;  // canonical_order's scratch: (rank, index)
  std::unordered_map<std::vector<uint64_t>, FlatBlocks, KeyHash> memo_;
  // Task classes: features (append_key) -> class; each class's features; the classes in canonical order
  // and each one's place in it.
  std::unordered_map<std::vector<uint64_t>, uint32_t, KeyHash> classes_;
  std::vector<Task> class_task_;
  std::vector<uint32_t> by_rank_, rank_;
  uint64_t run_ = 0;  // ScheduleContext::run the shapes belong to
  std::vector<std::unique_ptr<Shape>> shapes_;
};

}  // namespace

MOESIM_REGISTER(SchedulingRegistry, "zipmoe",
                "ZipMoE's cache-affinity scheduler (§3.3, Alg. 1): blocks of SM-reading tasks filled with "
                "decompression-only tasks until compute-dominant",
                {}, [](const Params&) -> std::unique_ptr<SchedulingPolicy> {
                  return std::make_unique<ZipMoE>();
                });

}  // namespace moesim::policies
