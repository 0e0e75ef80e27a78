// Hand-made inputs of the cluster systems' tests (tests/serving/*_system_test.cpp for prism and
// moe-infinity): a one-layer model with small-moe's expert shapes, a trace of one decode token per sequence,
// and arrivals at given times, so that each test's times are a hand computation.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/json_io.h"
#include "core/model_spec.h"
#include "serving/cluster_serving.h"
#include "tests/fixtures.h"
#include "traces/trace.h"

namespace moesim::test {

// small-moe's expert shapes with 1 MoE layer of `experts` experts, top-1, named `name`.
inline ModelSpec one_layer_cluster_model(const std::string& name, uint32_t experts) {
  Json j = load_json_file(test_data("models/small-moe.json"));
  j["num_layers"] = 1;
  j["moe_layers"] = 1;
  j["routed_experts"] = experts;
  j["top_k"] = 1;
  return model_from_json(j, name);
}

// One decode token per sequence of model `model` (`model_experts` experts), the expert of sequence s being
// experts[s].
inline traces::Trace one_token_trace(const std::vector<uint32_t>& experts, uint32_t model_experts,
                                     const std::string& model) {
  traces::TraceInfo info;
  info.model = model;
  info.layers = 1;
  info.experts = model_experts;
  info.top_k = 1;
  traces::TraceBuilder b(info, false, false, "test");
  for (uint32_t s = 0; s < experts.size(); ++s) {
    const uint32_t e[] = {experts[s]};
    b.add(s, traces::Phase::kDecode, 0, 0, e, {}, {}, s + 1);
  }
  return std::move(b).finish();
}

inline ArrivalSpec arrivals_at(std::vector<double> times) {
  ArrivalSpec a;
  a.kind = ArrivalSpec::Kind::kTimestamps;
  a.times_s = std::move(times);
  return a;
}

}  // namespace moesim::test
