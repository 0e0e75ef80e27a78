#include "core/op_graph.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace moesim {
namespace {

TEST(OpGraph, DepsAndSuccessors) {
  OpGraph g;
  Op read;
  read.kind = OpKind::kSsdRead;
  const uint32_t a = g.add(read);
  const uint32_t b = g.add(read);
  Op c;
  c.kind = OpKind::kExpertCompute;
  const uint32_t d = g.add(c, {a, b});
  const uint32_t e = g.add(c, {a});
  g.finalize();
  EXPECT_EQ(g.size(), 4u);
  EXPECT_EQ(std::vector<uint32_t>(g.deps(d).begin(), g.deps(d).end()), (std::vector<uint32_t>{a, b}));
  EXPECT_EQ(std::vector<uint32_t>(g.succs(a).begin(), g.succs(a).end()), (std::vector<uint32_t>{d, e}));
  EXPECT_EQ(std::vector<uint32_t>(g.succs(b).begin(), g.succs(b).end()), (std::vector<uint32_t>{d}));
  EXPECT_TRUE(g.succs(d).empty());
  g.clear();
  EXPECT_EQ(g.size(), 0u);
  g.add(read);
  g.finalize();
  EXPECT_TRUE(g.deps(0).empty());
}

TEST(OpGraph, ResourceOfEachKind) {
  EXPECT_EQ(default_resource(OpKind::kSsdRead), ResourceClass::kSsd);
  EXPECT_EQ(default_resource(OpKind::kDecompress), ResourceClass::kCpu);
  EXPECT_EQ(default_resource(OpKind::kRecover), ResourceClass::kGpu);
  EXPECT_EQ(default_resource(OpKind::kTransfer), ResourceClass::kLink);
  EXPECT_EQ(default_resource(OpKind::kExpertCompute), ResourceClass::kGpu);
  EXPECT_STREQ(op_kind_name(OpKind::kDecompress), "decompress");
}

TEST(OpGraph, ResourceVocabularySpellsEachClassAndPoolOnce) {
  // The outputs' spellings (docs/cli-json.md, the Chrome trace's processes): an op's class, the platform's
  // pool of its units.
  EXPECT_STREQ(resource_class_name(ResourceClass::kCpu), "cpu");
  EXPECT_STREQ(resource_pool_name(ResourceClass::kCpu), "cpu_workers");
  EXPECT_STREQ(resource_names(ResourceClass::kCpu).label, "CPU workers");
  EXPECT_STREQ(resource_class_name(ResourceClass::kSsd), "ssd");
  EXPECT_STREQ(resource_pool_name(ResourceClass::kGpu), "gpu");
  EXPECT_STREQ(resource_pool_name(ResourceClass::kLink), "link");
  std::set<std::string> classes, pools{kIoThreadPool};
  for (const ResourceNames& r : kResourceNames) {
    EXPECT_TRUE(classes.insert(r.name).second) << r.name;
    EXPECT_TRUE(pools.insert(r.pool).second) << r.pool;
  }
}

}  // namespace
}  // namespace moesim
