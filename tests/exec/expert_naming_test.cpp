#include "exec/expert_naming.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "tests/exec/exec_test_util.h"
#include "tests/fixtures.h"

namespace moesim::exec {
namespace {

using testing::TempDir;

TEST(ExpertNaming, RecognisesTheThreeLayouts) {
  auto q = parse_expert_name("model.layers.12.mlp.experts.59.down_proj.weight");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->layout, "hf-mlp-experts");
  EXPECT_EQ(q->layer, 12u);
  EXPECT_EQ(q->expert, 59u);
  EXPECT_EQ(q->role, "down_proj");
  EXPECT_EQ(q->role_rank, 2);
  auto m = parse_expert_name("model.layers.3.block_sparse_moe.experts.7.w3.weight");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->layout, "mixtral");
  EXPECT_EQ(m->role_rank, 1);  // w1 (gate), w3 (up), w2 (down)
  auto s = parse_expert_name("decoder.block.5.layer.2.mlp.experts.expert_127.wo.weight");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->layout, "switch");
  EXPECT_EQ(s->stack, "decoder");
  EXPECT_EQ(s->layer, 5u);
  EXPECT_EQ(s->expert, 127u);
  for (const char* not_expert :
       {"model.layers.0.mlp.shared_expert.gate_proj.weight",
        "model.layers.0.mlp.shared_experts.gate_proj.weight", "model.layers.0.mlp.gate.weight",
        "model.layers.0.mlp.experts.1.gate_proj.bias", "model.layers.0.mlp.experts.gate_up_proj",
        "model.layers.0.self_attn.q_proj.weight", "model.layers.x.mlp.experts.1.up_proj.weight",
        "model.layers.0.block_sparse_moe.experts.0.w4.weight"})
    EXPECT_FALSE(parse_expert_name(not_expert)) << not_expert;
}

TEST(ExpertNaming, SelectionOrdersLayersExpertsAndRoles) {
  TempDir dir("naming");
  const std::string p = dir.file("m.safetensors");
  // Switch-style: MoE every other block, encoder and decoder; listed in a scrambled order.
  std::vector<SafetensorsEntry> e;
  for (const char* stack : {"decoder", "encoder"})
    for (int b : {3, 1})
      for (int x : {1, 0})
        for (const char* r : {"wo", "wi"})
          e.push_back({std::string(stack) + ".block." + std::to_string(b) + ".layer.1.mlp.experts.expert_" +
                           std::to_string(x) + "." + r + ".weight",
                       DType::BF16,
                       {2}});
  e.push_back({"encoder.block.0.layer.0.SelfAttention.q.weight", DType::BF16, {2}});
  {
    SafetensorsWriter w(p, e, Json::object());
    std::vector<uint8_t> zeros(4 * e.size(), 0);
    w.write(zeros.data(), zeros.size());
    w.commit();
  }
  const WeightSource ws = WeightSource::open(p);
  const ExpertSelection sel = select_experts(ws, false);
  EXPECT_EQ(sel.layout, "switch");
  EXPECT_EQ(sel.layers, 4u);
  ASSERT_EQ(sel.tensors.size(), 16u);
  // encoder block 1 -> layer 0, encoder 3 -> 1, decoder 1 -> 2, decoder 3 -> 3; experts ascending; wi, wo.
  EXPECT_EQ(sel.tensors[0].source->name, "encoder.block.1.layer.1.mlp.experts.expert_0.wi.weight");
  EXPECT_EQ(sel.tensors[1].role, "wo");
  EXPECT_EQ(sel.tensors[2].expert, 1u);
  EXPECT_EQ(sel.tensors[4].layer, 1u);
  EXPECT_EQ(sel.tensors[8].source->name, "decoder.block.1.layer.1.mlp.experts.expert_0.wi.weight");
  EXPECT_EQ(sel.tensors[8].layer, 2u);
  EXPECT_EQ(sel.tensors[15].layer, 3u);

  const ExpertSelection all = select_experts(ws, true);
  EXPECT_EQ(all.layout, "all-tensors");
  ASSERT_EQ(all.tensors.size(), 17u);
  EXPECT_EQ(all.tensors[16].expert, 16u);
  EXPECT_EQ(all.tensors[16].role, "encoder.block.0.layer.0.SelfAttention.q.weight");
}

TEST(ExpertNaming, NoExpertsIsAnErrorSuggestingAllTensors) {
  const WeightSource ws = WeightSource::open(test::test_data("weights/faceres-subset.safetensors"));
  try {
    select_experts(ws, false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("--all-tensors"));
  }
  EXPECT_EQ(select_experts(ws, true).tensors.size(), 8u);
}

}  // namespace
}  // namespace moesim::exec
