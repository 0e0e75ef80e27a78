// load_trace: format detection, the three bundled real traces (numbers from data/traces/SOURCE.md and the
// llama.cpp last-layer shortcut), lookups recounted independently from the raw CSV, --model fitting, and
// the `moesim trace import|info|export` commands end to end.
#include "traces/trace_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_io.h"
#include "base/warnings.h"
#include "core/model_spec.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"
#include "traces/lookup_stream.h"

namespace moesim::traces {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kTraces = test::bundled_data("traces/");

// A folder of this process's own: helpers in other checkouts may run the same tests at the same time.
std::string temp_dir(const std::string& name) {
  return (fs::temp_directory_path() / (name + "_" + std::to_string(getpid()))).string();
}

struct Expected {
  const char* file;
  uint32_t layers, experts, top_k, prefill, decode;
  uint64_t missing;  // the prompt's last layer is computed for its last token only: prompt - 1 cells
};
const Expected kBundled[] = {
    {"qwen3-30b-a3b.route.csv", 48, 128, 6, 28, 128, 27},
    {"gemma-4-26b-a4b.route.csv", 30, 128, 6, 29, 128, 0},
    {"gpt-oss-120b.route.csv", 36, 128, 2, 85, 64, 84},
};

// Lookups recounted from the raw rows with no code shared with the importer: prefill = distinct
// (layer, expert) per layer; decode = distinct experts per (step, layer).
std::pair<uint64_t, uint64_t> raw_lookups(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::map<std::tuple<int, int, int>, std::set<int>> inv;  // (phase, step or -1, layer) -> experts
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == 't') continue;
    std::stringstream ss(line);
    std::string f[9];
    for (auto& x : f) std::getline(ss, x, ',');
    const int phase = std::stoi(f[1]);
    inv[{phase, phase == 0 ? -1 : std::stoi(f[2]), std::stoi(f[3])}].insert(std::stoi(f[5]));
  }
  uint64_t all = 0, decode = 0;
  for (const auto& [k, s] : inv) {
    all += s.size();
    if (std::get<0>(k) == 1) decode += s.size();
  }
  return {all, decode};
}

TEST(TraceIo, DetectsFormats) {
  EXPECT_EQ(detect_format(std::string("MOESIMTR\1\0\0\0", 12)), "mtr");
  EXPECT_EQ(detect_format("# route_trace v1\n# model=x"), "bigmoe");
  EXPECT_EQ(detect_format("\n  {\"token\":0}"), "jsonl");
  EXPECT_EQ(detect_format("token,layer,experts\n"), "csv");
  EXPECT_EQ(detect_format("# some other comment\n"), "csv");
}

TEST(TraceIo, BundledTracesHaveTheirKnownShape) {
  for (const auto& e : kBundled) {
    SCOPED_TRACE(e.file);
    const Trace t = load_trace(kTraces + e.file);
    EXPECT_EQ(t.info().layers, e.layers);
    EXPECT_EQ(t.info().experts, e.experts);
    EXPECT_EQ(t.info().top_k, e.top_k);
    EXPECT_EQ(t.sequence_ids().size(), 1u);
    EXPECT_EQ(t.tokens(Phase::kPrefill), e.prefill);
    EXPECT_EQ(t.tokens(Phase::kDecode), e.decode);
    EXPECT_EQ(t.info().missing_cells, e.missing);
    EXPECT_EQ(t.records(), uint64_t{e.prefill + e.decode} * e.layers - e.missing);
    EXPECT_EQ(t.info().expert_bytes.size(), e.layers);
    const LookupStream ls = build_lookup_stream(t, 1);
    const auto [all, decode] = raw_lookups(kTraces + e.file);
    EXPECT_EQ(ls.lookups(), all);
    EXPECT_EQ(ls.decode_lookups(), decode);
    EXPECT_EQ(decode, uint64_t{e.decode} * e.layers * e.top_k);  // top-k ids are distinct per token
  }
}

TEST(TraceIo, ModelGivesShapeAndSizesAndMustFit) {
  const std::string dir = temp_dir("moesim_trace_io_test");
  fs::create_directories(dir);
  // JSONL without weights, ids small: the model widens it to 48 x 128 and supplies expert bytes.
  write_file_atomic(dir + "/small.jsonl", "{\"token\":0,\"layer\":3,\"experts\":[5,9]}\n");
  LoadOptions lo;
  lo.model = "qwen3-30b-a3b";
  const Trace t = load_trace(dir + "/small.jsonl", lo);
  const ModelSpec m = load_model("qwen3-30b-a3b");
  EXPECT_EQ(t.info().layers, 48u);
  EXPECT_EQ(t.info().experts, 128u);
  EXPECT_EQ(t.info().model, "qwen3-30b-a3b");
  EXPECT_EQ(t.info().expert_bytes, std::vector<uint64_t>(48, m.bytes_per_expert()));
  EXPECT_EQ(t.info().missing_cells, 47u);
  // The same through .mtr (written without a model, fitted on load).
  save_mtr(load_trace(dir + "/small.jsonl"), dir + "/small.mtr");
  const Trace f = load_trace(dir + "/small.mtr", lo);
  EXPECT_EQ(f.info().layers, 48u);
  EXPECT_EQ(f.info().missing_cells, 47u);
  // The route_trace keeps its own (quantized) expert sizes; a model of another shape is refused.
  const Trace q = load_trace(kTraces + "qwen3-30b-a3b.route.csv", lo);
  EXPECT_EQ(q.info().expert_bytes[0], 3059712u);
  lo.model = "deepseek-v2-lite";
  try {
    (void)load_trace(kTraces + "qwen3-30b-a3b.route.csv", lo);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("qwen3-30b-a3b.route.csv:2: field 'n_layer'"));
  }
  write_file_atomic(dir + "/wide.jsonl", "{\"token\":0,\"layer\":60,\"experts\":[5,9]}\n");
  EXPECT_THAT(
      [&] {
        try {
          (void)load_trace(dir + "/wide.jsonl", lo);
        } catch (const Error& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("wide.jsonl:1: field 'layer'"));
  save_mtr(load_trace(dir + "/wide.jsonl"), dir + "/wide.mtr");
  EXPECT_THROW((void)load_trace(dir + "/wide.mtr", lo), Error);
  fs::remove_all(dir);
}

TEST(TraceIo, BadOptionsAndEmptyFiles) {
  const std::string dir = temp_dir("moesim_trace_io_bad");
  fs::create_directories(dir);
  write_file_atomic(dir + "/empty.jsonl", "");
  EXPECT_THAT(
      [&] {
        try {
          (void)load_trace(dir + "/empty.jsonl");
        } catch (const Error& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("empty.jsonl: empty file"));
  LoadOptions lo;
  lo.format = "parquet";
  EXPECT_THROW((void)load_trace(kTraces + "qwen3-30b-a3b.route.csv", lo), Error);
  lo = {};
  lo.fields = "token=pos";
  EXPECT_THROW((void)load_trace(kTraces + "qwen3-30b-a3b.route.csv", lo), Error);  // fixed columns
  EXPECT_THROW((void)load_trace(dir + "/does-not-exist.mtr"), Error);
  fs::remove_all(dir);
}

std::string load_error(const std::string& path, const LoadOptions& lo = {}) {
  try {
    (void)load_trace(path, lo);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a moesim::Error for " << path;
  return "";
}

TEST(TraceIo, DetectsFormatsByContent) {
  const std::string dir = temp_dir("moesim_trace_io_detect");
  fs::create_directories(dir);
  // Random bytes named .mtr: not read as CSV, but named for what they are not.
  std::string junk = "\x13\x9a\xff\x00\x42garbage";
  write_file_atomic(dir + "/junk.mtr", junk);
  EXPECT_EQ(load_error(dir + "/junk.mtr"), dir + "/junk.mtr: not an .mtr file (no MOESIMTR magic at byte 0)");
  // The same bytes under another name: binary data, at the first offending byte.
  write_file_atomic(dir + "/junk.csv", junk);
  EXPECT_EQ(load_error(dir + "/junk.csv"), dir + "/junk.csv: not a text trace (binary data at byte 1)");
  write_file_atomic(dir + "/nul.jsonl", std::string("{\"token\":0}\n\0\0", 14));
  EXPECT_EQ(load_error(dir + "/nul.jsonl"), dir + "/nul.jsonl: not a text trace (binary data at byte 12)");
  // --format mtr on a text file: the .mtr reader's own error at byte 0.
  write_file_atomic(dir + "/t.jsonl", "{\"token\":0,\"layer\":0,\"experts\":[1]}\n");
  LoadOptions lo;
  lo.format = "mtr";
  EXPECT_THAT(load_error(dir + "/t.jsonl", lo), HasSubstr("t.jsonl: at byte 0: magic: not an .mtr file"));
  // A JSONL file named .mtr read as JSONL when asked to.
  lo.format = "jsonl";
  write_file_atomic(dir + "/t.mtr", read_file(dir + "/t.jsonl"));
  EXPECT_EQ(load_trace(dir + "/t.mtr", lo).records(), 1u);
  // A real .mtr under any name is found by its magic.
  save_mtr(load_trace(dir + "/t.jsonl"), dir + "/real.bin");
  EXPECT_EQ(load_trace(dir + "/real.bin").records(), 1u);
  EXPECT_EQ(load_error(dir), dir + ": is a directory, not a file");
  // Import-only options on fixed-column formats are refused, naming the option.
  lo = {};
  lo.skip_warmup = true;
  EXPECT_THAT(load_error(dir + "/real.bin", lo),
              HasSubstr("--skip-warmup applies to JSONL and CSV input only"));
  lo = {};
  lo.token_from = "bogus";
  EXPECT_THROW((void)load_trace(dir + "/t.jsonl", lo), UsageError);
  fs::remove_all(dir);
}

TEST(TraceIo, SeveralFilesAsSeveralSequences) {
  const std::string dir = temp_dir("moesim_trace_io_multi");
  fs::create_directories(dir);
  write_file_atomic(dir + "/a.jsonl",
                    "{\"token\":0,\"layer\":0,\"experts\":[1,2]}\n"
                    "{\"token\":1,\"layer\":0,\"experts\":[3,2]}\n");
  write_file_atomic(dir + "/b.jsonl", "{\"token\":0,\"layer\":1,\"experts\":[4,5]}\n");
  write_file_atomic(dir + "/c.jsonl",
                    "{\"seq\":0,\"token\":0,\"layer\":0,\"experts\":[6,7]}\n"
                    "{\"seq\":2,\"token\":0,\"layer\":0,\"experts\":[8,7]}\n");
  const Trace t = load_traces({dir + "/a.jsonl", dir + "/b.jsonl", dir + "/c.jsonl"});
  // a -> seq 0, b -> seq 1, c's seq ids 0 and 2 -> 2 and 4 (offset = max seq + 1 of the files before).
  EXPECT_EQ(t.sequence_ids(), (std::vector<uint32_t>{0, 1, 2, 4}));
  EXPECT_EQ(t.records(), 5u);
  EXPECT_EQ(t.info().layers, 2u);
  EXPECT_EQ(t.info().experts, 9u);
  EXPECT_EQ(t.info().provenance["format"], "multi-file");
  EXPECT_EQ(t.info().provenance["sources"].size(), 3u);
  EXPECT_EQ(t.experts(4)[0], 8u);
  // One path is load_trace itself.
  EXPECT_EQ(load_traces({dir + "/a.jsonl"}).info().provenance["format"], "jsonl");
  // Files that disagree on top-k or optional columns cannot be one trace.
  write_file_atomic(dir + "/k3.jsonl", "{\"token\":0,\"layer\":0,\"experts\":[1,2,3]}\n");
  try {
    (void)load_traces({dir + "/a.jsonl", dir + "/k3.jsonl"});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("k3.jsonl: field 'experts': top-3, but"));
  }
  write_file_atomic(dir + "/w.jsonl", "{\"token\":0,\"layer\":0,\"experts\":[1,2],\"weights\":[0.5,0.5]}\n");
  EXPECT_THROW((void)load_traces({dir + "/a.jsonl", dir + "/w.jsonl"}), Error);
  EXPECT_THROW((void)load_traces({}), UsageError);
  fs::remove_all(dir);
}

// ---- the three real trace kinds, as small fixtures of their shapes, imported with flags alone ------------

const std::string kFixtures = test::test_data("traces/");

TEST(RealKinds, DeepSeekV2LiteHfHookCsv) {
  // BOM, CRLF, header `Layer ID,Batch Number,Token,Activated Expert IDs`, token text (not a position), quoted
  // Python lists, decoder layer ids 1..26 (layer 0 is dense).
  LoadOptions lo;
  lo.fields = "seq=Batch Number,layer=Layer ID,experts=Activated Expert IDs";
  lo.token_from = "order";
  lo.model = "deepseek-v2-lite";
  EXPECT_THAT(
      load_error(kFixtures + "deepseek_v2_lite_hf.csv", lo),
      HasSubstr("deepseek_v2_lite_hf.csv:52: field 'layer': layer 26 outside the model's 26 MoE layers: "
                "the layer counts disagree (ids start at 1? try --layer-base 1)"));
  lo.layer_base = 1;
  const Trace t = load_trace(kFixtures + "deepseek_v2_lite_hf.csv", lo);
  EXPECT_EQ(t.records(), 78u);
  EXPECT_EQ(t.info().layers, 26u);
  EXPECT_EQ(t.info().experts, 64u);
  EXPECT_EQ(t.info().top_k, 6u);
  EXPECT_EQ(t.info().missing_cells, 0u);
  EXPECT_EQ(t.sequence_ids(), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(t.tokens(Phase::kDecode), 3u);
  const auto e = t.experts(0);  // batch 0, first token, file layer 1
  EXPECT_EQ(std::vector<uint16_t>(e.begin(), e.end()), (std::vector<uint16_t>{8, 26, 56, 60, 2, 9}));
}

TEST(RealKinds, VllmJsonlWithMetaLineAndWarmup) {
  LoadOptions lo;
  lo.where = {"type=route"};
  lo.fields = "experts=topk_ids,weights=topk_weights";
  lo.token_from = "order";
  lo.skip_warmup = true;
  lo.model = "olmoe-1b-7b";
  set_warnings_printed(false);
  const Trace t = load_trace(kFixtures + "olmoe_vllm.jsonl", lo);
  set_warnings_printed(true);
  EXPECT_EQ(t.records(), 48u);  // 3 real tokens x 16 layers; 2 warm-up tokens x 16 layers dropped
  EXPECT_EQ(t.info().layers, 16u);
  EXPECT_EQ(t.info().top_k, 8u);
  EXPECT_EQ(t.info().missing_cells, 0u);
  EXPECT_TRUE(t.has_weights());
  EXPECT_EQ(t.tokens(Phase::kDecode), 3u);
  EXPECT_EQ(t.info().provenance["where_skipped"], 1);
  EXPECT_EQ(t.info().provenance["warmup_dropped"], 32);
  const auto e = t.experts(0);  // the first real token at layer 0
  EXPECT_EQ(std::vector<uint16_t>(e.begin(), e.end()), (std::vector<uint16_t>{41, 7, 63, 12, 30, 5, 18, 50}));
  // Without --where the meta line is an error naming it; without --skip-warmup the dummy tokens stay in.
  lo.where.clear();
  EXPECT_THAT(
      load_error(kFixtures + "olmoe_vllm.jsonl", lo),
      HasSubstr(
          "olmoe_vllm.jsonl:1: fields 'layer', 'experts': missing (no key named 'layer', 'topk_ids' in the "
          "record, which has: engine, model, num_experts, num_layers, top_k, type); map them with "
          "--fields layer=NAME,experts=NAME (not a routing record? keep only records with --where "
          "KEY=VALUE)"));
  lo.where = {"type=route"};
  lo.skip_warmup = false;
  set_warnings_printed(false);
  EXPECT_EQ(load_trace(kFixtures + "olmoe_vllm.jsonl", lo).records(), 80u);
  set_warnings_printed(true);
  clear_warnings();
}

TEST(RealKinds, MixtralProblemJsonl) {
  LoadOptions lo;
  lo.fields = "seq=problem_id,token=token_idx,weights=gating_probs";
  lo.model = "mixtral-8x7b";
  const Trace t = load_trace(kFixtures + "mixtral_problems.jsonl", lo);
  EXPECT_EQ(t.records(), 96u);
  EXPECT_EQ(t.info().layers, 32u);
  EXPECT_EQ(t.info().experts, 8u);
  EXPECT_EQ(t.info().top_k, 2u);
  EXPECT_EQ(t.sequence_ids(), (std::vector<uint32_t>{3, 7}));
  EXPECT_EQ(t.tokens(Phase::kDecode), 3u);
  EXPECT_EQ(t.info().missing_cells, 0u);
  const size_t last = t.records() - 1;  // problem 7, token 0, layer 31
  EXPECT_EQ(t.seq(last), 7u);
  EXPECT_EQ(t.layer(last), 31u);
  EXPECT_EQ(t.experts(last)[0], 6u);
  EXPECT_EQ(t.experts(last)[1], 1u);
  EXPECT_NEAR(t.weights(last)[0] + t.weights(last)[1], 1.0f, 1e-3f);
}

// ---- CLI end to end
// ----------------------------------------------------------------------------------------

std::pair<int, std::string> run(const std::string& args) {
  const auto r = moesim::test::moesim_combined(args);
  return {r.status, r.out};
}

TEST(TraceCli, InfoJsonOnEveryBundledTrace) {
  for (const auto& e : kBundled) {
    SCOPED_TRACE(e.file);
    auto [rc, out] = run("trace info " + kTraces + e.file + " --json");
    ASSERT_EQ(rc, 0) << out;
    const Json j = Json::parse(out);
    EXPECT_TRUE(j.contains("header"));
    EXPECT_EQ(j["layers"], e.layers);
    EXPECT_EQ(j["experts"], e.experts);
    EXPECT_EQ(j["top_k"], e.top_k);
    EXPECT_EQ(j["sequences"], 1);
    EXPECT_EQ(j["prefill_tokens"], e.prefill);
    EXPECT_EQ(j["decode_tokens"], e.decode);
    EXPECT_EQ(j["missing_cells"], e.missing);
    EXPECT_EQ(j["lookups"], raw_lookups(kTraces + e.file).first);
  }
}

TEST(TraceCli, ImportExportRoundTripAndFailuresLeaveNoOutput) {
  const std::string dir = temp_dir("moesim_trace_cli_test");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string fixture = test::test_data("traces/custom_keys.jsonl");
  const std::string fields = "seq=req,phase=stage,token=pos,layer=moe_layer,experts=topk,weights=probs";
  auto [rc, out] = run("trace import " + fixture + " --fields " + fields + " -o " + dir + "/c.mtr");
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) = run("trace export " + dir + "/c.mtr --fields " + fields + " -o " + dir + "/c.jsonl");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(read_file(dir + "/c.jsonl"), read_file(fixture));
  std::tie(rc, out) = run("trace info " + dir + "/c.mtr");
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(out, HasSubstr("sequences:        2"));
  // A bad input: error naming file, line and field; exit 1; no output file.
  write_file_atomic(
      dir + "/bad.jsonl",
      "{\"token\":0,\"layer\":0,\"experts\":[1,2]}\n{\"token\":1,\"layer\":0,\"experts\":[1,1]}\n");
  std::tie(rc, out) = run("trace import " + dir + "/bad.jsonl -o " + dir + "/bad.mtr");
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("bad.jsonl:2: field 'experts'"));
  EXPECT_FALSE(fs::exists(dir + "/bad.mtr"));
  std::tie(rc, out) = run("trace import " + fixture + " --fields bogus=x -o " + dir + "/x.mtr");
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("known fields: seq, token"));
  std::vector<std::string> left;
  for (const auto& f : fs::directory_iterator(dir)) left.push_back(f.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"bad.jsonl", "c.jsonl", "c.mtr"}));  // no temp files either
  fs::remove_all(dir);
}

}  // namespace
}  // namespace moesim::traces
