#include "sim/measured_durations.h"

namespace moesim::sim {

uint64_t MeasuredDurations::identity(const Op& op) {
  return (uint64_t{op.fused_read()} << 63) | (uint64_t{static_cast<uint8_t>(op.kind)} << 60) | (uint64_t{static_cast<uint8_t>(op.resource)} << 58) |
         (uint64_t{static_cast<uint8_t>(op.part)} << 56) | (uint64_t{op.layer} << 40) | (uint64_t{op.expert} << 24) |
         (uint64_t{static_cast<uint8_t>(op.tensor)} << 16) | op.shard;
}

void MeasuredDurations::add(const Op& op, double seconds, double handoff, double turnaround, double cpu_tail) {
  by_identity_[identity(op)].m.push_back(Measured{seconds, handoff, turnaround, cpu_tail});
  ++total_;
}

const MeasuredDurations::Measured* MeasuredDurations::peek(const Op& op) const {
  const auto it = by_identity_.find(identity(op));
  if (it == by_identity_.end() || it->second.pos >= it->second.m.size()) return nullptr;
  return &it->second.m[it->second.pos];
}

double MeasuredDurations::next(const Op& op) {
  auto it = by_identity_.find(identity(op));
  if (it == by_identity_.end() || it->second.pos >= it->second.m.size()) {
    ++unmatched_;
    return -1;
  }
  ++matched_;
  return it->second.m[it->second.pos++].seconds;
}

bool MeasuredDurations::next_planning(uint32_t ops, PlanningTime* out) {
  if (planning_pos_ < planning_.size() && planning_[planning_pos_].ops == ops) {
    *out = planning_[planning_pos_++];
    ++planning_matched_;
    return true;
  }
  if (planning_pos_ < planning_.size()) ++planning_pos_;  // the runs parted here: stay in step by graph
  ++planning_unmatched_;
  return false;
}

void MeasuredDurations::rewind() {
  for (auto& [id, q] : by_identity_) q.pos = 0;
  planning_pos_ = 0;
  matched_ = unmatched_ = planning_matched_ = planning_unmatched_ = 0;
}

}  // namespace moesim::sim
