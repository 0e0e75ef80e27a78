// Every JSON input of the CLI (hardware profile, model, sweep spec, sweep manifest, buddy profile) is checked
// against its schema: a number beyond a double (1e400), a top-level array, an unknown field and a hardware
// field without provenance are errors (exit 1 or 2) that name the file and the JSON path, never an internal
// error (exit 70).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/json_io.h"
#include "core/data_dir.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;

const std::string kQwen = test::bundled_data("traces/qwen3-30b-a3b.route.csv");
const std::string kTiny = test::test_data("traces/tiny.route.csv");
const std::string kRun = "run " + kQwen + " --system offload --budget 1GiB";

std::string write(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

std::string preset_text(const char* kind, const char* name) {
  return read_text(resolve_preset(kind, name));
}

// The first `"value": 32` (a profile's queue depth) or other marker replaced by 1e400.
std::string with_huge_number(std::string text, const std::string& marker, const std::string& replacement) {
  const size_t at = text.find(marker);
  EXPECT_NE(at, std::string::npos) << marker;
  if (at != std::string::npos) text.replace(at, marker.size(), replacement);
  return text;
}

void expect_input_error(const CliResult& r, const std::string& file, const std::string& what) {
  EXPECT_TRUE(r.code == 1 || r.code == 2) << "exit " << r.code << ": " << r.err;
  EXPECT_THAT(r.err, HasSubstr(file)) << r.err;
  EXPECT_THAT(r.err, HasSubstr(what)) << r.err;
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("internal error")));
}

TEST(JsonInputs, ANumberBeyondADoubleNamesTheFileInEveryKind) {
  const std::string hw = write(
      "huge-hw.json",
      with_huge_number(preset_text("hardware", "jetson-agx-orin-64gb"), "\"value\": 32", "\"value\": 1e400"));
  expect_input_error(moesim_cli(kRun + " --model qwen3-30b-a3b --hw " + hw), hw + ":",
                     "1e400 is out of range");
  const std::string model = write("huge-model.json", with_huge_number(preset_text("models", "qwen3-30b-a3b"),
                                                                      "\"value\": 48", "\"value\": 1e400"));
  expect_input_error(moesim_cli(kRun + " --model " + model), model + ":", "1e400 is out of range");
  const std::string spec = write("huge-spec.json", R"({"grid": {"trace": ["q.mtr"], "budget": [1e400]}})");
  expect_input_error(moesim_cli("-q sweep " + spec + " -o " + temp_path("huge-sweep")),
                     spec + ":1:", "1e400 is out of range");
  // A sweep folder whose manifest holds such a number.
  const std::string dir = temp_path("huge-manifest");
  std::filesystem::create_directories(dir + "/points");
  write("huge-manifest/manifest.json", R"({"spec_hash": "0", "spec": {}, "points_total": 1e400})");
  expect_input_error(moesim_cli("-q merge " + dir + " -o " + temp_path("huge-merged")),
                     dir + "/manifest.json:1:", "1e400 is out of range");
  const std::string buddy =
      write("huge-buddy.json", R"({"format": "moesim buddy profile v1", "layers": 1e400})");
  expect_input_error(
      moesim_cli("-q replay " + kTiny + " --policy lru --budget 2 --routing buddy:profile=" + buddy),
      buddy + ":1:", "1e400 is out of range");
}

TEST(JsonInputs, ATopLevelArrayIsAnErrorNamingTheFile) {
  const std::string hw = write("array-hw.json", "[" + preset_text("hardware", "jetson-agx-orin-64gb") + "]");
  expect_input_error(moesim_cli(kRun + " --model qwen3-30b-a3b --hw " + hw), hw,
                     "expected an object (a hardware profile");
  const std::string model = write("array-model.json", "[" + preset_text("models", "qwen3-30b-a3b") + "]");
  expect_input_error(moesim_cli(kRun + " --model " + model), model, "expected an object (a model");
}

TEST(JsonInputs, AnUnknownFieldNamesTheClosestKnownOne) {
  Json hw = load_json_file(resolve_preset("hardware", "jetson-agx-orin-64gb"));
  hw["ssd"]["prefill_read_bandwith"] = {{"value", "1GB/s"}, {"source", "a typo"}};
  const std::string hw_path = write("typo-hw.json", hw.dump(2));
  expect_input_error(moesim_cli(kRun + " --model qwen3-30b-a3b --hw " + hw_path), hw_path,
                     "ssd.prefill_read_bandwith: unknown field; did you mean ssd.prefill_read_bandwidth?");
  Json model = load_json_file(resolve_preset("models", "qwen3-30b-a3b"));
  model["hiden_size"] = 2048;
  const std::string model_path = write("typo-model.json", model.dump(2));
  expect_input_error(moesim_cli(kRun + " --model " + model_path), model_path,
                     "hiden_size: unknown field; did you mean hidden_size?");
  const std::string spec = write("typo-spec.json", R"({"grid": {"trace": ["q.mtr"], "budgte": ["4"]}})");
  expect_input_error(moesim_cli("-q sweep " + spec + " -o " + temp_path("typo-sweep")), spec,
                     "/grid/budgte: unknown parameter; did you mean budget?");
}

TEST(JsonInputs, AHardwareFieldWithoutSourceOrAssumptionIsAnError) {
  Json hw = load_json_file(resolve_preset("hardware", "jetson-agx-orin-64gb"));
  hw["ssd"]["read_latency"].erase("assumption");
  const std::string path = write("unsourced-hw.json", hw.dump(2));
  expect_input_error(moesim_cli(kRun + " --model qwen3-30b-a3b --hw " + path), path,
                     "ssd.read_latency: has neither source nor assumption");
}

TEST(JsonInputs, ADirectoryGivenAsAHardwareProfileSaysSo) {
  const std::string dir = temp_path("a-folder");
  std::filesystem::create_directories(dir);
  const CliResult r = moesim_cli(kRun + " --model qwen3-30b-a3b --hw " + dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(dir + " is a directory, not a hardware profile JSON file"));
}

}  // namespace
// A safetensors header is JSON too: a number beyond a double is an input error at the header, never exit 70.
TEST(JsonInputs, ANumberBeyondADoubleInASafetensorsHeaderNamesTheFile) {
  const std::string header = R"({"x":{"dtype":"BF16","shape":[1],"data_offsets":[0,1e400]}})";
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  const std::string path = write("huge.safetensors", bytes + header + std::string(2, '\0'));
  expect_input_error(moesim_cli("weights stats --weights " + path), path + ": at byte 8: header", "1e400");
}

}  // namespace moesim::test
