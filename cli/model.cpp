// `moesim model import config.json [--dtype D | --quant Q] [--name N] [--source S] [-o M.json]`: a Hugging
// Face config.json to a model JSON (harness/model_import_job.h) whose numbers name their config keys, then
// the totals it implies: total and active parameters, expert and dense bytes, KV bytes per token.
#include <cstdio>
#include <memory>

#include "base/atomic_file.h"
#include "base/units.h"
#include "cli/command.h"
#include "cli/summary_json.h"
#include "harness/model_import_job.h"

namespace moesim::cli {
namespace model_cmd {

std::string billions(uint64_t n) {
  return strprintf("%.2fB", static_cast<double>(n) / 1e9);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<harness::ModelImportOptions>();
  auto out = std::make_shared<std::string>("-");
  app.add_option("config", o->config_path, "the model's Hugging Face config.json")->required();
  app.add_option("--dtype", o->dtype,
                 "store every weight as this type (bf16, f16, f32, fp8_e4m3[_b128], int4_gG, int8_gG, mxfp4, "
                 "q8_0, q6_k, q5_k, q4_k, iq4_xs, ...; docs/model-format.md)");
  app.add_option("--quant", o->quant, "a named mix of per-tensor types: " + harness::quant_mix_names());
  app.add_option("--name", o->name,
                 "the model's name (default: the config file's stem, or its folder's name)");
  app.add_option(
      "--source", o->source,
      "where the config was published, for the sources (e.g. huggingface.co/ORG/MODEL config.json; "
      "default: the file's path)");
  app.add_option("-o,--output", *out, "the model JSON ('-' = standard output)")->capture_default_str();
  app.callback([o, out] {
    check_output_writable(*out);
    const Json m = harness::import_hf_config_file(*o);
    write_json_file(*out, m);
    const Json& t = m["totals"];
    std::fprintf(
        stderr,
        "moesim: %s: %s total, %s active parameters; an expert %s, all experts %s, other weights %s; "
        "KV %s per token (BF16 cache)\n",
        m["name"].get<std::string>().c_str(), billions(t["total_params"].get<uint64_t>()).c_str(),
        billions(t["active_params"].get<uint64_t>()).c_str(),
        format_bytes(t["expert_bytes"].get<uint64_t>()).c_str(),
        format_bytes(t["experts_bytes"].get<uint64_t>()).c_str(),
        format_bytes(t["non_expert_bytes"].get<uint64_t>()).c_str(),
        format_bytes(t["kv_bytes_per_token"].get<uint64_t>()).c_str());
  });
}

}  // namespace model_cmd
MOESIM_CLI_GROUP("model", "Model descriptions: make one from a Hugging Face config.json");
MOESIM_CLI_COMMAND("model import",
                   "Make a model JSON from a Hugging Face config.json (families: mixtral, "
                   "qwen*_moe, qwen3_next, deepseek_v2/v3, glm4_moe, gpt_oss, olmoe, phimoe, llama4, gemma4)",
                   model_cmd::setup);
}  // namespace moesim::cli
