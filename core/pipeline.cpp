#include "core/pipeline.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

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

Pipeline::Pipeline(const ModelCosts& costs, const PipelineOptions& opt, ExpertCache& cache,
                   RoutingPolicy& routing, SchedulingPolicy& scheduling)
    : costs_(costs), opt_(opt), cache_(cache), routing_(routing), scheduling_(scheduling) {}

ExpertState Pipeline::state(uint32_t layer, uint32_t expert) const {
  return cache_.resident(layer * experts_ + expert) ? ExpertState::kFull : ExpertState::kMissed;
}

void Pipeline::build_expert(uint32_t layer, const ExpertDemand& d, ExpertState st, uint32_t dense) {
  ExpertRequest req;
  req.expert = d.expert;
  req.tokens = d.tokens;
  req.state = st;
  req.first_op = static_cast<uint32_t>(graph_.size());
  Op base;
  base.layer = static_cast<uint16_t>(layer);
  base.expert = d.expert;
  tensor_tails_.clear();
  if (st != ExpertState::kFull) {
    const auto tensors = static_cast<uint32_t>(std::max<size_t>(costs_.tensor_share.size(), 1));
    for (uint32_t t = 0; t < tensors; ++t) {
      Op op = base;
      op.tensor = static_cast<uint16_t>(t);
      const uint64_t bytes = costs_.tensor_bytes(layer, t);
      auto make = [&](OpKind k, uint64_t b) {
        Op o = op;
        o.kind = k;
        o.resource = default_resource(k);
        o.bytes = b;
        return o;
      };
      if (!opt_.layout.compressed) {
        // Full-tensor offloading: only F (handled above) and M exist.
        const uint32_t read = graph_.add(make(OpKind::kSsdRead, bytes), {dense});
        tensor_tails_.push_back(graph_.add(make(OpKind::kTransfer, bytes), {read}));
        continue;
      }
      // ZipMoE's split tensor (§3.1): SM-chunk + K compressed exponent shards (E-chunks).
      const auto sm =
          static_cast<uint64_t>(std::llround(static_cast<double>(bytes) * opt_.layout.sm_fraction));
      const uint64_t e_raw = bytes - sm;
      const uint32_t k = std::max(opt_.layout.shards, 1u);
      const bool read_e = st == ExpertState::kMissed || st == ExpertState::kSM;
      const bool read_sm = st == ExpertState::kMissed || st == ExpertState::kE;
      std::vector<uint32_t> into_transfer;
      for (uint32_t s = 0; s < k; ++s) {  // E-chunks are read before SM-chunks (§3.3)
        const uint64_t raw = e_raw / k + (s < e_raw % k ? 1 : 0);
        std::vector<uint32_t> deps{dense};
        if (read_e) {
          Op r = make(OpKind::kSsdRead,
                      static_cast<uint64_t>(std::ceil(static_cast<double>(raw) * opt_.layout.e_ratio)));
          r.shard = static_cast<uint16_t>(s);
          r.part = TensorPart::kE;
          deps = {graph_.add(r, {dense})};
        }
        Op dc = make(OpKind::kDecompress, raw);
        dc.shard = static_cast<uint16_t>(s);
        dc.part = TensorPart::kE;
        into_transfer.push_back(graph_.add(dc, deps));
      }
      if (read_sm) {
        Op r = make(OpKind::kSsdRead, sm);
        r.part = TensorPart::kSm;
        into_transfer.push_back(graph_.add(r, {dense}));
      }
      const uint32_t xfer = graph_.add(make(OpKind::kTransfer, bytes), into_transfer);
      tensor_tails_.push_back(graph_.add(make(OpKind::kRecover, bytes), {xfer}));
    }
  }
  Op compute = base;
  compute.kind = OpKind::kExpertCompute;
  compute.resource = ResourceClass::kGpu;
  compute.bytes = costs_.expert_bytes[layer];
  compute.tokens = d.tokens;
  compute.flops = costs_.expert_flops_per_token * d.tokens;
  if (tensor_tails_.empty()) tensor_tails_.push_back(dense);
  req.compute_op = graph_.add(compute, tensor_tails_);
  requests_.push_back(req);
}

void Pipeline::submit_ready(std::vector<uint32_t>& ready) {
  // Ops that become ready at the same instant go to the platform in priority order (then graph order),
  // so that a free resource starts the most urgent one.
  std::sort(ready.begin(), ready.end(), [&](uint32_t a, uint32_t b) {
    const int64_t pa = graph_.op(a).priority, pb = graph_.op(b).priority;
    return pa != pb ? pa < pb : a < b;
  });
  for (uint32_t i : ready) platform_->submit(graph_.op(i), this, i);
  ready.clear();
}

void Pipeline::op_done(uint32_t token, const OpTiming& timing) {
  graph_end_ = std::max(graph_end_, timing.end);
  ++result_->ops;
  const Op& op = graph_.op(token);
  if (op.kind == OpKind::kSsdRead) result_->ssd_bytes += op.bytes;
  if (in_window_) result_->timeline.push_back(TimelineEvent{op, timing, step_});
  // ready_ is free here: the platform never calls op_done from inside submit().
  for (uint32_t s : graph_.succs(token))
    if (--remaining_deps_[s] == 0) ready_.push_back(s);
  if (!ready_.empty()) submit_ready(ready_);
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

void Pipeline::start_counters(Platform& platform) {
  auto& tracks = result_->counter_tracks;
  tracks.push_back(CounterTrack{CounterTrack::Kind::kPoolBytes, "full-tensor pool"});
  first_queue_track_ = static_cast<uint32_t>(tracks.size());
  for (auto& q : platform.queue_names()) tracks.push_back(CounterTrack{CounterTrack::Kind::kQueueLength, q});
  counters_.assign(tracks.size(), CounterState{});
  pool_bytes_ = 0;
  platform.set_queue_observer(this);
}

void Pipeline::enter_window() {
  // Every track starts the window with its current value, changed or not.
  for (uint32_t t = 0; t < counters_.size(); ++t) {
    counters_[t].last = result_->counter_samples.size();
    result_->counter_samples.push_back(CounterSample{platform_->now(), t, counters_[t].value});
  }
}

void Pipeline::run_graph(Platform& platform) {
  graph_.finalize();
  remaining_deps_.resize(graph_.size());
  ready_.clear();
  for (uint32_t i = 0; i < graph_.size(); ++i) {
    remaining_deps_[i] = static_cast<uint32_t>(graph_.deps(i).size());
    if (remaining_deps_[i] == 0) ready_.push_back(i);
  }
  graph_end_ = platform.now();
  submit_ready(ready_);
  platform.run_until_idle();
  for (uint32_t i = 0; i < graph_.size(); ++i)
    if (remaining_deps_[i] != 0)
      throw Error("pipeline: an op graph did not complete (a dependency never ran)");
}

PipelineResult Pipeline::run(const WorkloadView& w, Platform& platform) {
  if (costs_.expert_bytes.size() < w.layers || costs_.dense_bytes.size() < w.layers)
    throw Error("pipeline: model costs cover fewer layers than the workload");
  PipelineResult result;
  result_ = &result;
  platform_ = &platform;
  experts_ = w.experts;
  result.timeline_first_step = opt_.timeline_first_step;
  result.timeline_last_step = opt_.timeline_last_step;
  in_window_ = false;
  // The platform must not call back into this pipeline after run() (also when it throws).
  struct ObserverReset {
    Platform* platform;
    ~ObserverReset() {
      if (platform) platform->set_queue_observer(nullptr);
    }
  } reset{opt_.record_timeline ? &platform : nullptr};
  if (opt_.record_timeline) start_counters(platform);
  const double t0 = platform.now();
  std::vector<ExpertDemand> demands, original;
  std::vector<uint8_t> kept(w.experts, 0);
  result.steps.reserve(w.steps());
  result.invocations.reserve(w.lookups.invocations());
  for (size_t s = 0; s < w.steps(); ++s) {
    step_ = static_cast<uint32_t>(s);
    const bool was_in_window = in_window_;
    in_window_ = opt_.record_timeline && s >= opt_.timeline_first_step && s <= opt_.timeline_last_step;
    if (in_window_ && !was_in_window) enter_window();
    StepTiming st{w.step_phase[s], w.step_tokens[s], platform.now(), 0};
    for (uint32_t inv = w.step_begin[s]; inv < w.step_begin[s + 1]; ++inv) {
      const uint32_t layer = w.lookups.inv_layer[inv];
      const bool decode = w.lookups.inv_phase[inv] == 1;
      demands.clear();
      for (uint32_t j = w.lookups.inv_begin[inv]; j < w.lookups.inv_begin[inv + 1]; ++j) {
        ExpertDemand d;
        d.expert = static_cast<uint16_t>(w.lookups.key[j] - layer * w.experts);
        d.tokens = w.tokens[j];
        d.next_use = w.lookups.next_use.empty() ? kNeverUsedAgain : w.lookups.next_use[j];
        demands.push_back(d);
      }
      original = demands;
      RoutingContext rc{layer, decode, w.top_k, this};
      routing_.rewrite(rc, demands);
      // Measure the rewrite: an original expert that is no longer requested was replaced or dropped.
      // kept[e]: bit 0 = requested after the rewrite, bit 1 = requested by the router.
      result.routing.lookups += original.size();
      for (const auto& d : demands) kept[d.expert] |= 1;
      for (const auto& d : original) {
        if (!(kept[d.expert] & 1)) {
          ++result.routing.changed_lookups;
          result.routing.changed_tokens += d.tokens;
        }
        kept[d.expert] |= 2;
      }
      for (auto& d : demands)  // a key the router did not ask for has no valid oracle next-use
        if (!(kept[d.expert] & 2)) d.next_use = kNeverUsedAgain;
      for (const auto& d : demands) kept[d.expert] = 0;
      for (const auto& d : original) kept[d.expert] = 0;

      graph_.clear();
      requests_.clear();
      Op dense;
      dense.kind = OpKind::kDenseCompute;
      dense.resource = ResourceClass::kGpu;
      dense.layer = static_cast<uint16_t>(layer);
      dense.bytes = costs_.dense_bytes[layer];
      dense.tokens = st.tokens;
      dense.flops = costs_.dense_flops_per_token * st.tokens;
      const uint32_t dense_op = graph_.add(dense);
      cache_.begin_invocation(layer, decode);
      for (const auto& d : demands) {
        const bool hit = cache_.lookup(layer * w.experts + d.expert, d.next_use);
        if (!hit && opt_.record_timeline) pool_bytes_ += costs_.expert_bytes[layer];
        build_expert(layer, d, hit ? ExpertState::kFull : ExpertState::kMissed, dense_op);
      }
      evicted_.clear();
      cache_.end_invocation(static_cast<uint32_t>(demands.size()),
                            opt_.record_timeline ? &evicted_ : nullptr);
      for (uint32_t key : evicted_) pool_bytes_ -= costs_.expert_bytes[key / w.experts];
      if (opt_.record_timeline) set_counter(0, pool_bytes_);
      scheduling_.order(ScheduleContext{layer, decode, dense_op}, requests_, graph_);
      const double start = platform.now();
      run_graph(platform);
      result.invocations.push_back(InvocationTiming{
          static_cast<uint16_t>(layer), static_cast<uint8_t>(decode ? 1 : 0), step_, start, graph_end_});
    }
    st.end = platform.now();
    result.steps.push_back(st);
    if (opt_.on_step) opt_.on_step(s + 1, w.steps());
  }
  in_window_ = false;
  result.cache = cache_.counters();
  result.resources = platform.resource_stats();
  result.makespan = platform.now() - t0;
  result_ = nullptr;
  return result;
}

}  // namespace moesim
