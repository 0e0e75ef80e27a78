// `moesim buddy profile` and `moesim trace synth --logits-for` end to end (the built binary): output shape
// and values on the tiny trace worked out by hand, and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;

const std::string kTiny = test::test_data("traces/tiny.route.csv");

Json read_json(const std::string& path) {
  return parse_json_text(read_text(path), path);
}

// The tiny trace (tests/data/traces/tiny.route.csv, 2 layers x 4 experts, top-2, with weights):
//   layer 0 tokens: {1: .6, 3: .4}, {2: .7, 1: .3}, {1: .9, 0: .1}, {3: .55, 2: .45}
//   layer 1 tokens: {0: .5, 3: .5}, {2: .8, 3: .2}, {0: .6, 1: .4}
TEST(BuddyProfileCli, ShapeAndValuesOnTheTinyTrace) {
  const std::string out = temp_path("buddies.json");
  const CliResult r = moesim_cli("buddy profile " + kTiny + " -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("wrote buddy profile " + out + ": 2 layers x 4 experts, 8 buddy lists"));
  const Json j = read_json(out);
  EXPECT_EQ(j["format"], "moesim buddy profile v1");
  EXPECT_EQ(j["source"], kTiny);
  EXPECT_EQ(j["layers"], 2);
  EXPECT_EQ(j["experts"], 4);
  EXPECT_EQ(j["top_k"], 2);
  EXPECT_EQ(j["alpha"], 0.9);
  EXPECT_EQ(j["k_max"], 8);
  EXPECT_EQ(j["epsilon"], 0.001);
  EXPECT_EQ(j["weighting"], "binary");
  ASSERT_EQ(j["per_layer"].size(), 2u);
  for (const auto& l : j["per_layer"]) {
    for (const char* key : {"activations", "buddies", "buddy_q", "tae_percentiles", "coactivations"})
      EXPECT_TRUE(l.contains(key)) << key;
    ASSERT_EQ(l["tae_percentiles"].size(), 101u);
    EXPECT_TRUE(std::is_sorted(l["tae_percentiles"].begin(), l["tae_percentiles"].end()));
    for (size_t e = 0; e < 4; ++e) {
      EXPECT_EQ(l["buddies"][e].size(), l["buddy_q"][e].size());
      for (const auto& b : l["buddies"][e]) EXPECT_NE(b.get<size_t>(), e) << "an expert is not its own buddy";
    }
  }
  const Json& l0 = j["per_layer"][0];
  EXPECT_EQ(l0["activations"], Json::parse("[1, 3, 2, 2]"));
  // Co-activations [i, j, binary, probability-weighted = min of the two renormalised weights], i < j.
  const std::vector<std::array<double, 4>> co = {
      {0, 1, 1, 0.1}, {1, 2, 1, 0.3}, {1, 3, 1, 0.4}, {2, 3, 1, 0.45}};
  ASSERT_EQ(l0["coactivations"].size(), co.size()) << l0["coactivations"].dump();
  for (size_t i = 0; i < co.size(); ++i)
    for (size_t k = 0; k < 4; ++k) EXPECT_NEAR(l0["coactivations"][i][k].get<double>(), co[i][k], 1e-6) << i;
  // q_{j|1}: expert 1 met 0, 2 and 3 once each -> 1/3 each (epsilon cancels); alpha 0.9 needs all three,
  // ties in id order. Expert 0 met only 1: q_{1|0} = (1 + eps) / (1 + 3 eps).
  EXPECT_EQ(l0["buddies"][1], Json::parse("[0, 2, 3]"));
  for (const auto& q : l0["buddy_q"][1]) EXPECT_NEAR(q.get<double>(), 1.0 / 3, 1e-12);
  EXPECT_EQ(l0["buddies"][0], Json::parse("[1]"));
  EXPECT_NEAR(l0["buddy_q"][0][0].get<double>(), 1.001 / 1.003, 1e-12);
  // TAE = binary entropy of the token's two weights: min at {.9, .1}, max at {.55, .45}.
  auto h2 = [](double p) { return -(p * std::log(p) + (1 - p) * std::log(1 - p)) / std::log(2.0); };
  EXPECT_NEAR(l0["tae_percentiles"][0].get<double>(), h2(0.9), 1e-6);
  EXPECT_NEAR(l0["tae_percentiles"][100].get<double>(), h2(0.55), 1e-6);
  EXPECT_EQ(j["per_layer"][1]["activations"], Json::parse("[2, 1, 1, 2]"));

  // Probability-weighted: q_{j|1} = (0.1, 0.3, 0.4) / 0.8 for j = 0, 2, 3 -> by q: 3, 2 (0.875), then 0.
  const CliResult p = moesim_cli("buddy profile " + kTiny + " -o " + out + " --weighting probability");
  ASSERT_EQ(p.code, 0) << p.err;
  const Json jp = read_json(out);
  EXPECT_EQ(jp["weighting"], "probability");
  EXPECT_EQ(jp["per_layer"][0]["buddies"][1], Json::parse("[3, 2, 0]"));
  EXPECT_NEAR(jp["per_layer"][0]["buddy_q"][1][0].get<double>(), 0.4 / 0.8, 1e-3);
  ASSERT_EQ(moesim_cli("buddy profile " + kTiny + " -o " + out + " --weighting probability --alpha 0.8").code,
            0);
  EXPECT_EQ(read_json(out)["per_layer"][0]["buddies"][1], Json::parse("[3, 2]"));
  ASSERT_EQ(moesim_cli("buddy profile " + kTiny + " -o " + out + " --weighting probability --k-max 1").code,
            0);
  EXPECT_EQ(read_json(out)["per_layer"][0]["buddies"][1], Json::parse("[3]"));
  // The runtime reads it back.
  const CliResult rt =
      moesim_cli("replay " + kTiny + " --policy lru --budget 2 --routing buddy:profile=" + out);
  EXPECT_EQ(rt.code, 0) << rt.err;
  std::filesystem::remove(out);
}

TEST(BuddyProfileCli, BadInputIsAClearError) {
  const std::string out = temp_path("bad_buddies.json");
  struct Case {
    std::string args;
    int code;
    std::string message;
  } cases[] = {
      {kTiny + " --weighting foo", 2, "--weighting: 'foo' is not binary or probability"},
      {kTiny + " --alpha 0", 2, "--alpha must be in (0, 1]"},
      {kTiny + " --alpha 1.5", 2, "--alpha must be in (0, 1]"},
      {kTiny + " --k-max 0", 2, "--k-max must be at least 1"},
      {kTiny + " --epsilon -1", 2, "--epsilon must be a finite number >= 0"},
      {"/nonexistent/trace.csv", 1, "/nonexistent/trace.csv: cannot open"},
      {"", 2, ""},
  };
  for (const auto& c : cases) {
    const CliResult r = moesim_cli("buddy profile " + c.args + " -o " + out);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("moesim: error: " + c.message)) << c.args;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.args;
  }
  const CliResult dir = moesim_cli("buddy profile " + kTiny + " -o /nonexistent/dir/b.json");
  EXPECT_NE(dir.code, 0);
  EXPECT_THAT(dir.err, HasSubstr("/nonexistent/dir/b.json: cannot write"));
}

// One JSONL line of `trace export` per record.
std::vector<Json> records_of(const std::string& trace) {
  const CliResult r = moesim_cli("trace export " + trace + " -o -");
  EXPECT_EQ(r.code, 0) << r.err;
  std::vector<Json> v;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) v.push_back(Json::parse(line));
  return v;
}

// The logits' top-k is the recorded selection in the recorded order, every other expert below it, and (with
// weights) the softmax over the selection gives back the recorded renormalised weights.
void expect_consistent(const std::vector<Json>& real, const std::vector<Json>& synth, bool weights) {
  ASSERT_EQ(real.size(), synth.size());
  for (size_t i = 0; i < real.size(); ++i) {
    SCOPED_TRACE(synth[i].dump());
    EXPECT_EQ(synth[i]["experts"], real[i]["experts"]);
    EXPECT_EQ(synth[i]["seq"], real[i]["seq"]);
    EXPECT_EQ(synth[i]["token"], real[i]["token"]);
    EXPECT_EQ(synth[i]["layer"], real[i]["layer"]);
    const auto ids = synth[i]["experts"].get<std::vector<size_t>>();
    const auto z = synth[i]["logits"].get<std::vector<double>>();
    ASSERT_EQ(z.size(), 4u);
    for (size_t r = 0; r + 1 < ids.size(); ++r) EXPECT_GE(z[ids[r]], z[ids[r + 1]]);
    const double lowest_selected = z[ids.back()];
    for (size_t e = 0; e < z.size(); ++e)
      if (std::find(ids.begin(), ids.end(), e) == ids.end()) {
        EXPECT_LT(z[e], lowest_selected) << e;
      }
    if (!weights) continue;
    EXPECT_EQ(synth[i]["weights"], real[i]["weights"]);
    const auto w = real[i]["weights"].get<std::vector<double>>();
    double zs = 0, ws = 0;
    for (size_t r = 0; r < ids.size(); ++r) {
      zs += std::exp(z[ids[r]]);
      ws += w[r];
    }
    for (size_t r = 0; r < ids.size(); ++r) EXPECT_NEAR(std::exp(z[ids[r]]) / zs, w[r] / ws, 1e-5);
  }
}

TEST(TraceSynthLogitsForCli, LogitsAgreeWithTheRecordedRoutingAndAreLabelledSynthetic) {
  const std::string out = temp_path("tiny_logits.mtr"), again = temp_path("tiny_logits2.mtr"),
                    other = temp_path("tiny_logits3.mtr");
  const CliResult r = moesim_cli("trace synth --logits-for " + kTiny + " --seed 5 -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("the REAL routing of " + kTiny +
                               " with SYNTHETIC logits (seed 5), labelled synthetic"));
  expect_consistent(records_of(kTiny), records_of(out), true);
  // Labelled synthetic in the trace and in every result computed from it.
  const CliResult info = moesim_cli("trace info " + out + " --json");
  ASSERT_EQ(info.code, 0) << info.err;
  const Json ij = parse_json_text(info.out, "trace info");
  EXPECT_EQ(ij["synthetic"], true);
  EXPECT_EQ(ij["provenance"]["synthetic_part"], "logits");
  EXPECT_EQ(ij["provenance"]["generator"], "logits-for");
  EXPECT_EQ(ij["provenance"]["routing_source"], kTiny);
  EXPECT_EQ(ij["provenance"]["seed"], 5);
  EXPECT_EQ(ij["optional_columns"], Json::parse(R"(["weights", "logits"])"));
  const CliResult rep =
      moesim_cli("replay " + out + " --policy lru --budget 2 --routing cache-prior:lambda=0.5");
  ASSERT_EQ(rep.code, 0) << rep.err;
  EXPECT_THAT(rep.out, HasSubstr("(SYNTHETIC)"));
  // Cache-Prior needs the logits: the real trace alone is refused.
  const CliResult refused =
      moesim_cli("replay " + kTiny + " --policy lru --budget 2 --routing cache-prior:lambda=0.5");
  EXPECT_NE(refused.code, 0);
  EXPECT_THAT(refused.err, HasSubstr("--logits-for"));
  // Deterministic per seed.
  ASSERT_EQ(moesim_cli("trace synth --logits-for " + kTiny + " --seed 5 -o " + again).code, 0);
  EXPECT_EQ(read_text(out), read_text(again));
  ASSERT_EQ(moesim_cli("trace synth --logits-for " + kTiny + " --seed 6 -o " + other).code, 0);
  EXPECT_NE(records_of(out), records_of(other));
  for (const auto& f : {out, again, other}) std::filesystem::remove(f);
}

TEST(TraceSynthLogitsForCli, WithoutWeightsTheRankOrderIsKeptAndWeightsAreDerived) {
  const std::string in = temp_path("noweights.jsonl"), out = temp_path("noweights.mtr");
  {
    std::ofstream f(in);
    f << R"({"seq":0,"phase":"decode","token":0,"layer":0,"experts":[2,0]})"
      << "\n"
      << R"({"seq":0,"phase":"decode","token":0,"layer":1,"experts":[1,3]})"
      << "\n"
      << R"({"seq":0,"phase":"decode","token":1,"layer":0,"experts":[0,3]})"
      << "\n"
      << R"({"seq":0,"phase":"decode","token":1,"layer":1,"experts":[3,1]})"
      << "\n";
  }
  const CliResult r = moesim_cli("trace synth --logits-for " + in + " --seed 1 -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<Json> synth = records_of(out);
  expect_consistent(records_of(in), synth, false);
  // The weights the trace lacked are derived from the synthetic logits, and say so.
  for (const Json& rec : synth) {
    const auto ids = rec["experts"].get<std::vector<size_t>>();
    const auto z = rec["logits"].get<std::vector<double>>();
    const auto w = rec["weights"].get<std::vector<double>>();
    const double zs = std::exp(z[ids[0]]) + std::exp(z[ids[1]]);
    for (size_t k = 0; k < 2; ++k) EXPECT_NEAR(w[k], std::exp(z[ids[k]]) / zs, 1e-5) << rec.dump();
  }
  const CliResult info = moesim_cli("trace info " + out + " --json");
  EXPECT_EQ(parse_json_text(info.out, "trace info")["provenance"]["weights"],
            "softmax of the synthetic logits over the top-k");
  std::filesystem::remove(in);
  std::filesystem::remove(out);
}

TEST(TraceSynthLogitsForCli, BadInputIsAClearError) {
  const std::string out = temp_path("bad_logits.mtr");
  const std::string with_logits = test::test_data("traces/tiny_logits.jsonl");
  struct Case {
    std::string args;
    int code;
    std::string message;
  } cases[] = {
      {"--logits-for " + kTiny, 2, "--seed is required"},
      {"--logits-for " + kTiny + " --seed 1 --zipf 1", 2, "--logits-for keeps the real trace's routing"},
      {"--logits-for " + kTiny + " --seed 1 --tokens 5", 2, "--logits-for keeps the real trace's routing"},
      {"--logits-for " + kTiny + " --seed 1 --fit " + kTiny, 2,
       "--logits-for keeps the real trace's routing"},
      {"--logits-for /nonexistent/trace.csv --seed 1", 1, "/nonexistent/trace.csv: cannot open"},
      {"--logits-for " + with_logits + " --seed 1", 1, with_logits + ": the trace already has router logits"},
  };
  for (const auto& c : cases) {
    const CliResult r = moesim_cli("trace synth " + c.args + " -o " + out);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("moesim: error: " + c.message)) << c.args;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.args;
  }
}

}  // namespace
}  // namespace moesim::test
