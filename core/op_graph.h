// Operations and their DAG (docs/architecture.md §1 and §9; ZipMoE §3.2 "DAG
// representation"). An Op is a unit of work on one resource class, described by what it moves and
// computes (bytes, FLOPs, tokens), never by how long it takes: the Platform turns it into time (a cost
// model in sim/, the real machine in exec/). Ops carry labels (layer, expert, tensor) for timelines and
// a priority set by the scheduling policy (lower runs first on a resource; equal priorities run in
// submission order, which makes FCFS the all-zero priority).
//
// OpGraph stores ops and their dependencies as plain adjacency vectors (CSR), and each op's successors as a
// list linked while the ops are added (no pass over the graph to build them; in no particular order).
// Invariant: an op's dependencies are ops added before it, so insertion order is a topological order
// and a graph can never hold a cycle.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <span>
#include <vector>

namespace moesim {

enum class OpKind : uint8_t {
  kSsdRead,        // read bytes from the SSD into host memory (through the I/O thread)
  kDecompress,     // CPU worker: decompress one E-chunk shard (bytes = decompressed output)
  kRecover,        // GPU: merge SM-chunks and exponents into a BF16 tensor (bytes = tensor bytes)
  kTransfer,       // host -> device over the link (UMA: mapping latency only)
  kExpertCompute,  // GPU: one routed expert over its tokens (bytes = weights read, flops)
  kDenseCompute,   // GPU: attention + router + shared experts of one layer
};
inline constexpr int kOpKinds = 6;
const char* op_kind_name(OpKind k);

enum class ResourceClass : uint8_t { kSsd, kCpu, kGpu, kLink };
inline constexpr int kResourceClasses = 4;

// The resource vocabulary, one row per ResourceClass in enum order; every name of a resource is spelt here.
//   name   the class ("cpu"): an op's resource, the values of --compute-on and --recover-on, the per-class
//          keys of configurations and reports (turnaround_cpu, dispatch_latency_cpu_s)
//   pool   the platform's pool of the class's units ("cpu_workers"): ResourceStats::name,
//          Platform::queue_names(), the keys of the metrics' "resources", the timeline's processes
//   label  the pool shown to a person (the timeline's process name)
//   unit   one unit of the pool, shown (the timeline's thread names: "worker 0")
// The I/O thread that issues the SSD's reads is a pool without a class of its own: kIoThreadPool.
struct ResourceNames {
  const char* name;
  const char* pool;
  const char* label;
  const char* unit;
};
inline constexpr ResourceNames kResourceNames[kResourceClasses] = {
    {"ssd", "ssd", "SSD", "slot"},
    {"cpu", "cpu_workers", "CPU workers", "worker"},
    {"gpu", "gpu", "GPU", "stream"},
    {"link", "link", "link", "link"},
};
inline constexpr const char* kIoThreadPool = "io_thread";
constexpr const ResourceNames& resource_names(ResourceClass r) {
  return kResourceNames[static_cast<int>(r)];
}
constexpr const char* resource_class_name(ResourceClass r) {
  return resource_names(r).name;
}
constexpr const char* resource_pool_name(ResourceClass r) {
  return resource_names(r).pool;
}
// The usual resource of an op kind (SSD reads on the SSD, decompression on the CPU, recovery and compute
// on the GPU, transfers on the link). Systems may place recovery and expert compute elsewhere
// (serving/system.h, SystemConfig: `--recover-on`, `--compute-on`); this is only their default.
ResourceClass default_resource(OpKind k);

inline constexpr uint16_t kNoLabel = 0xFFFF;

// Which part of an expert tensor an op moves or produces: the whole tensor (full-tensor offloading), or,
// in ZipMoE's split layout (§3.1), its SM-chunk or one E-chunk shard (Op::shard). A timeline label.
enum class TensorPart : uint8_t { kWhole, kSm, kE };
const char* tensor_part_name(TensorPart p);  // "whole", "sm", "e"

struct Op {
  OpKind kind = OpKind::kSsdRead;
  ResourceClass resource = ResourceClass::kSsd;
  uint16_t layer = kNoLabel;
  uint16_t expert = kNoLabel;
  uint16_t tensor = kNoLabel;  // index into ModelSpec::expert_tensors
  uint16_t shard = kNoLabel;   // E-chunk shard
  TensorPart part = TensorPart::kWhole;
  uint64_t bytes = 0;
  double flops = 0;
  uint32_t tokens = 0;
  int64_t priority = 0;
  bool prefetch = false;  // a load started ahead of its use (core/prefetch.h), not needed by this layer
  // Expert compute whose weights this request has just produced (read, recovered or copied in this layer's
  // graph): they still sit in the last-level cache, so the compute reads them faster than weights that were
  // resident before (gpu.fresh_expert_overhead, core/cost_model.h).
  bool fresh = false;
  // Issued by a prefill step, which loads nearly every expert of each layer back to back: SSD reads then run
  // at the profile's bulk rate (ssd.prefill_read_bandwidth, ssd.prefill_read_latency; default the same as a
  // decode step's sparse reads).
  bool prefill = false;
  // A fused read (the prototype of ZipMoE §4, which "consolidates each E-chunk read with its subsequent
  // decompression into a single operation"): the CPU worker that runs this kDecompress first reads these
  // compressed E-chunk bytes from the SSD itself (buffered, through the page cache), then decompresses
  // them, holding its unit throughout. 0: the op reads nothing (its E-chunk was read by an SSD read op, or
  // was cached). A flag on the decompression rather than an OpKind of its own, so that every table keyed by
  // kind (metrics, timelines, the scheduler's decompressions) keeps working; `bytes` stays the decompressed
  // output.
  uint64_t read_bytes = 0;
  bool fused_read() const { return read_bytes > 0; }
};

class OpGraph {
 public:
  void clear();
  // Adds an op that runs after `deps` (indices of ops already added). Returns its index. Inline: the
  // pipeline adds every op of a run through it.
  uint32_t add(const Op& op, std::span<const uint32_t> deps = {}) {
    const auto id = static_cast<uint32_t>(ops_.n);
    for (uint32_t d : deps) {
      assert(d < id && "an op may only depend on ops added before it");
      dep_.push_back(d);
      link(d, id);
    }
    ops_.push_back(op);
    dep_begin_.push_back(static_cast<uint32_t>(dep_.n));
    first_succ_.push_back(kNoSucc);
    return id;
  }
  uint32_t add(const Op& op, std::initializer_list<uint32_t> deps) {
    return add(op, std::span<const uint32_t>(deps.begin(), deps.size()));
  }
  // Appends a fragment built once and reused (the pipeline's per-system templates): `part`'s op 0 stands for
  // `roots` and is not appended; its op i > 0 becomes op first + i - 1, where first is this graph's size
  // before the call (returned), and a dependency on op 0 becomes the roots, in order. The same graph as
  // adding those ops one by one (successor lists in the same order included). Behind one root, `part`'s
  // arrays are copied as blocks, each entry shifted by where it lands.
  uint32_t append(const OpGraph& part, std::span<const uint32_t> roots) {
    const auto first = static_cast<uint32_t>(ops_.n);
    if (part.ops_.n <= 1) return first;
    std::copy(part.ops_.begin() + 1, part.ops_.end(), ops_.grow(part.ops_.n - 1));
    append_links(part, roots, first);
    return first;
  }
  // append(), every appended op labelled with `expert` (Op::expert): a template built for any expert of a
  // layer, appended for one. The ops are copied and labelled in one pass.
  uint32_t append(const OpGraph& part, std::span<const uint32_t> roots, uint16_t expert) {
    const auto first = static_cast<uint32_t>(ops_.n);
    if (part.ops_.n <= 1) return first;
    const size_t m = part.ops_.n - 1;
    Op* dst = ops_.grow(m);
    const Op* src = part.ops_.begin() + 1;
    for (size_t i = 0; i < m; ++i) {
      dst[i] = src[i];
      dst[i].expert = expert;
    }
    append_links(part, roots, first);
    return first;
  }
  // Nothing left to do once the last op is added (the successor lists are linked as ops are added); kept so
  // that code which builds a graph and then finishes it (tests, schedulers' models) reads unchanged.
  void finalize() {}

  size_t size() const { return ops_.n; }
  Op& op(uint32_t i) { return ops_[i]; }
  const Op& op(uint32_t i) const { return ops_[i]; }
  std::span<const uint32_t> deps(uint32_t i) const {
    return {dep_.begin() + dep_begin_[i], dep_begin_[i + 1] - dep_begin_[i]};
  }
  uint32_t dep_count(uint32_t i) const { return dep_begin_[i + 1] - dep_begin_[i]; }
  // The ops that depend on op i, each once per dependency, in no particular order (the latest added first):
  // `for (uint32_t s : g.succs(i))`.
  class Succs {
   public:
    struct Iter {
      using iterator_category = std::forward_iterator_tag;
      using value_type = uint32_t;
      using difference_type = std::ptrdiff_t;
      using pointer = const uint32_t*;
      using reference = uint32_t;
      const OpGraph* g;
      uint32_t node;
      uint32_t operator*() const { return g->succ_[node].op; }
      Iter& operator++() {
        node = g->succ_[node].next;
        return *this;
      }
      bool operator!=(const Iter& o) const { return node != o.node; }
      bool operator==(const Iter& o) const { return node == o.node; }
    };
    Iter begin() const { return {g_, first_}; }
    Iter end() const { return {g_, kNoSucc}; }
    bool empty() const { return first_ == kNoSucc; }
    Succs(const OpGraph* g, uint32_t first) : g_(g), first_(first) {}

   private:
    const OpGraph* g_;
    uint32_t first_;
  };
  Succs succs(uint32_t i) const { return {this, first_succ_[i]}; }

 private:
  static constexpr uint32_t kNoSucc = UINT32_MAX;
  struct SuccNode {
    uint32_t op;
    uint32_t next;  // kNoSucc: the list's last
  };
  // A vector whose storage only grows: clear() keeps it, so that a graph rebuilt per layer invocation writes
  // its entries without initializing them first (a std::vector's resize fills what it adds).
  template <class T>
  struct Buffer {
    std::vector<T> v;
    size_t n = 0;
    T* grow(size_t k) {  // k more entries at the end, unset; returns the first
      if (n + k > v.size()) [[unlikely]]
        enlarge(n + k);
      T* p = v.data() + n;
      n += k;
      return p;
    }
    // Out of line, so that grow() (every append, three times) inlines: its storage only grows at a run's
    // start.
    [[gnu::noinline]] void enlarge(size_t need) { v.resize(std::max(need, 2 * v.size())); }
    void push_back(const T& x) {
      if (n < v.size()) {
        v[n++] = x;
        return;
      }
      const T copy = x;  // x may be an entry of this buffer, which grow() moves
      *grow(1) = copy;
    }
    T& operator[](size_t i) { return v[i]; }
    const T& operator[](size_t i) const { return v[i]; }
    const T* begin() const { return v.data(); }
    const T* end() const { return v.data() + n; }
  };
  // append()'s dependencies and successor lists of `part`'s ops, whose copies start at op `first`.
  void append_links(const OpGraph& part, std::span<const uint32_t> roots, uint32_t first) {
    if (roots.size() == 1) return append_one_root(part, roots[0], first);
    for (size_t i = 1; i < part.ops_.n; ++i) {
      const auto id = static_cast<uint32_t>(first + i - 1);
      first_succ_.push_back(kNoSucc);
      for (uint32_t k = part.dep_begin_[i]; k < part.dep_begin_[i + 1]; ++k) {
        const uint32_t d = part.dep_[k];
        if (d == 0) {
          for (uint32_t r : roots) {  // a few roots: no memmove call
            dep_.push_back(r);
            link(r, id);
          }
        } else {
          dep_.push_back(first + d - 1);
          link(first + d - 1, id);
        }
      }
      dep_begin_.push_back(static_cast<uint32_t>(dep_.n));
    }
  }
  // append() behind one root: a dependency on op 0 is one dependency on `root`, so `part`'s dependency and
  // successor arrays map entry for entry (the successor nodes in the order adding the ops would have made
  // them); op 0's successor list (its nodes made as its successors were added) goes in front of the root's.
  void append_one_root(const OpGraph& part, uint32_t root, uint32_t first) {
    const size_t m = part.ops_.n - 1;  // ops appended
    const auto dep0 = static_cast<uint32_t>(dep_.n);
    const auto succ0 = static_cast<uint32_t>(succ_.n);
    const uint32_t shift = first - 1;  // part's op i > 0 is op i + shift
    const size_t nd = part.dep_.n;     // op 0 has no dependencies: part.dep_begin_[1] == 0
    uint32_t* dep = dep_.grow(nd);
    for (size_t k = 0; k < nd; ++k) {
      const uint32_t d = part.dep_[k];
      dep[k] = d == 0 ? root : d + shift;
    }
    uint32_t* begin = dep_begin_.grow(m);
    uint32_t* fs = first_succ_.grow(m);
    for (size_t i = 0; i < m; ++i) {
      begin[i] = part.dep_begin_[i + 2] + dep0;
      const uint32_t f = part.first_succ_[i + 1];
      fs[i] = f == kNoSucc ? kNoSucc : f + succ0;
    }
    const size_t ns = part.succ_.n;
    SuccNode* succ = succ_.grow(ns);
    for (size_t k = 0; k < ns; ++k) {
      const SuccNode& node = part.succ_[k];
      succ[k] = SuccNode{node.op + shift, node.next == kNoSucc ? kNoSucc : node.next + succ0};
    }
    const uint32_t head = part.first_succ_[0];
    if (head == kNoSucc) return;
    uint32_t tail = head;
    while (part.succ_[tail].next != kNoSucc) tail = part.succ_[tail].next;
    succ[tail].next = first_succ_[root];
    first_succ_[root] = head + succ0;
  }
  void link(uint32_t dep, uint32_t op) {
    succ_.push_back(SuccNode{op, first_succ_[dep]});
    first_succ_[dep] = static_cast<uint32_t>(succ_.n - 1);
  }
  Buffer<Op> ops_;
  Buffer<uint32_t> dep_begin_{{0}, 1}, dep_;
  Buffer<uint32_t> first_succ_;  // per op: its successor list's first node in succ_
  Buffer<SuccNode> succ_;
};

}  // namespace moesim
