// The spec of `moesim validate --matrix` (harness/validate/matrix_spec.h): its grid in order, and every bad
// spec an error naming the file and the JSON path.
#include "harness/validate/matrix_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"

namespace moesim::harness::matrix {
namespace {

using ::testing::HasSubstr;

Json good() {
  return Json::parse(R"({
    "models": [{"name": "small", "model": "qwen3-30b-a3b-w4", "stores": {"zipmoe": "z.store", "offload": "r.store"}}],
    "traces": [{"name": "b-on-a", "validate": "b.mtr", "calibrate": "a.mtr"}],
    "systems": ["offload", {"system": "zipmoe", "options": ["--recover-on", "cpu"]}],
    "budgets": ["8MiB", "16MiB"],
    "batch": [1, 4],
    "repeat": 2,
    "options": ["--workers", "2"]
  })");
}

std::string error_of(const Json& j) {
  try {
    spec_from_json(j, "m.json", "/spec");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(MatrixSpec, CellsAreTheGridInTheDocumentedOrderWithPathsRelativeToTheSpec) {
  const Spec s = spec_from_json(good(), "m.json", "/spec");
  EXPECT_EQ(s.repeat, 2u);
  EXPECT_EQ(s.targets, Spec::kDefaultTargets);
  ASSERT_EQ(s.io.size(), 1u);  // the default variant: no options
  EXPECT_EQ(s.io[0].name, "default");
  const std::vector<Cell> cells = cells_of(s);
  ASSERT_EQ(cells.size(), 8u);  // 2 systems x 2 budgets x 2 batch sizes
  // System, then budget, then batch: the innermost axis changes first.
  EXPECT_EQ(cells[0].label(), "offload 8MiB b1 small b-on-a default");
  EXPECT_EQ(cells[1].label(), "offload 8MiB b4 small b-on-a default");
  EXPECT_EQ(cells[2].label(), "offload 16MiB b1 small b-on-a default");
  EXPECT_EQ(cells[4].label(), "zipmoe 8MiB b1 small b-on-a default");
  for (size_t i = 0; i < cells.size(); ++i) EXPECT_EQ(cells[i].index, i);
  EXPECT_EQ(cells[0].validate, "/spec/b.mtr");
  EXPECT_EQ(cells[0].calibrate, "/spec/a.mtr");
  EXPECT_EQ(cells[5].args,
            (std::vector<std::string>{"--model", "qwen3-30b-a3b-w4", "--store", "/spec/z.store", "--system",
                                      "zipmoe", "--budget", "8MiB", "--batch", "4", "--recover-on", "cpu",
                                      "--workers", "2"}));
  EXPECT_EQ(cells[0].args[3], "/spec/r.store");  // each system its own store
}

TEST(MatrixSpec, IoVariantsAndOneStoreForEverySystemAndAPresetModel) {
  Json j = good();
  j["models"][0] = {{"model", "qwen3-30b-a3b-w4"}, {"store", "/abs/s.store"}};
  j["io"] =
      Json::parse(R"([{"name": "pread", "options": []}, {"name": "uring", "options": ["--io", "uring"]}])");
  const std::vector<Cell> cells = cells_of(spec_from_json(j, "m.json", "/spec"));
  ASSERT_EQ(cells.size(), 16u);
  EXPECT_EQ(cells[1].io, "uring");
  EXPECT_EQ(cells[1].model, "qwen3-30b-a3b-w4");  // a preset keeps its name, unresolved
  EXPECT_EQ(cells[1].args[1], "qwen3-30b-a3b-w4");
  EXPECT_EQ(cells[1].args[3], "/abs/s.store");
  EXPECT_EQ(cells[1].args[cells[1].args.size() - 3],
            "uring");  // the variant's options, before the shared ones
}

// A cell calibrated at one batch or budget and validated at another: the transfer a user relies on when they
// calibrate once and ask what-ifs.
TEST(MatrixSpec, TransferCellsCalibrateAtAnotherBatchOrBudget) {
  Json j = good();
  j["systems"] = Json::array({"offload"});
  j["budgets"] = Json::parse(R"(["8MiB", {"calibrate": "8MiB", "validate": "16MiB"}])");
  j["batch"] = Json::parse(R"([{"calibrate": 1, "validate": 4}])");
  const std::vector<Cell> cells = cells_of(spec_from_json(j, "m.json", "/spec"));
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].label(), "offload 8MiB b1->4 small b-on-a default");
  EXPECT_EQ(cells[1].label(), "offload 8MiB->16MiB b1->4 small b-on-a default");
  EXPECT_EQ(cells[1].batch, 4u);
  EXPECT_EQ(cells[1].calibrate_batch, 1u);
  EXPECT_EQ(cells[1].budget, "16MiB");
  EXPECT_EQ(cells[1].calibrate_budget, "8MiB");
  EXPECT_EQ(cells[0].args,
            (std::vector<std::string>{"--model", "qwen3-30b-a3b-w4", "--store", "/spec/r.store", "--system",
                                      "offload", "--budget", "8MiB", "--batch", "4", "--calibrate-batch", "1",
                                      "--workers", "2"}));
  EXPECT_EQ(cells[1].args[11], "1");
  EXPECT_EQ(cells[1].args[12], "--calibrate-budget");
  EXPECT_EQ(cells[1].args[13], "8MiB");
  j["batch"] = Json::parse(R"([{"calibrate": 0, "validate": 4}])");
  EXPECT_THAT(error_of(j), HasSubstr("m.json: batch[0].calibrate: "));
  j["batch"] = Json::parse(R"([{"validate": 4, "calibrat": 1}])");
  EXPECT_THAT(error_of(j), HasSubstr("m.json: batch[0].calibrat: unknown field"));
  j["batch"] = Json::parse(R"([1])");
  j["budgets"] = Json::parse(R"([{"calibrate": "lots", "validate": "16MiB"}])");
  EXPECT_THAT(error_of(j), HasSubstr("m.json: budgets[0].calibrate: "));
  j["budgets"] = Json::parse(R"(["8MiB"])");
  j["options"] = Json::parse(R"(["--calibrate-batch", "2"])");
  EXPECT_THAT(error_of(j), HasSubstr("m.json: options[0]: '--calibrate-batch' is set by the matrix"));
}

TEST(MatrixSpec, TheCalibrationTraceMayNotBeTheValidatedOne) {
  Json j = good();
  j["traces"][0]["calibrate"] = "./b.mtr";
  EXPECT_THAT(error_of(j),
              HasSubstr("m.json: traces[0].calibrate: the calibration trace is the validated one"));
}

TEST(MatrixSpec, BadSpecsNameTheFileAndThePath) {
  struct Case {
    const char* pointer;
    Json value;
    const char* message;
  };
  const Case cases[] = {
      {"/models", Json::array(), "m.json: models: expected a non-empty list of models"},
      {"/systems", Json::array(), "m.json: systems: expected a non-empty list"},
      {"/systems/1", Json::parse(R"({"system": "offload"})"),
       "m.json: systems[1]: 'offload' is listed twice"},
      {"/budgets/1", "lots", "m.json: budgets[1]: "},
      {"/batch/0", 0, "m.json: batch[0]: "},
      {"/repeat", 0, "m.json: repeat: "},
      {"/options/0", "--budget", "m.json: options[0]: '--budget' is set by the matrix"},
      {"/systems/1/options/0", "--trace=x", "m.json: systems[1].options[0]: '--trace' is set by the matrix"},
      {"/models/0/stores", Json::parse(R"({"zipmoe": "z.store"})"),
       "m.json: models[0].stores: no store for system 'offload'"},
      {"/budget", Json::array({"1GiB"}), "m.json: budget: unknown field; did you mean budgets?"},
      // Found before any cell runs (a cell with real stores is minutes of exec), by JSON path.
      {"/targets", "cost.tpot=lots", "m.json: targets: --targets: 'cost.tpot=lots'"},
      {"/systems/0", "offlaod", "m.json: systems[0]: unknown system 'offlaod'"},
      {"/systems/1/system", "zipmoe:shards=0",
       "m.json: systems[1].system: zipmoe:shards=0: shards must be a whole number in [1, 65536]"},
      {"/models/0/model", "no-such-model", "m.json: models[0].model: "},
  };
  for (const Case& c : cases) {
    Json j = good();
    j[Json::json_pointer(c.pointer)] = c.value;
    EXPECT_THAT(error_of(j), HasSubstr(c.message)) << c.pointer;
  }
  Json both = good();
  both["models"][0]["store"] = "s.store";
  EXPECT_THAT(error_of(both), HasSubstr("m.json: models[0]: give one of store"));
  Json no_traces = good();
  no_traces.erase("traces");
  EXPECT_THAT(error_of(no_traces), HasSubstr("m.json: "));
  EXPECT_THAT(error_of(no_traces), HasSubstr("traces"));
}

}  // namespace
}  // namespace moesim::harness::matrix
