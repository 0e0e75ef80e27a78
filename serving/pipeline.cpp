#include "serving/pipeline.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "base/error.h"
#include "base/warnings.h"

namespace moesim {

uint64_t ModelCosts::tensor_bytes(uint32_t layer, uint32_t t) const {
  const uint64_t total = expert_bytes[layer];
  const size_t n = tensor_share.size();
  if (n <= 1) return total;
  uint64_t before = 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    const auto b = static_cast<uint64_t>(std::llround(static_cast<double>(total) * tensor_share[i]));
    if (i == t) return b;
    before += b;
  }
  return total - before;
}

namespace {

// Ops are identified to the platform by a token: the invocation slot and the op's index in its graph.
constexpr uint32_t kOpBits = 20;
constexpr uint32_t kOpMask = (1u << kOpBits) - 1;
constexpr uint32_t kMaxSlots = 1u << (32 - kOpBits);
// Prefetch loads yield to every demand op waiting for the same resource.
constexpr int64_t kPrefetchPriority = INT64_MAX / 4;
// ScheduleContext::run: unique per Pipeline::run in the process (request shapes are template indices of
// one run).
std::atomic<uint64_t> next_run{1};

}  // namespace

struct Pipeline::Invocation {
  OpGraph graph;
  std::vector<uint32_t> remaining;  // unmet dependencies per op (the first graph.size(); storage only grows)
  std::vector<uint32_t> external;   // per op: waits on loads of earlier invocations
  std::vector<std::pair<uint32_t, uint32_t>> waiters;  // (op of this graph, token that waits for it)
  std::vector<ExpertRequest> requests;
  uint32_t slot = 0;
  uint32_t index = 0;  // workload invocation index
  uint32_t layer = 0;
  uint8_t phase = 0;
  double start = 0;
  uint32_t open_ops = 0;        // ops not yet done
  uint32_t open_layer_ops = 0;  // of those, the layer's own work (not prefetches)
  // Load tails of this graph per key (prefetches register them in inflight_).
  std::vector<std::pair<uint32_t, uint32_t>> load_tails;  // (key, op)
};

struct Pipeline::LoadTemplates {
  // A template: op 0 stands for the roots (not appended); the loads' ops follow, as add_load built them.
  struct Template {
    OpGraph ops;
    std::vector<uint32_t> tails;  // indices into ops: what makes the tensors computable (to == kFull)
  };
  static constexpr size_t kStates = 5;  // ExpertState's values
  size_t tensors = 1;
  std::vector<uint64_t> tensor_bytes;             // [layer * tensors + t]: ModelCosts::tensor_bytes
  std::vector<std::unique_ptr<Template>> by_key;  // [((layer * kStates + from) * kStates + to) * 2 + prefill]
  std::vector<uint8_t> has_succ;                  // build_prefetch's scratch
  // A routed expert's whole request behind the dense op (op 0): its loads, then its compute joining them,
  // with the expert's label, tokens and FLOPs left to set per request.
  struct Request {
    OpGraph ops;
    uint32_t compute = 0;  // index into ops
  };
  // [((layer * kStates + state) * 2 + host copy) * 2 + prefill]
  std::vector<std::unique_ptr<Request>> requests;

  void reset(const ModelCosts& costs, uint32_t layers) {
    by_key.clear();
    requests.clear();
    // Every load asks its tensors' bytes: rounded once per run, not once per load.
    tensors = std::max<size_t>(costs.tensor_share.size(), 1);
    tensor_bytes.resize(size_t{layers} * tensors);
    for (uint32_t l = 0; l < layers; ++l)
      for (uint32_t t = 0; t < tensors; ++t) tensor_bytes[l * tensors + t] = costs.tensor_bytes(l, t);
  }
  uint64_t bytes(uint32_t layer, uint32_t t) const { return tensor_bytes[layer * tensors + t]; }
};

Pipeline::Pipeline(const ModelCosts& costs, const PipelineOptions& opt, Residency& residency,
                   RoutingPolicy& routing, SchedulingPolicy& scheduling, PrefetchPolicy* prefetch)
    : costs_(costs),
      opt_(opt),
      residency_(residency),
      routing_(routing),
      scheduling_(scheduling),
      prefetch_(prefetch),
      loads_(opt.loads ? opt.loads.get() : &whole_tensor_loads()),
      templates_(std::make_unique<LoadTemplates>()) {}

TensorLoad Pipeline::tensor_load(const Op& base, ExpertState from, ExpertState to,
                                 std::span<const uint32_t> roots) const {
  TensorLoad load;
  load.base = base;
  load.from = from;
  load.to = to;
  load.roots = roots;
  load.recover_on = opt_.recover_on;
  load.compute_on = opt_.compute_on;
  load.compute_after_loads = opt_.compute_after_loads;
  return load;
}

Pipeline::~Pipeline() = default;

// What routing policies see (ResidencyView): the state on the computing side. A full copy held only in a
// discrete GPU's host memory still needs a host-to-device copy, so it is not "cached" for them: BuddyMoE
// replaces exactly such CPU-resident experts (BuddyMoE, §3.1), and a cache-aware routing conditions on the
// fast tier.
ExpertState Pipeline::state(uint32_t layer, uint32_t expert) const {
  const LookupResult r = residency_.peek(layer * experts_ + expert);
  return r.state == ExpertState::kFull && r.tier == MemoryTier::kHost ? ExpertState::kMissed : r.state;
}

uint32_t Pipeline::acquire_slot() {
  if (!free_slots_.empty()) {
    const uint32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  if (slots_.size() >= kMaxSlots)
    throw Error("pipeline: more than " + std::to_string(kMaxSlots) + " layer invocations in flight at once");
  slots_.push_back(std::make_unique<Invocation>());
  slots_.back()->slot = static_cast<uint32_t>(slots_.size() - 1);
  return slots_.back()->slot;
}

void Pipeline::wait_for_inflight(Invocation& v, uint32_t key, uint32_t first_op, uint32_t dense) {
  auto it = inflight_.find(key);
  if (it == inflight_.end()) return;
  // The request's roots (ops whose only dependency is the dense op) also wait for the loads in flight.
  for (uint32_t i = first_op; i < v.graph.size(); ++i) {
    const auto deps = v.graph.deps(i);
    const bool root = deps.empty() || (deps.size() == 1 && deps[0] == dense);
    if (!root) continue;
    for (uint32_t t : it->second) {
      ++v.external[i];
      slots_[t >> kOpBits]->waiters.emplace_back(t & kOpMask, (v.slot << kOpBits) | i);
    }
  }
}

// The ops that bring one expert tensor from state `from` to `to` (F, or for a prefetch also C/S/E: the
// components only), appended to the graph; the ops that end the chain are appended to tails_.
void Pipeline::build_request(Invocation& v, uint32_t layer, uint16_t expert, uint32_t tokens,
                             LookupResult found, uint32_t dense) {
  if (tokens > 0 && dense != kNoKey && !opt_.compute_after_loads)
    return add_request(v, layer, expert, tokens, found, dense);
  OpGraph& g = v.graph;
  ExpertRequest req;
  req.expert = expert;
  req.tokens = tokens;
  req.state = found.state;
  req.first_op = static_cast<uint32_t>(g.size());
  const bool prefill = v.phase == 0;
  // The roots of the request depend on the layer's dense op; a prefetch load (dense == kNoKey) on nothing.
  const std::span<const uint32_t> root =
      dense == kNoKey ? std::span<const uint32_t>() : std::span<const uint32_t>(&dense, 1);
  add_expert_loads(g, layer, expert, found, prefill, root);
  if (tokens > 0) {
    const Op compute = expert_compute(layer, expert, prefill, tokens);
    if (opt_.compute_after_loads) {  // added behind every load of the layer by add_deferred_computes
      layer_loads_.insert(layer_loads_.end(), tails_.begin(), tails_.end());
      deferred_.emplace_back(static_cast<uint32_t>(v.requests.size()), compute);
      v.requests.push_back(req);
      return;
    }
    if (tails_.empty()) tails_.push_back(dense);
    req.compute_op = g.add(compute, tails_);
  } else {
    if (g.size() == req.first_op) return;  // resident and not computed (layer-offload): nothing to do
    req.compute_op = static_cast<uint32_t>(g.size() - 1);
  }
  v.requests.push_back(req);
}

void Pipeline::add_request(Invocation& v, uint32_t layer, uint16_t expert, uint32_t tokens,
                           LookupResult found, uint32_t dense) {
  constexpr size_t kStates = LoadTemplates::kStates;
  LoadTemplates& lt = *templates_;
  const bool prefill = v.phase == 0;
  const bool host_copy = found.state == ExpertState::kFull && found.tier == MemoryTier::kHost &&
                         opt_.compute_on == ResourceClass::kGpu;
  const size_t index =
      ((size_t{layer} * kStates + static_cast<size_t>(found.state)) * 2 + (host_copy ? 1 : 0)) * 2 +
      (prefill ? 1 : 0);
  if (lt.requests.size() <= index) lt.requests.resize(index + 1);
  std::unique_ptr<LoadTemplates::Request>& slot = lt.requests[index];
  if (!slot) {
    // The fragment build_request's general path makes, behind op 0, without the expert's label and tokens.
    auto tpl = std::make_unique<LoadTemplates::Request>();
    OpGraph& g = tpl->ops;
    const uint32_t root = g.add(Op{});
    add_expert_loads(g, layer, kNoLabel, found, prefill, std::span<const uint32_t>(&root, 1));
    const Op compute = expert_compute(layer, kNoLabel, prefill, 0);
    if (tails_.empty()) tails_.push_back(root);
    tpl->compute = g.add(compute, tails_);
    slot = std::move(tpl);
  }
  OpGraph& g = v.graph;
  ExpertRequest req;
  req.expert = expert;
  req.tokens = tokens;
  req.state = found.state;
  req.shape = static_cast<uint32_t>(index);  // the template: same ops but for the label and tokens
  const uint32_t first = g.append(slot->ops, std::span<const uint32_t>(&dense, 1), expert);
  req.first_op = first;
  req.compute_op = first + slot->compute - 1;
  Op& compute = g.op(req.compute_op);
  compute.tokens = tokens;
  compute.flops = costs_.expert_flops_per_token * tokens;
  v.requests.push_back(req);
}

void Pipeline::add_expert_loads(OpGraph& g, uint32_t layer, uint16_t expert, LookupResult found, bool prefill,
                                std::span<const uint32_t> root) {
  tails_.clear();
  if (found.state != ExpertState::kFull)
    return add_loads(g, layer, expert, found.state, ExpertState::kFull, prefill, root);
  if (found.tier != MemoryTier::kHost || opt_.compute_on != ResourceClass::kGpu) return;
  Op o;  // a DRAM copy on a discrete GPU: copy it over
  o.layer = static_cast<uint16_t>(layer);
  o.expert = expert;
  o.prefill = prefill;
  o.kind = OpKind::kTransfer;
  o.resource = default_resource(OpKind::kTransfer);
  for (uint32_t t = 0; t < templates_->tensors; ++t) {
    o.tensor = static_cast<uint16_t>(t);
    o.bytes = templates_->bytes(layer, t);
    tails_.push_back(g.add(o, root));
  }
}

Op Pipeline::expert_compute(uint32_t layer, uint16_t expert, bool prefill, uint32_t tokens) const {
  Op compute;
  compute.layer = static_cast<uint16_t>(layer);
  compute.expert = expert;
  compute.prefill = prefill;
  compute.kind = OpKind::kExpertCompute;
  compute.resource = opt_.compute_on;
  compute.bytes = costs_.expert_bytes[layer];
  compute.tokens = tokens;
  compute.flops = costs_.expert_flops_per_token * tokens;
  compute.fresh = !tails_.empty();  // it depends on the ops that just produced its weights
  return compute;
}

void Pipeline::add_loads(OpGraph& g, uint32_t layer, uint16_t expert, ExpertState from, ExpertState to,
                         bool prefill, std::span<const uint32_t> roots) {
  constexpr size_t kStates = LoadTemplates::kStates;
  LoadTemplates& lt = *templates_;
  const size_t index =
      ((size_t{layer} * kStates + static_cast<size_t>(from)) * kStates + static_cast<size_t>(to)) * 2 +
      (prefill ? 1 : 0);
  if (lt.by_key.size() <= index) lt.by_key.resize(index + 1);
  std::unique_ptr<LoadTemplates::Template>& slot = lt.by_key[index];
  if (!slot) {
    auto tpl = std::make_unique<LoadTemplates::Template>();
    Op base;
    base.layer = static_cast<uint16_t>(layer);
    base.prefill = prefill;
    const uint32_t root = tpl->ops.add(Op{});
    TensorLoad load = tensor_load(base, from, to, std::span<const uint32_t>(&root, 1));
    for (uint32_t t = 0; t < lt.tensors; ++t) {
      load.base.tensor = static_cast<uint16_t>(t);
      load.bytes = lt.bytes(layer, t);
      loads_->add_load(load, tpl->ops, tpl->tails);  // throws for a state the layout cannot hold
    }
    slot = std::move(tpl);
  }
  // The template's op i becomes op first + i - 1, with the expert's label; a dependency on op 0 becomes
  // the roots, in order: the graph add_load would have built for this expert, appended in one block.
  const auto first = g.append(slot->ops, roots, expert);
  for (uint32_t t : slot->tails) tails_.push_back(t - 1 + first);
}

void Pipeline::build_prefetch(Invocation& v, uint32_t layer, uint16_t expert, ExpertState from,
                              ExpertState to) {
  OpGraph& g = v.graph;
  const uint32_t first = static_cast<uint32_t>(g.size());
  const uint32_t key = layer * experts_ + expert;
  if (to == ExpertState::kFull) {
    // The whole path to a full tensor, without the compute, depending on nothing (it starts now). It is no
    // request of this layer: the scheduler does not see it.
    const size_t nreq = v.requests.size();
    build_request(v, layer, expert, 0, LookupResult{from, MemoryTier::kUnified}, kNoKey);
    v.requests.resize(nreq);
  } else {
    // C, S or E: the layout's reads of the parts it will hold.
    tails_.clear();
    add_loads(g, layer, expert, from, to, v.phase == 0, {});
  }
  uint64_t bytes = 0;
  for (uint32_t i = first; i < g.size(); ++i) {
    Op& op = g.op(i);
    op.prefetch = true;
    op.priority = kPrefetchPriority;
    if (op.kind == OpKind::kSsdRead) bytes += op.bytes;
    bytes += op.read_bytes;
  }
  // Tails: ops no later op of this load depends on.
  std::vector<uint8_t>& has_succ = templates_->has_succ;
  has_succ.assign(g.size() - first, 0);
  for (uint32_t i = first; i < g.size(); ++i)
    for (uint32_t d : g.deps(i))
      if (d >= first) has_succ[d - first] = 1;
  for (uint32_t i = first; i < g.size(); ++i)
    if (!has_succ[i - first]) v.load_tails.emplace_back(key, i);
  result_->prefetch.bytes += bytes;
  prefetch_bytes_[key] = bytes;
}

namespace {

// submit()'s order: (priority, token), a total order (tokens are unique), so any sort gives the same result.
// A completion readies its successors in reverse order of addition (OpGraph::succs), so a ready set often
// arrives exactly reversed; small sets are insertion-sorted in place (std::sort's insertion step moves
// entries with a memmove call each).
template <class Keyed>
void sort_keyed(std::vector<Keyed>& keyed) {
  const auto before = [](const Keyed& a, const Keyed& b) {
    return a.priority < b.priority || (a.priority == b.priority && a.token < b.token);
  };
  const size_t n = keyed.size();
  Keyed* k = keyed.data();
  size_t down = 1;
  while (down < n && before(k[down], k[down - 1])) ++down;
  if (down == n) {
    std::reverse(k, k + n);
    return;
  }
  if (n > 32) {
    std::sort(k, k + n, before);
    return;
  }
  for (size_t i = 1; i < n; ++i) {
    const Keyed x = k[i];
    size_t j = i;
    for (; j > 0 && before(x, k[j - 1]); --j) k[j] = k[j - 1];
    k[j] = x;
  }
}

}  // namespace

void Pipeline::submit(std::vector<uint32_t>& ready) {
  // Ops that become ready at the same instant go to the platform in priority order (then token order),
  // so that a free resource starts the most urgent one; the whole set in one call (Platform::submit_ready).
  // Sorted as (priority, token, op) entries: the comparisons read no op (ZipMoE readies ~100 ops at a time).
  if (ready.size() == 1) {
    const uint32_t t = ready[0];
    ready.clear();
    const ReadyOp one{&slots_[t >> kOpBits]->graph.op(t & kOpMask), t};
    platform_->submit_ready(std::span<const ReadyOp>(&one, 1), this);
    return;
  }
  std::vector<Keyed>& keyed = keyed_;
  keyed.clear();
  for (uint32_t t : ready) {
    const Op* op = &slots_[t >> kOpBits]->graph.op(t & kOpMask);
    keyed.push_back(Keyed{op->priority, t, op});
  }
  ready.clear();
  sort_keyed(keyed);
  std::vector<ReadyOp>& out = ready_ops_;
  out.clear();
  for (const Keyed& k : keyed) out.push_back(ReadyOp{k.op, k.token});
  platform_->submit_ready(out, this);
}

namespace {

// op_done()'s paths that most completions skip, out of line so that the common path saves fewer registers.
[[gnu::noinline]] void record_op(std::vector<TimelineEvent>& timeline, const Op& op, const OpTiming& timing,
                                 uint32_t step) {
  timeline.push_back(TimelineEvent{op, timing, step});
}

// The ops of later invocations that wait for op `i` (a load in flight they found): one dependency less each.
template <class Slots>
[[gnu::noinline]] void release_waiters(std::vector<std::pair<uint32_t, uint32_t>>& waiters, Slots& slots,
                                       uint32_t i, std::vector<uint32_t>& ready) {
  for (size_t w = 0; w < waiters.size();) {
    if (waiters[w].first != i) {
      ++w;
      continue;
    }
    const uint32_t t = waiters[w].second;
    auto& u = *slots[t >> kOpBits];
    if (--u.remaining[t & kOpMask] == 0) ready.push_back(t);
    waiters[w] = waiters.back();
    waiters.pop_back();
  }
}

// A prefetch load's op `token` of `key` done: the key stays in flight until all its tails are.
[[gnu::noinline]] void load_done(std::unordered_map<uint32_t, std::vector<uint32_t>>& inflight, uint32_t key,
                                 uint32_t token) {
  auto it = inflight.find(key);
  if (it == inflight.end()) return;
  auto& tails = it->second;
  tails.erase(std::remove(tails.begin(), tails.end(), token), tails.end());
  if (tails.empty()) inflight.erase(it);
}

}  // namespace

void Pipeline::op_done(uint32_t token, const OpTiming& timing) {
  Invocation& v = *slots_[token >> kOpBits];
  const uint32_t i = token & kOpMask;
  ++result_->ops;
  const Op& op = v.graph.op(i);
  if (op.kind == OpKind::kSsdRead) {
    result_->ssd_bytes += op.bytes;
    result_->ssd_bytes_by_part[static_cast<size_t>(op.part)] += op.bytes;
  } else if (op.fused_read()) {
    result_->ssd_bytes += op.read_bytes;
    result_->ssd_bytes_by_part[static_cast<size_t>(TensorPart::kE)] += op.read_bytes;
  }
  if (in_window_) record_op(result_->timeline, op, timing, step_);
  // The ops this completion readies gather in ready_ itself: it is empty between calls (submit() empties
  // it), and nothing below re-enters op_done or start_invocation before submit() has (the platform never
  // reports a completion from inside submit(), core/platform.h). A vector swapped in and out of the member
  // cost a store-forwarding stall per completion (perf annotate, bench/results/sim.md).
  std::vector<uint32_t>& ready = ready_;
  for (uint32_t s : v.graph.succs(i))
    if (--v.remaining[s] == 0) ready.push_back((v.slot << kOpBits) | s);
  if (!v.waiters.empty()) release_waiters(v.waiters, slots_, i, ready);
  // A load's last op done: the key is no longer in flight once all its tails are.
  if (op.prefetch) load_done(inflight_, static_cast<uint32_t>(op.layer) * experts_ + op.expert, token);
  if (ready.size() == 1) {  // submit()'s common case, without its call
    const uint32_t t = ready[0];
    ready.clear();
    const ReadyOp one{&slots_[t >> kOpBits]->graph.op(t & kOpMask), t};
    platform_->submit_ready(std::span<const ReadyOp>(&one, 1), this);
  } else if (!ready.empty()) {
    submit(ready);
  }
  --v.open_ops;
  if (!op.prefetch && --v.open_layer_ops == 0) finish_layer(v);
  if (v.open_ops == 0) free_slots_.push_back(v.slot);
}

void Pipeline::set_counter(uint32_t track, uint64_t value) {
  CounterState& c = counters_[track];
  if (c.value == value) return;
  c.value = value;
  if (!in_window_) return;
  auto& samples = result_->counter_samples;
  const double t = platform_->now();
  // Changes at one instant (a job ends and the next queues) leave one sample: the last value.
  if (c.last != SIZE_MAX && samples[c.last].time == t) {
    samples[c.last].value = value;
    return;
  }
  c.last = samples.size();
  samples.push_back(CounterSample{t, track, value});
}

void Pipeline::queue_length(uint32_t queue, uint64_t waiting) {
  if (first_queue_track_ + queue < counters_.size()) set_counter(first_queue_track_ + queue, waiting);
}

void Pipeline::memory_event(const MemoryEvent& e) {
  platform_->memory_event(e);
  PoolUsage& p = result_->pools[e.pool];
  switch (e.kind) {
    case MemoryEvent::Kind::kAdmit:
      ++p.admits;
      lifetimes_.admit(e.key, clock_);
      break;
    case MemoryEvent::Kind::kEvict:
      ++p.evicts;
      break;
    case MemoryEvent::Kind::kDemote:  // counted once per move, on the pool the expert leaves
      if (e.leaving) ++p.demotes;
      break;
    case MemoryEvent::Kind::kPromote:
      if (e.leaving) ++p.promotes;
      break;
  }
  if (e.adds()) {
    pool_bytes_[e.pool] += e.bytes;
    held_[e.key] += e.bytes;
  } else {
    held_[e.key] -= std::min(held_[e.key], e.bytes);
    // A demotion's leaving side may pass through 0 bytes; only an eviction ends a residency.
    if (e.kind == MemoryEvent::Kind::kEvict && held_[e.key] == 0) lifetimes_.evict(e.key, clock_);
    if (pool_bytes_[e.pool] < e.bytes) throw Error("pipeline: a pool released more bytes than it held");
    pool_bytes_[e.pool] -= e.bytes;
    if (e.kind == MemoryEvent::Kind::kEvict) {
      // An evicted expert's loads still in flight no longer make it resident.
      if (!inflight_.empty()) inflight_.erase(e.key);
      if (prefetched_[e.key]) {
        prefetched_[e.key] = 0;
        ++result_->prefetch.useless;
        result_->prefetch.useless_bytes += prefetch_bytes_[e.key];
      }
    }
  }
  if (record_counters_) set_counter(e.pool, pool_bytes_[e.pool]);
}

void Pipeline::note_peaks() {
  uint64_t total = 0;
  for (size_t p = 0; p < pool_bytes_.size(); ++p) {
    result_->pools[p].peak_bytes = std::max(result_->pools[p].peak_bytes, pool_bytes_[p]);
    total += pool_bytes_[p];
  }
  result_->memory_peak = std::max(result_->memory_peak, total);
}

void Pipeline::start_counters(Platform& platform) {
  auto& tracks = result_->counter_tracks;
  for (const auto& p : result_->pools)
    tracks.push_back(CounterTrack{CounterTrack::Kind::kPoolBytes, p.info.name});
  first_queue_track_ = static_cast<uint32_t>(tracks.size());
  for (auto& q : platform.queue_names()) tracks.push_back(CounterTrack{CounterTrack::Kind::kQueueLength, q});
  counters_.assign(tracks.size(), CounterState{});
  platform.set_queue_observer(this);
}

void Pipeline::enter_window() {
  // Every track starts the window with its current value, changed or not.
  for (uint32_t t = 0; t < counters_.size(); ++t) {
    counters_[t].last = result_->counter_samples.size();
    result_->counter_samples.push_back(CounterSample{platform_->now(), t, counters_[t].value});
  }
}

void Pipeline::start_step(uint32_t s) {
  const WorkloadView& w = *w_;
  for (;; ++s) {
    if (s >= w.steps()) {
      finished_ = true;
      in_window_ = false;
      return;
    }
    step_ = s;
    clock_ = next_clock_;
    next_clock_ += w.step_tokens[s];
    const bool was_in_window = in_window_;
    in_window_ = opt_.record_timeline && s >= opt_.timeline_first_step && s <= opt_.timeline_last_step;
    if (in_window_ && !was_in_window) enter_window();
    step_timing_ = StepTiming{w.step_phase[s], w.step_tokens[s], platform_->now(), 0};
    if (w.step_begin[s] < w.step_begin[s + 1]) {
      start_invocation(w.step_begin[s]);
      return;
    }
    // A step without invocations takes no time.
    step_timing_.end = step_timing_.start;
    result_->steps.push_back(step_timing_);
    if (opt_.on_step) opt_.on_step(s + 1, w.steps());
  }
}

void Pipeline::finish_layer(Invocation& v) {
  const WorkloadView& w = *w_;
  const double now = platform_->now();
  result_->invocations.push_back(
      InvocationTiming{static_cast<uint16_t>(v.layer), v.phase, step_, v.start, now});
  const uint32_t next = v.index + 1;
  if (next < w.step_begin[step_ + 1]) {
    start_invocation(next);
    return;
  }
  step_timing_.end = now;
  result_->steps.push_back(step_timing_);
  if (opt_.on_step) opt_.on_step(step_ + 1, w.steps());
  start_step(step_ + 1);
}

void Pipeline::start_invocation(uint32_t inv) {
  const WorkloadView& w = *w_;
  const uint32_t slot = acquire_slot();
  Invocation& v = *slots_[slot];
  v.graph.clear();
  v.requests.clear();
  v.waiters.clear();
  v.load_tails.clear();
  v.external.clear();
  v.index = inv;
  v.layer = w.lookups.inv_layer[inv];
  v.phase = w.lookups.inv_phase[inv];
  v.start = platform_->now();
  const uint32_t layer = v.layer;
  const bool decode = v.phase == 1;

  const uint32_t dense_op = add_dense_op(v, decode);
  collect_demands(inv, layer, decode);
  finish_demands();
  walk_lookups(v, decode, dense_op);
  note_peaks();
  scheduling_.order(ScheduleContext{layer, decode, dense_op, platform_, platform_->units(ResourceClass::kCpu),
                                    loads_->shards(), run_id_},
                    v.requests, v.graph);
  v.open_layer_ops = static_cast<uint32_t>(v.graph.size());

  if (prefetch_) {
    proposals_.clear();
    prefetch_->propose(PrefetchContext{&w, inv, step_, layer, decode}, proposals_);
    for (const auto& pr : proposals_) consider_prefetch(v, slot, pr);
  }
  if (v.graph.size() > kOpMask)
    throw Error("pipeline: one layer invocation needs more than " + std::to_string(kOpMask) + " ops");
  submit_invocation(v, slot);
}

uint32_t Pipeline::add_dense_op(Invocation& v, bool decode) {
  const uint32_t layer = v.layer;
  Op dense;
  dense.kind = OpKind::kDenseCompute;
  dense.resource = ResourceClass::kGpu;
  dense.layer = static_cast<uint16_t>(layer);
  dense.bytes = costs_.dense_bytes[layer];
  dense.tokens = step_timing_.tokens;
  dense.flops = costs_.dense_flops_per_token * step_timing_.tokens;
  dense.prefill = !decode;
  return v.graph.add(dense);
}

void Pipeline::collect_demands(uint32_t inv, uint32_t layer, bool decode) {
  const WorkloadView& w = *w_;
  demands_.clear();
  for (uint32_t j = w.lookups.inv_begin[inv]; j < w.lookups.inv_begin[inv + 1]; ++j) {
    ExpertDemand d;
    d.expert = static_cast<uint16_t>(w.lookups.key[j] - layer * w.experts);
    d.tokens = w.tokens[j];
    d.next_use = w.lookups.next_use.empty() ? kNeverUsedAgain : w.lookups.next_use[j];
    demands_.push_back(d);
  }
  // The identity router changes nothing: finish_demands() then needs no copy (unless it adds the layer's
  // other experts, which its general path does).
  if (routing_.identity() && !opt_.load_whole_layer) return;
  original_ = demands_;
  if (routing_.identity()) return;
  if (w.routing.empty())
    throw Error(
        "pipeline: the routing policy needs each token's routing (the trace's records), and this "
        "workload was built without them");
  const InvocationTokens tok(w.routing, inv);
  const uint32_t K = w.routing.top_k;
  route_out_.resize(size_t{tok.size()} * K);
  for (uint32_t t = 0; t < tok.size(); ++t)
    std::copy_n(tok.ids(t).begin(), K, route_out_.begin() + size_t{t} * K);
  RoutingContext rc{layer, decode, w.top_k, this, &tok};
  routing_.route(rc, route_out_);
  result_->deviation.add(tok, route_out_);
  derive_demands(route_out_, K, w.experts, route_pos_, demands_);
  // The router's next use for the experts it asked for (the others are set to "never" below).
  for (uint32_t i = 0; i < original_.size(); ++i) route_pos_[original_[i].expert] = i;
  for (auto& d : demands_)
    d.next_use = route_pos_[d.expert] != kNoSlot ? original_[route_pos_[d.expert]].next_use : kNeverUsedAgain;
  for (const auto& d : original_) route_pos_[d.expert] = kNoSlot;
}

void Pipeline::finish_demands() {
  const WorkloadView& w = *w_;
  PipelineResult& result = *result_;
  // Measure the rewrite: an original expert that is no longer requested was replaced or dropped.
  // kept_[e]: bit 0 = requested after the rewrite, bit 1 = requested by the router.
  if (routing_.identity() && !opt_.load_whole_layer) {  // nothing rewritten, nothing added, nothing to count
    result.routing.lookups += demands_.size();
    return;
  }
  result.routing.lookups += original_.size();
  for (const auto& d : demands_) kept_[d.expert] |= 1;
  for (const auto& d : original_) {
    if (!(kept_[d.expert] & 1)) {
      ++result.routing.changed_lookups;
      result.routing.changed_tokens += d.tokens;
    }
    kept_[d.expert] |= 2;
  }
  for (auto& d : demands_)  // a key the router did not ask for has no valid oracle next-use
    if (!(kept_[d.expert] & 2)) d.next_use = kNeverUsedAgain;
  if (opt_.load_whole_layer) {
    // Layer-offload: the layer's whole weights are loaded; experts nobody routed to are not computed.
    for (uint16_t e = 0; e < w.experts; ++e)
      if (!(kept_[e] & 1)) demands_.push_back(ExpertDemand{e, 0, kNeverUsedAgain});
  }
  for (const auto& d : original_) kept_[d.expert] = 0;
  for (const auto& d : demands_) kept_[d.expert] = 0;
}

void Pipeline::walk_lookups(Invocation& v, bool decode, uint32_t dense_op) {
  PipelineResult& result = *result_;
  const uint32_t inv = v.index;
  const uint32_t layer = v.layer;
  // Each lookup's result becomes the expert's loads before the next lookup (core/invocation_walker.h).
  const auto on_lookup = [&](const ExpertDemand& d, uint32_t key, const LookupResult& found) {
    const auto si = static_cast<size_t>(found.state);
    ++result.states.lookups[si];
    if (decode) ++result.states.decode_lookups[si];
    if (found.state == ExpertState::kMissed && !loaded_[key]) {
      ++result.states.cold_misses;
      if (decode) ++result.states.decode_cold_misses;
    }
    loaded_[key] = 1;
    if (found.state == ExpertState::kFull && found.tier == MemoryTier::kHost) ++result.states.host_hits;
    if (prefetched_[key]) {
      // Useful only when its target invocation uses it; a later use means the prediction missed.
      prefetched_[key] = 0;
      if (prefetch_target_[key] == inv) {
        ++result.prefetch.useful;
        if (inflight_.count(key)) ++result.prefetch.late;
      } else {
        ++result.prefetch.useless;
        result.prefetch.useless_bytes += prefetch_bytes_[key];
      }
    }
    // v.external: zeros past its size (start_invocation clears it), grown where an op waits.
    const uint32_t first = static_cast<uint32_t>(v.graph.size());
    if (d.tokens > 0 && !opt_.compute_after_loads)  // build_request()'s common case, without its call
      add_request(v, layer, d.expert, d.tokens, found, dense_op);
    else
      build_request(v, layer, d.expert, d.tokens, found, dense_op);
    // (Most runs prefetch nothing: an empty map answers without hashing the key.)
    if (found.state != ExpertState::kMissed && !inflight_.empty() && inflight_.count(key)) {
      v.external.resize(v.graph.size(), 0);
      ++result.states.in_flight;
      wait_for_inflight(v, key, first, dense_op);
    }
  };
  layer_loads_.clear();
  deferred_.clear();
  walker_.walk_demands(residency_, w_->lookups, inv, demands_, on_lookup);
  if (opt_.compute_after_loads) add_deferred_computes(v, dense_op);
}

void Pipeline::add_deferred_computes(Invocation& v, uint32_t dense_op) {
  if (layer_loads_.empty()) layer_loads_.push_back(dense_op);
  for (const auto& [request, op] : deferred_) v.requests[request].compute_op = v.graph.add(op, layer_loads_);
}

void Pipeline::consider_prefetch(Invocation& v, uint32_t slot, const PrefetchRequest& pr) {
  const WorkloadView& w = *w_;
  PipelineResult& result = *result_;
  const uint32_t inv = v.index;
  check_prefetch_request(pr, w.layers, w.experts);
  if (pr.layer == v.layer) return;
  const uint32_t key = pr.layer * w.experts + pr.expert;
  ++result.prefetch.proposed;
  // Prefetch loads yield to every demand op, and each keeps its invocation's slot until it has run: a
  // predictor that proposes faster than the SSD can serve would pile them up without bound. Past half
  // the slots in use, new proposals are declined (a real engine's prefetch queue is bounded too).
  if (slots_.size() - free_slots_.size() >= kMaxSlots / 2) {
    ++result.prefetch.declined;
    if (!prefetch_backlog_warned_) {
      prefetch_backlog_warned_ = true;
      warn("prefetch: the prefetch loads waiting behind demand reads hold " + std::to_string(kMaxSlots / 2) +
           " layer invocations; further proposals are declined while that backlog lasts (the predictor "
           "proposes more than the SSD can serve)");
    }
    return;
  }
  if (prefetched_[key] || inflight_.count(key) || residency_.peek(key).state == ExpertState::kFull) {
    ++result.prefetch.already_resident;
    return;
  }
  uint32_t next_use = kNeverUsedAgain;
  if (pr.target_invocation != kNoInvocation) next_use = pr.target_invocation;
  ExpertState target = ExpertState::kMissed;
  const ExpertState from = residency_.prefetch(pr.layer, key, next_use, &target);
  if (target == from || target == ExpertState::kMissed) {
    ++result.prefetch.declined;
    return;
  }
  ++result.prefetch.issued;
  prefetched_[key] = 1;
  loaded_[key] = 1;
  uint32_t target_inv = pr.target_invocation;
  if (target_inv == kNoInvocation) target_inv = default_prefetch_target(w.lookups, inv, pr.layer, w.layers);
  prefetch_target_[key] = target_inv;
  const size_t before = v.load_tails.size();
  build_prefetch(v, pr.layer, pr.expert, from, target);
  auto& tails = inflight_[key];
  tails.clear();
  for (size_t t = before; t < v.load_tails.size(); ++t)
    tails.push_back((slot << kOpBits) | v.load_tails[t].second);
  // A move that needs no read (the target state's components are all held already) is never in flight:
  // an entry without tails would wait for an op that does not exist.
  if (tails.empty()) inflight_.erase(key);
  note_peaks();
}

void Pipeline::submit_invocation(Invocation& v, uint32_t slot) {
  // The graph is final (its successor lists were linked as its ops were added; prefetch loads carry their
  // priority from build_prefetch): the dependencies left per op, and the ops ready now.
  const OpGraph& g = v.graph;
  platform_->ops_planned(g);
  const auto n = static_cast<uint32_t>(g.size());
  // Only a graph with waits on earlier loads holds external counts (wait_for_inflight grows them); the counts
  // left are all overwritten below, so neither vector is filled first.
  if (v.remaining.size() < n) v.remaining.resize(n);
  v.open_ops = n;
  ready_.clear();
  uint32_t* remaining = v.remaining.data();
  if (v.external.empty()) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t r = g.dep_count(i);
      remaining[i] = r;
      if (r == 0) ready_.push_back((slot << kOpBits) | i);
    }
  } else {
    v.external.resize(n, 0);
    const uint32_t* external = v.external.data();
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t r = g.dep_count(i) + external[i];
      remaining[i] = r;
      if (r == 0) ready_.push_back((slot << kOpBits) | i);
    }
  }
  submit(ready_);
}

PipelineResult Pipeline::run(const WorkloadView& w, Platform& platform) {
  if (costs_.expert_bytes.size() < w.layers || costs_.dense_bytes.size() < w.layers)
    throw Error("pipeline: model costs cover fewer layers than the workload");
  PipelineResult result;
  result_ = &result;
  platform_ = &platform;
  w_ = &w;
  experts_ = w.experts;
  finished_ = false;
  prefetch_backlog_warned_ = false;
  result.timeline_first_step = opt_.timeline_first_step;
  result.timeline_last_step = opt_.timeline_last_step;
  in_window_ = false;
  kept_.assign(w.experts, 0);
  templates_->reset(costs_, w.layers);
  run_id_ = next_run.fetch_add(1, std::memory_order_relaxed);
  walker_ = InvocationWalker(w.experts);
  route_pos_.assign(w.experts, kNoSlot);
  clock_ = next_clock_ = 0;
  held_.assign(size_t{w.layers} * w.experts, 0);
  lifetimes_.reset(size_t{w.layers} * w.experts);
  prefetched_.assign(size_t{w.layers} * w.experts, 0);
  loaded_.assign(size_t{w.layers} * w.experts, 0);
  prefetch_bytes_.assign(size_t{w.layers} * w.experts, 0);
  prefetch_target_.assign(size_t{w.layers} * w.experts, kNoInvocation);
  inflight_.clear();
  for (const auto& p : residency_.pools()) result.pools.push_back(PoolUsage{p, 0, 0, 0, 0, 0, 0});
  // A second run on the same residency (a warm start, SystemConfig::warm_stream) finds its pools as the first
  // left them: their bytes carry over, and its peaks start there.
  if (pool_bytes_.size() != result.pools.size()) pool_bytes_.assign(result.pools.size(), 0);
  uint64_t held_bytes = 0;
  for (size_t p = 0; p < pool_bytes_.size(); ++p) {
    result.pools[p].peak_bytes = pool_bytes_[p];
    held_bytes += pool_bytes_[p];
  }
  result.memory_peak = held_bytes;
  platform.memory_pools(residency_.pools());
  // The platform and the residency must not call back into this pipeline after run() (also when it throws).
  struct Reset {
    Platform* platform;
    Residency* residency;
    ~Reset() {
      if (platform) platform->set_queue_observer(nullptr);
      residency->set_listener(nullptr);
    }
  } reset{opt_.record_timeline ? &platform : nullptr, &residency_};
  residency_.set_listener(this);
  record_counters_ = opt_.record_timeline;
  if (opt_.record_timeline) start_counters(platform);
  const double t0 = platform.now();
  result.steps.reserve(w.steps());
  if (w.seq_first_step.size() != w.seq_last_step.size())
    throw Error("pipeline: the workload's sequence table has first and last steps of different lengths");
  for (size_t i = 0; i < w.seq_first_step.size(); ++i) {
    if (w.seq_first_step[i] > w.seq_last_step[i] || w.seq_last_step[i] >= w.steps())
      throw Error("pipeline: sequence " + std::to_string(i) + " spans steps outside the workload");
    result.sequences.push_back(SequenceSteps{w.seq_first_step[i], w.seq_last_step[i]});
  }
  result.invocations.reserve(w.lookups.invocations());
  start_step(0);
  platform.run_until_idle();
  if (!finished_ || !inflight_.empty())
    throw Error("pipeline: the run did not complete (an op's dependency never ran)");
  for (uint32_t k = 0; k < prefetched_.size(); ++k)
    if (prefetched_[k]) {
      ++result.prefetch.useless;
      result.prefetch.useless_bytes += prefetch_bytes_[k];
    }
  for (size_t p = 0; p < pool_bytes_.size(); ++p) result.pools[p].final_bytes = pool_bytes_[p];
  result.cache = residency_.counters();
  result.lifetime = lifetimes_.finish();
  result.routing_counters = routing_.counters();
  result.resources = platform.resource_stats();
  result.makespan = platform.now() - t0;
  result_ = nullptr;
  w_ = nullptr;
  return result;
}

}  // namespace moesim
