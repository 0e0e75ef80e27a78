#include "core/op_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
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
  // Successors are in no particular order: compared sorted.
  auto succs = [&](uint32_t i) {
    std::vector<uint32_t> v(g.succs(i).begin(), g.succs(i).end());
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(g.size(), 4u);
  EXPECT_EQ(std::vector<uint32_t>(g.deps(d).begin(), g.deps(d).end()), (std::vector<uint32_t>{a, b}));
  EXPECT_EQ(g.dep_count(d), 2u);
  EXPECT_EQ(g.dep_count(a), 0u);
  EXPECT_EQ(succs(a), (std::vector<uint32_t>{d, e}));
  EXPECT_EQ(succs(b), (std::vector<uint32_t>{d}));
  EXPECT_TRUE(g.succs(d).empty());
  // An op added later links into the lists at once (no finalize pass).
  const uint32_t f = g.add(c, {d, b});
  EXPECT_EQ(succs(b), (std::vector<uint32_t>{d, f}));
  EXPECT_EQ(succs(d), (std::vector<uint32_t>{f}));
  g.clear();
  EXPECT_EQ(g.size(), 0u);
  g.add(read);
  EXPECT_TRUE(g.deps(0).empty());
  EXPECT_TRUE(g.succs(0).empty());
}

// append() of a fragment is the graph of adding its ops one by one, its op 0 replaced by the roots: with two
// roots, one (the block copy: successor lists in the same order, the root's old successors after the
// fragment's), none, and a fragment whose ops depend on each other, on the roots, and on both.
TEST(OpGraph, AppendIsAddingTheFragmentsOpsOneByOne) {
  OpGraph part;
  Op placeholder;
  const uint32_t root = part.add(placeholder);
  Op read;
  read.kind = OpKind::kSsdRead;
  read.bytes = 7;
  const uint32_t r = part.add(read, {root});
  Op xfer;
  xfer.kind = OpKind::kTransfer;
  xfer.bytes = 9;
  const uint32_t x = part.add(xfer, {r});
  Op join;
  join.kind = OpKind::kRecover;
  part.add(join, {x, root, r});
  for (const std::vector<uint32_t>& roots : {std::vector<uint32_t>{0, 1}, std::vector<uint32_t>{1},
                                             std::vector<uint32_t>{0}, std::vector<uint32_t>{}}) {
    OpGraph by_append, by_add;
    for (OpGraph* g : {&by_append, &by_add}) {
      g->add(read);
      g->add(read, {0});
    }
    const uint32_t first = by_append.append(part, roots);
    EXPECT_EQ(first, 2u);
    // By hand: op i of `part` is op first + i - 1, a dependency on op 0 is the roots.
    const uint32_t r2 = by_add.add(read, roots);
    const uint32_t x2 = by_add.add(xfer, {r2});
    std::vector<uint32_t> deps{x2};
    deps.insert(deps.end(), roots.begin(), roots.end());
    deps.push_back(r2);
    by_add.add(join, deps);
    ASSERT_EQ(by_append.size(), by_add.size());
    for (uint32_t i = 0; i < by_add.size(); ++i) {
      EXPECT_EQ(by_append.op(i).kind, by_add.op(i).kind) << i;
      EXPECT_EQ(by_append.op(i).bytes, by_add.op(i).bytes) << i;
      EXPECT_EQ(std::vector<uint32_t>(by_append.deps(i).begin(), by_append.deps(i).end()),
                std::vector<uint32_t>(by_add.deps(i).begin(), by_add.deps(i).end()))
          << i;
      EXPECT_EQ(std::vector<uint32_t>(by_append.succs(i).begin(), by_append.succs(i).end()),
                std::vector<uint32_t>(by_add.succs(i).begin(), by_add.succs(i).end()))
          << i;
    }
  }
  // A fragment of its placeholder alone appends nothing.
  OpGraph empty_part, g;
  empty_part.add(placeholder);
  EXPECT_EQ(g.append(empty_part, {}), 0u);
  EXPECT_EQ(g.size(), 0u);
}

// append() with an expert label: the graph append() without one makes, every appended op carrying the label
// and its other fields as in the fragment; the ops before the call keep theirs.
TEST(OpGraph, AppendWithALabelLabelsEveryAppendedOp) {
  OpGraph part;
  const uint32_t root = part.add(Op{});
  Op read;
  read.kind = OpKind::kSsdRead;
  read.layer = 3;
  read.expert = kNoLabel;
  read.tensor = 1;
  read.bytes = 7;
  const uint32_t r = part.add(read, {root});
  Op compute;
  compute.kind = OpKind::kExpertCompute;
  compute.expert = kNoLabel;
  compute.tokens = 4;
  part.add(compute, {r, root});
  for (const std::vector<uint32_t>& roots : {std::vector<uint32_t>{0}, std::vector<uint32_t>{0, 1}}) {
    OpGraph labelled, plain;
    for (OpGraph* g : {&labelled, &plain}) {
      Op dense;
      dense.expert = 9;
      g->add(dense);
      g->add(dense, {0});
    }
    EXPECT_EQ(labelled.append(part, roots, 5), 2u);
    EXPECT_EQ(plain.append(part, roots), 2u);
    ASSERT_EQ(labelled.size(), 4u);
    ASSERT_EQ(plain.size(), 4u);
    for (uint32_t i = 0; i < 4; ++i) {
      EXPECT_EQ(labelled.op(i).expert, i < 2 ? 9 : 5) << i;
      EXPECT_EQ(plain.op(i).expert, i < 2 ? 9 : kNoLabel) << i;
      EXPECT_EQ(labelled.op(i).kind, plain.op(i).kind) << i;
      EXPECT_EQ(labelled.op(i).layer, plain.op(i).layer) << i;
      EXPECT_EQ(labelled.op(i).tensor, plain.op(i).tensor) << i;
      EXPECT_EQ(labelled.op(i).bytes, plain.op(i).bytes) << i;
      EXPECT_EQ(labelled.op(i).tokens, plain.op(i).tokens) << i;
      EXPECT_EQ(std::vector<uint32_t>(labelled.deps(i).begin(), labelled.deps(i).end()),
                std::vector<uint32_t>(plain.deps(i).begin(), plain.deps(i).end()))
          << i;
      EXPECT_EQ(std::vector<uint32_t>(labelled.succs(i).begin(), labelled.succs(i).end()),
                std::vector<uint32_t>(plain.succs(i).begin(), plain.succs(i).end()))
          << i;
    }
  }
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
