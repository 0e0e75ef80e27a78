// What a run rests on (core/profile_reads.h): each member of a profile knows the field it came from (its own,
// or the one it defaults to), rests_on keeps the assumption-marked fields among those read, and a scaled
// profile moves the members that follow the scaled field.
#include "core/profile_reads.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "core/hardware_profile.h"

namespace moesim {
namespace {

Json profile() {
  return Json::parse(R"({
    "name": "p",
    "ssd": {"read_bandwidth": {"value": "1GB/s", "source": "s"}, "read_latency": {"value": "90us", "assumption": "a"},
            "queue_depth": {"value": 3, "assumption": "q"}},
    "memory": {"capacity": {"value": "8GiB", "source": "s"}, "bandwidth": {"value": "10GB/s", "source": "s"}},
    "cpu": {"cores": {"value": 4, "source": "s"}, "memcpy_bandwidth_per_core": {"value": "1GB/s", "source": "s"}},
    "gpu": {"bf16_flops": {"value": 1e12, "source": "s"}, "memory_bandwidth": {"value": "10GB/s", "source": "s"},
            "kernel_overhead": {"value": "10us", "assumption": "k"}},
    "link": {"kind": "uma", "bandwidth": {"value": "10GB/s", "source": "s"}, "latency": {"value": "5us", "source": "s"}}
  })");
}

const std::string& field(const HardwareProfile& h, HwParam p) { return h.field_of[static_cast<size_t>(p)]; }

TEST(ProfileReads, MembersNameTheFieldTheirValueCameFrom) {
  const HardwareProfile h = hardware_from_json(profile(), "p.json", true);
  EXPECT_EQ(field(h, HwParam::kSsdReadLatency), "ssd.read_latency");
  EXPECT_EQ(field(h, HwParam::kSsdPrefillReadLatency), "ssd.read_latency");  // absent: the decode figure
  EXPECT_EQ(field(h, HwParam::kGpuExpertOverhead), "gpu.kernel_overhead");
  EXPECT_EQ(field(h, HwParam::kGpuRecoverBandwidth), "gpu.memory_bandwidth");
  EXPECT_EQ(field(h, HwParam::kCpuDecompressBandwidth), "");  // no field gives it
  EXPECT_EQ(field(h, HwParam::kSsdReadCpuOverhead), "");
}

TEST(ProfileReads, RestsOnKeepsTheAssumedFieldsReadOnceEach) {
  const HardwareProfile h = hardware_from_json(profile(), "p.json", true);
  HwReads r;
  EXPECT_TRUE(rests_on_json(h, fields_read(h, r)).empty());
  r.mark(HwParam::kGpuExpertOverhead);  // through its default: gpu.kernel_overhead
  r.mark(HwParam::kGpuKernelOverhead);
  r.mark(HwParam::kSsdReadBandwidth);  // sourced: not an assumption
  r.mark(HwParam::kSsdReadLatency);
  const Json j = rests_on_json(h, fields_read(h, r));
  ASSERT_EQ(j.size(), 2u) << j.dump();
  EXPECT_EQ(j[0]["field"], "ssd.read_latency");
  EXPECT_EQ(j[0]["value"], "90us");
  EXPECT_EQ(j[0]["assumption"], "a");
  EXPECT_EQ(j[1]["field"], "gpu.kernel_overhead");
  EXPECT_EQ(rests_on_line(j), "rests on assumptions: ssd.read_latency, gpu.kernel_overhead\n");
  EXPECT_EQ(rests_on_line(Json::array()), "");
}

TEST(ProfileReads, AScaledFieldCarriesTheMembersThatFollowIt) {
  const HardwareProfile h = hardware_from_json(profile(), "p.json", true);
  double v = 0;
  const HardwareProfile k = scaled_profile(h, "gpu.kernel_overhead", 2, &v);
  EXPECT_DOUBLE_EQ(v, 20e-6);
  EXPECT_DOUBLE_EQ(k.gpu_kernel_overhead, 20e-6);
  EXPECT_DOUBLE_EQ(k.gpu_expert_overhead, 20e-6);
  EXPECT_DOUBLE_EQ(k.gpu_recover_overhead, 20e-6);
  EXPECT_EQ(k.raw["gpu"]["kernel_overhead"]["assumption"], "k");  // still an assumption, now scaled
  EXPECT_EQ(scaled_profile(h, "ssd.queue_depth", 0.5, &v).ssd_queue_depth, 2u);  // 1.5 rounds to 2
  EXPECT_EQ(scaled_profile(h, "ssd.queue_depth", 0.1, &v).ssd_queue_depth, 1u);  // at least 1
  EXPECT_THROW(scaled_profile(h, "cpu.decompress_bandwidth_per_core", 2, &v), Error);  // not in the profile
  EXPECT_THROW(scaled_profile(h, "ssd.read_speed", 2, &v), Error);
}

}  // namespace
}  // namespace moesim
