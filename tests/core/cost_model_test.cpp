// The cost model places ops by their resource: expert compute and recovery on the CPU (the system's
// choice, --compute-on / --recover-on) use the CPU's per-core figures; the GPU paths are unchanged.
#include "core/cost_model.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/error.h"
#include "base/json_io.h"
#include "core/data_dir.h"

namespace moesim {
namespace {

Op op(OpKind k, ResourceClass r, uint64_t bytes, double flops = 0) {
  Op o;
  o.kind = k;
  o.resource = r;
  o.bytes = bytes;
  o.flops = flops;
  return o;
}

TEST(CostModel, ExpertComputeOnTheCpuIsARooflineOfOneCore) {
  const HardwareProfile hw = load_hardware("jetson-agx-orin-64gb");  // 10 GB/s and 35.2 GFLOP/s per core
  const CostModel m(hw);
  // 9 MB of weights, one token (18 MFLOP): memory-bound, 9e6 / 10e9 = 0.9 ms.
  EXPECT_NEAR(m.duration(op(OpKind::kExpertCompute, ResourceClass::kCpu, 9'000'000, 18e6)), 0.9e-3, 1e-12);
  // 64 tokens: 1.152 GFLOP / 35.2 GFLOP/s = 32.7 ms, compute-bound.
  EXPECT_NEAR(m.duration(op(OpKind::kExpertCompute, ResourceClass::kCpu, 9'000'000, 1.152e9)),
              1.152e9 / 35.2e9, 1e-12);
  // The GPU path: the GPU roofline plus the kernel overhead.
  EXPECT_NEAR(m.duration(op(OpKind::kExpertCompute, ResourceClass::kGpu, 9'000'000, 18e6)),
              9e6 / 204.8e9 + 10e-6, 1e-12);
}

TEST(CostModel, AnEnginesExpertRateCopiesAndPrefillComputeFactor) {
  HardwareProfile hw = load_hardware("jetson-agx-orin-64gb");  // 10 GB/s and 35.2 GFLOP/s per core
  const Op expert = op(OpKind::kExpertCompute, ResourceClass::kCpu, 9'000'000, 18e6);
  const Op copy = op(OpKind::kTransfer, ResourceClass::kCpu, 3'000'000);
  EXPECT_NEAR(CostModel(hw).duration(copy), 0, 1e-15);  // no load_copy_bandwidth: the copy takes no time
  hw.cpu_expert_bandwidth = 3e9;
  hw.cpu_load_copy_bandwidth = 6e9;
  hw.cpu_prefill_compute_slowdown = 1.5;
  const CostModel m(hw);
  EXPECT_NEAR(m.duration(expert), 9e6 / 3e9, 1e-12);  // the expert rate, not the copy rate
  EXPECT_NEAR(m.duration(copy), 3e6 / 6e9, 1e-12);
  Op prefill = expert;
  prefill.prefill = true;
  EXPECT_NEAR(m.duration(prefill), 1.5 * 9e6 / 3e9, 1e-12);
  Op dense = op(OpKind::kDenseCompute, ResourceClass::kGpu, 9'000'000, 18e6);
  const double decode_dense = m.duration(dense);
  dense.prefill = true;
  EXPECT_NEAR(m.duration(dense), 1.5 * decode_dense, 1e-12);
  // A dense op on the CPU keeps memcpy_bandwidth_per_core's roofline (the expert rate is an expert's).
  EXPECT_NEAR(m.duration(op(OpKind::kDenseCompute, ResourceClass::kCpu, 9'000'000, 18e6)), 0.9e-3, 1e-12);
}

TEST(CostModel, RecoveryOnTheCpuStreamsTwiceTheTensorThroughOneCore) {
  const CostModel m(load_hardware("jetson-agx-orin-64gb"));
  EXPECT_NEAR(m.duration(op(OpKind::kRecover, ResourceClass::kCpu, 3'000'000)), 2 * 3e6 / 10e9, 1e-12);
  EXPECT_NEAR(m.duration(op(OpKind::kRecover, ResourceClass::kGpu, 3'000'000)), 2 * 3e6 / 204.8e9 + 10e-6,
              1e-12);
}

TEST(CostModel, AProfileCanGiveExpertComputeAndRecoveryTheirOwnGpuCosts) {
  // A calibrated GPU profile: an expert's FFN is several launches, a dense GEMM one; the recovery kernel
  // has its own bandwidth and overhead. Absent, they fall back to the shared figures (tests above).
  Json j = load_json_file(resolve_preset("hardware", "server-h100-nvme"));
  j["gpu"]["kernel_overhead"] = 30e-6;
  j["gpu"]["expert_overhead"] = 50e-6;
  j["gpu"]["recover_bandwidth"] = 20e9;
  j["gpu"]["recover_overhead"] = 15e-6;
  const HardwareProfile hw = hardware_from_json(j, "test");
  const CostModel m(hw);
  const double roof = 9e6 / hw.gpu_memory_bandwidth;
  EXPECT_NEAR(m.duration(op(OpKind::kExpertCompute, ResourceClass::kGpu, 9'000'000, 18e6)), roof + 50e-6,
              1e-12);
  EXPECT_NEAR(m.duration(op(OpKind::kDenseCompute, ResourceClass::kGpu, 9'000'000, 18e6)), roof + 30e-6,
              1e-12);
  EXPECT_NEAR(m.duration(op(OpKind::kRecover, ResourceClass::kGpu, 3'000'000)), 2 * 3e6 / 20e9 + 15e-6,
              1e-12);
  j["gpu"]["recover_bandwidth"] = 0;
  EXPECT_THROW(hardware_from_json(j, "test"), Error);
}

TEST(CostModel, ExpertComputeOnFreshWeightsPaysItsOwnFixedCostAndNoMemoryTerm) {
  // Weights the request just read or recovered (Op::fresh) are still in the last-level cache.
  Json j = load_json_file(resolve_preset("hardware", "server-h100-nvme"));
  const HardwareProfile plain = hardware_from_json(j, "test");
  Op fresh = op(OpKind::kExpertCompute, ResourceClass::kGpu, 9'000'000, 18e6);
  fresh.fresh = true;
  // Without gpu.fresh_expert_overhead: the same cost as resident weights.
  EXPECT_DOUBLE_EQ(
      CostModel(plain).duration(fresh),
      CostModel(plain).duration(op(OpKind::kExpertCompute, ResourceClass::kGpu, 9'000'000, 18e6)));
  j["gpu"]["fresh_expert_overhead"] = 7e-6;
  const HardwareProfile hw = hardware_from_json(j, "test");
  const CostModel m(hw);
  EXPECT_NEAR(m.duration(fresh), 18e6 / hw.gpu_bf16_flops + 7e-6, 1e-12);
  EXPECT_NEAR(m.duration(op(OpKind::kExpertCompute, ResourceClass::kGpu, 9'000'000, 18e6)),
              9e6 / hw.gpu_memory_bandwidth + hw.gpu_expert_overhead, 1e-12);
  // Dense compute is never fresh; a FLOP-bound expert stays FLOP-bound.
  Op dense = op(OpKind::kDenseCompute, ResourceClass::kGpu, 9'000'000, 18e6);
  dense.fresh = true;
  EXPECT_NEAR(m.duration(dense), 9e6 / hw.gpu_memory_bandwidth + hw.gpu_kernel_overhead, 1e-12);
  Op big = op(OpKind::kExpertCompute, ResourceClass::kGpu, 9'000'000, 1e15);
  big.fresh = true;
  EXPECT_NEAR(m.duration(big), 1e15 / hw.gpu_bf16_flops + 7e-6, 1e-9);
  j["gpu"]["fresh_expert_overhead"] = -1;
  EXPECT_THROW(hardware_from_json(j, "test"), Error);
}

TEST(CostModel, APrefillsDecompressionsAndCpuRecoveriesTakeTheProfilesSlowdown) {
  Json j = load_json_file(resolve_preset("hardware", "jetson-agx-orin-64gb"));
  j["cpu"]["decompress_bandwidth_per_core"] = "1GB/s";
  j["cpu"]["prefill_slowdown"] = {{"value", 1.5}, {"source", "test"}};
  const HardwareProfile hw = hardware_from_json(j, "test");
  const CostModel m(hw);
  Op dec = op(OpKind::kDecompress, ResourceClass::kCpu, 1'000'000);
  Op rec = op(OpKind::kRecover, ResourceClass::kCpu, 1'000'000);
  EXPECT_NEAR(m.duration(dec), 1e-3, 1e-15);
  EXPECT_NEAR(m.duration(rec), 2e6 / hw.cpu_memcpy_bandwidth, 1e-15);
  dec.prefill = rec.prefill = true;
  EXPECT_NEAR(m.duration(dec), 1.5e-3, 1e-15);
  EXPECT_NEAR(m.duration(rec), 1.5 * 2e6 / hw.cpu_memcpy_bandwidth, 1e-15);
  // Not the GPU's ops: recovery by the kernel, compute.
  Op gpu_rec = op(OpKind::kRecover, ResourceClass::kGpu, 1'000'000);
  const double plain = m.duration(gpu_rec);
  gpu_rec.prefill = true;
  EXPECT_DOUBLE_EQ(m.duration(gpu_rec), plain);
  // A factor of their own for the recoveries; the decompressions keep cpu.prefill_slowdown.
  j["cpu"]["prefill_recover_slowdown"] = {{"value", 4.0}, {"source", "test"}};
  const CostModel apart(hardware_from_json(j, "test"));
  EXPECT_NEAR(apart.duration(dec), 1.5e-3, 1e-15);
  EXPECT_NEAR(apart.duration(rec), 4 * 2e6 / hw.cpu_memcpy_bandwidth, 1e-15);
  rec.prefill = false;
  EXPECT_NEAR(apart.duration(rec), 2e6 / hw.cpu_memcpy_bandwidth, 1e-15);
  j["cpu"]["prefill_recover_slowdown"]["value"] = 0;
  EXPECT_THROW(hardware_from_json(j, "test"), Error);
  j["cpu"].erase("prefill_recover_slowdown");
  j["cpu"]["prefill_slowdown"]["value"] = 0;
  EXPECT_THROW(hardware_from_json(j, "test"), Error);
}

TEST(CostModel, AnExpertOfTwoOrMoreTokensPaysTheGemmFixedCostWhereTheProfileHasOne) {
  Json j = load_json_file(resolve_preset("hardware", "server-h100-nvme"));
  j["gpu"]["fresh_expert_overhead"] = 7e-6;
  auto expert = [](uint32_t tokens, bool fresh) {
    Op o = op(OpKind::kExpertCompute, ResourceClass::kGpu, 9'000'000, tokens * 18e6);
    o.tokens = tokens;
    o.fresh = fresh;
    return o;
  };
  // Without gpu.expert_gemm_overhead: 2 tokens cost like 1 (the roofline and the expert's fixed cost).
  const HardwareProfile plain = hardware_from_json(j, "test");
  const CostModel before(plain);
  const double roof2 = std::max(9e6 / plain.gpu_memory_bandwidth, 36e6 / plain.gpu_bf16_flops);
  EXPECT_NEAR(before.duration(expert(2, false)), roof2 + plain.gpu_expert_overhead, 1e-12);
  EXPECT_NEAR(before.duration(expert(2, true)), 36e6 / plain.gpu_bf16_flops + 7e-6, 1e-12);
  j["gpu"]["expert_gemm_overhead"] = {{"value", "130us"}, {"source", "test"}};
  const HardwareProfile hw = hardware_from_json(j, "test");
  EXPECT_DOUBLE_EQ(hw.gpu_expert_gemm_overhead, 130e-6);
  const CostModel m(hw);
  // 2+ tokens: the roofline and the GEMMs' fixed cost, fresh weights or not.
  EXPECT_NEAR(m.duration(expert(2, false)), roof2 + 130e-6, 1e-12);
  EXPECT_NEAR(m.duration(expert(2, true)), roof2 + 130e-6, 1e-12);
  const double roof64 = std::max(9e6 / hw.gpu_memory_bandwidth, 64 * 18e6 / hw.gpu_bf16_flops);
  EXPECT_NEAR(m.duration(expert(64, false)), roof64 + 130e-6, 1e-12);
  // 1 token: as before, both ways.
  EXPECT_DOUBLE_EQ(m.duration(expert(1, false)), before.duration(expert(1, false)));
  EXPECT_DOUBLE_EQ(m.duration(expert(1, true)), before.duration(expert(1, true)));
  // A dense op has a fixed cost of its own (gpu.dense_gemm_overhead): without it, as before.
  Op dense = op(OpKind::kDenseCompute, ResourceClass::kGpu, 9'000'000, 36e6);
  dense.tokens = 2;
  EXPECT_DOUBLE_EQ(m.duration(dense), before.duration(dense));
  j["gpu"]["dense_gemm_overhead"] = {{"value", "220us"}, {"source", "test"}};
  const CostModel both(hardware_from_json(j, "test"));
  EXPECT_NEAR(both.duration(dense), roof2 + 220e-6, 1e-12);
  EXPECT_NEAR(both.duration(expert(2, false)), roof2 + 130e-6, 1e-12);
  dense.tokens = 1;
  EXPECT_DOUBLE_EQ(both.duration(dense), before.duration(dense));
  // An expert on a CPU worker: its own roofline, no GEMM term.
  Op cpu = expert(2, false);
  cpu.resource = ResourceClass::kCpu;
  EXPECT_DOUBLE_EQ(both.duration(cpu), before.duration(cpu));
  for (const char* k : {"expert_gemm_overhead", "dense_gemm_overhead"}) {
    Json bad = j;
    bad["gpu"][k]["value"] = -1e-6;
    EXPECT_THROW(hardware_from_json(bad, "test"), Error) << k;
  }
  // A kind's GEMM line (gpu.<kind>_gemm_flops): its fixed part and its FLOPs in series, not the roofline;
  // only for its kind, only at 2+ tokens and only on the GPU stream.
  j["gpu"]["dense_gemm_flops"] = {{"value", 20e9}, {"source", "test"}};
  const CostModel line(hardware_from_json(j, "test"));
  dense.tokens = 4;
  dense.flops = 4 * 18e6;
  EXPECT_NEAR(line.duration(dense), 220e-6 + 72e6 / 20e9, 1e-12);
  EXPECT_DOUBLE_EQ(line.duration(expert(4, false)), both.duration(expert(4, false)));
  dense.tokens = 1;
  EXPECT_DOUBLE_EQ(line.duration(dense), before.duration(dense));
  j["gpu"]["expert_gemm_flops"] = {{"value", 10e9}, {"source", "test"}};
  const CostModel lines(hardware_from_json(j, "test"));
  EXPECT_NEAR(lines.duration(expert(4, true)), 130e-6 + 72e6 / 10e9, 1e-12);
  EXPECT_DOUBLE_EQ(lines.duration(expert(1, false)), before.duration(expert(1, false)));
  EXPECT_DOUBLE_EQ(lines.duration(cpu), before.duration(cpu));
  for (const char* k : {"expert_gemm_flops", "dense_gemm_flops"}) {
    Json bad = j;
    bad["gpu"][k]["value"] = 0;
    EXPECT_THROW(hardware_from_json(bad, "test"), Error) << k;
  }
}

TEST(CostModel, CpuComputeWithoutACpuFlopFigureIsAnError) {
  HardwareProfile hw = load_hardware("jetson-agx-orin-64gb");
  hw.cpu_flops_per_core = 0;
  const CostModel m(hw);
  try {
    m.duration(op(OpKind::kExpertCompute, ResourceClass::kCpu, 1000, 1000));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cpu.flops_per_core"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace moesim

namespace moesim {
namespace {

// Dequantization: a Qwen3-30B-A3B expert of a Q4_K_M raised layer (gate and up 2 x 768 x 2048 in Q4_K, down
// 2048 x 768 in Q6_K) on a profile giving 0.2 ns an element for Q4_K and 0.3 ns for Q6_K on the GPU adds
// 3,145,728 x 0.2 ns + 1,572,864 x 0.3 ns = 1.1010048 ms to the op, once whatever its tokens; a type the
// profile does not list, a dense op, and a profile or storage without the field add nothing.
TEST(CostModel, DequantizationAddsTheProfilesTimePerElementOfEachType) {
  Json j = load_hardware("jetson-agx-orin-64gb").raw;
  j["gpu"]["dequant_time_per_element"] = {{"q4_k", {{"value", "0.2 ns"}, {"assumption", "test"}}},
                                          {"Q6_K", {{"value", 0.3e-9}, {"assumption", "test"}}}};
  const HardwareProfile hw = hardware_from_json(j, "hw.json", true);
  EXPECT_EQ(hw.gpu_dequant_time_per_element.at("q6_k"), 0.3e-9);
  CostModel m(hw);
  const CostModel plain(hw);
  m.set_expert_storage(
      {{{"q4_k", 2ull * 768 * 2048}, {"q6_k", 2048ull * 768}}, {{"bf16", 3ull * 768 * 2048}}});
  for (uint32_t tokens : {1u, 16u}) {
    Op e = op(OpKind::kExpertCompute, ResourceClass::kGpu, 3'059'712, 2.0 * 3 * 768 * 2048 * tokens);
    e.layer = 0;
    e.tokens = tokens;
    EXPECT_NEAR(m.duration(e) - plain.duration(e), 3145728 * 0.2e-9 + 1572864 * 0.3e-9, 1e-15);
    EXPECT_NEAR(m.duration(e) - plain.duration(e), 1.1010048e-3, 1e-15);
    e.layer = 1;  // bf16: not listed
    EXPECT_EQ(m.duration(e), plain.duration(e));
  }
  Op d = op(OpKind::kDenseCompute, ResourceClass::kGpu, 1'000'000, 2e6);
  d.layer = 0;
  EXPECT_EQ(m.duration(d), plain.duration(d));
  // On the CPU the cpu section's field applies: none here.
  Op c = op(OpKind::kExpertCompute, ResourceClass::kCpu, 3'059'712, 2.0 * 3 * 768 * 2048);
  c.layer = 0;
  EXPECT_EQ(m.duration(c), plain.duration(c));
}

TEST(CostModel, BadDequantizationFieldsNameTheirPath) {
  const Json base = load_hardware("jetson-agx-orin-64gb").raw;
  auto err = [&](const Json& field) {
    Json j = base;
    j["gpu"]["dequant_time_per_element"] = field;
    try {
      (void)hardware_from_json(j, "hw.json", true);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err({{"q4_j", {{"value", "1 ns"}, {"source", "s"}}}})
                .find("hw.json: gpu.dequant_time_per_element.q4_j: unknown storage type 'q4_j'"),
            std::string::npos);
  EXPECT_NE(
      err({{"q4_k", "1 ns"}}).find("hw.json: gpu.dequant_time_per_element.q4_k: has neither source nor"),
      std::string::npos);
  EXPECT_NE(err({{"q4_k", {{"value", -1}, {"source", "s"}}}})
                .find("hw.json: gpu.dequant_time_per_element.q4_k.value: expected a non-negative number"),
            std::string::npos);
  EXPECT_NE(err({{"q4_k", {{"value", 1e-9}, {"source", "s"}}}, {"Q4_K", {{"value", 1e-9}, {"source", "s"}}}})
                .find("names q4_k again"),
            std::string::npos);
  EXPECT_NE(err(Json::array()).find("hw.json: gpu.dequant_time_per_element: expected an object"),
            std::string::npos);
}

}  // namespace
}  // namespace moesim
