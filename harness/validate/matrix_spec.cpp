#include "harness/validate/matrix_spec.h"

#include <algorithm>
#include <set>
#include <system_error>

#include "base/error.h"
#include "base/json_schema.h"
#include "core/data_dir.h"
#include "core/model_spec.h"
#include "harness/arguments.h"
#include "harness/validate/validation.h"
#include "serving/system.h"
#include "traces/mtr_format.h"

namespace moesim::harness::matrix {
namespace {

namespace fs = std::filesystem;

// What an option list may not set: the axes (named in the table, so a cell's label says what it ran), the
// matrix's own settings, and the outputs (one per matrix, not per cell).
constexpr const char* kReserved[] = {"--trace",
                                     "--model",
                                     "--store",
                                     "--system",
                                     "--budget",
                                     "--batch",
                                     "--repeat",
                                     "--targets",
                                     "--calibrate-on",
                                     "--profile-out",
                                     "--name",
                                     "--log",
                                     "-o",
                                     "--output",
                                     "--json",
                                     "--csv",
                                     "--timeline",
                                     "--timeline-steps",
                                     "--matrix",
                                     "--calibrate-batch",
                                     "--calibrate-budget"};

std::string resolve(const fs::path& base, const std::string& p) {
  const fs::path path(p);
  return path.is_absolute() || base.empty() ? p : (base / path).lexically_normal().string();
}

std::vector<std::string> option_list(const JsonAt& at) {
  at.array();
  std::vector<std::string> out;
  for (size_t i = 0; i < at.size(); ++i) {
    const JsonAt o = at[i];
    std::string s = o.string();
    const std::string name = s.substr(0, s.find('='));
    if (std::find(std::begin(kReserved), std::end(kReserved), name) != std::end(kReserved))
      o.fail("'" + name +
             "' is set by the matrix (its axes, repeat, targets or outputs), not by an option list");
    out.push_back(std::move(s));
  }
  return out;
}

// An axis: a non-empty list of names, or of {"name" (or "system"), "options"} objects.
std::vector<Variant> variants(const JsonAt& at, const char* name_key) {
  at.array();
  if (at.size() == 0) at.expected("a non-empty list");
  std::vector<Variant> out;
  for (size_t i = 0; i < at.size(); ++i) {
    const JsonAt v = at[i];
    Variant x;
    if (v.json().is_string()) {
      x.name = v.string();
    } else {
      v.object();
      v.only_keys({name_key, "options"});
      x.name = v[name_key].string();
      if (auto o = v.find("options")) x.options = option_list(*o);
    }
    if (x.name.empty()) v.fail("an empty name");
    for (const Variant& y : out)
      if (y.name == x.name) v.fail("'" + x.name + "' is listed twice");
    out.push_back(std::move(x));
  }
  return out;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return a == b || fs::equivalent(a, b, ec);
}

// Whether `calibrate` was synthesized by `trace synth --fit` from `validate` (its provenance says so).
bool fitted_from(const std::string& calibrate, const std::string& validate, const fs::path& base) {
  if (fs::path(calibrate).extension() != ".mtr")
    return false;  // only moesim's own files say where they came from
  Json p;
  try {
    p = traces::read_mtr(calibrate).info().provenance;
  } catch (const Error&) {
    return false;  // not readable here: the cell's own load reports what is wrong with it
  }
  if (!p.contains("generator") || p["generator"] != "fit" || !p.contains("source") ||
      !p["source"].is_string())
    return false;
  const std::string src = p["source"].get<std::string>();
  return same_file(src, validate) || same_file(resolve(base, src), validate) ||
         same_file(resolve(fs::path(calibrate).parent_path(), src), validate);
}

Model model_of(const JsonAt& at, const fs::path& base) {
  at.object();
  at.only_keys({"name", "model", "store", "stores"});
  Model m;
  m.model = at["model"].string();
  if (m.model.empty()) at["model"].fail("an empty model");
  // A preset is a bare name; a file ends in .json or names a folder.
  const bool file = m.model.find('/') != std::string::npos || m.model.ends_with(".json");
  if (file) m.model = resolve(base, m.model);
  m.name = at.has("name") ? at["name"].string() : fs::path(m.model).stem().string();
  if (at.has("store") == at.has("stores"))
    at.fail("give one of store (every system's) or stores (per system)");
  if (auto s = at.find("store")) m.store = resolve(base, s->string());
  if (auto s = at.find("stores")) {
    s->object();
    for (const auto& [k, v] : s->json().items()) m.stores[k] = resolve(base, (*s)[k].string());
    if (m.stores.empty()) s->expected("a store per system");
  }
  return m;
}

// "64MiB", or {"calibrate": "64MiB", "validate": "96MiB"}.
Spec::Budget budget_of(const JsonAt& at) {
  auto one = [](const JsonAt& v) {
    const std::string b = v.string();
    try {
      parse_budget_option("budget", b);
    } catch (const UsageError& e) {
      v.fail(e.what());
    }
    return b;
  };
  if (!at.json().is_object()) return {one(at), ""};
  at.only_keys({"calibrate", "validate"});
  return {one(at["validate"]), one(at["calibrate"])};
}

// 4, or {"calibrate": 1, "validate": 4}.
Spec::Batch batch_of(const JsonAt& at) {
  if (!at.json().is_object()) return {static_cast<uint32_t>(at.integer(1, 4096)), 0};
  at.only_keys({"calibrate", "validate"});
  return {static_cast<uint32_t>(at["validate"].integer(1, 4096)),
          static_cast<uint32_t>(at["calibrate"].integer(1, 4096))};
}

}  // namespace

std::string Cell::label() const {
  const std::string b = calibrate_budget.empty() ? budget : calibrate_budget + "->" + budget;
  const std::string n =
      (calibrate_batch > 0 ? std::to_string(calibrate_batch) + "->" : std::string()) + std::to_string(batch);
  return system + " " + b + " b" + n + " " + model + " " + trace + " " + io;
}

Spec spec_from_json(const Json& raw, const std::string& origin, const fs::path& base) {
  const JsonAt root(raw, origin);
  root.object();
  root.only_keys({"description", "models", "traces", "systems", "budgets", "batch", "io", "repeat", "targets",
                  "options"});
  Spec s;
  s.file = origin;
  s.base = base;
  const JsonAt models = root["models"].array();
  if (models.size() == 0) models.expected("a non-empty list of models");
  for (size_t i = 0; i < models.size(); ++i) s.models.push_back(model_of(models[i], base));
  const JsonAt traces = root["traces"].array();
  if (traces.size() == 0) traces.expected("a non-empty list of {validate, calibrate} pairs");
  for (size_t i = 0; i < traces.size(); ++i) {
    const JsonAt t = traces[i].object();
    t.only_keys({"name", "validate", "calibrate"});
    TracePair p{"", resolve(base, t["validate"].string()), resolve(base, t["calibrate"].string())};
    p.name = t.has("name") ? t["name"].string() : fs::path(p.validate).stem().string();
    if (same_file(p.calibrate, p.validate))
      t["calibrate"].fail(
          "the calibration trace is the validated one; calibrate on another prompt or sequence");
    if (fitted_from(p.calibrate, p.validate, base))
      t["calibrate"].fail("'" + p.calibrate +
                          "' was synthesized (trace synth --fit) from the validated trace '" + p.validate +
                          "': its routing is the validated trace's own; calibrate on another");
    s.traces.push_back(std::move(p));
  }
  s.systems = variants(root["systems"], "system");
  const JsonAt budgets = root["budgets"].array();
  if (budgets.size() == 0) budgets.expected("a non-empty list of budgets");
  for (size_t i = 0; i < budgets.size(); ++i) s.budgets.push_back(budget_of(budgets[i]));
  if (auto b = root.find("batch")) {
    b->array();
    if (b->size() == 0) b->expected("a non-empty list of batch sizes");
    for (size_t i = 0; i < b->size(); ++i) s.batches.push_back(batch_of((*b)[i]));
  } else {
    s.batches = {{1, 0}};
  }
  s.io = root.has("io") ? variants(root["io"], "name") : std::vector<Variant>{{"default", {}}};
  if (auto r = root.find("repeat")) s.repeat = static_cast<uint32_t>(r->integer(1, 1000));
  // The targets, systems and models are checked here, before any cell runs (with real stores a cell is
  // minutes of exec): a typo fails the spec naming its JSON path, not every cell one by one.
  if (auto t = root.find("targets")) {
    s.targets = t->string();
    try {
      check_targets(s.targets);
    } catch (const UsageError& e) {
      t->fail(e.what());
    }
  }
  for (size_t i = 0; i < s.systems.size(); ++i) try {
      (void)serving::make_system(parse_system_option(s.systems[i].name));
    } catch (const Error& e) {
      const JsonAt at = root["systems"][i];
      (at.json().is_string() ? at : at["system"]).fail(e.what());
    }
  for (size_t i = 0; i < s.models.size(); ++i) try {
      (void)load_model(s.models[i].model);
    } catch (const UsageError& e) {
      // A usage error (the model is one of the command's outputs) stays one: exit 2, with its JSON path.
      const JsonAt at = root["models"][i]["model"];
      throw UsageError(at.file() + ": " + at.path() + ": " + e.what());
    } catch (const Error& e) {
      root["models"][i]["model"].fail(e.what());
    }
  if (auto o = root.find("options")) s.options = option_list(*o);
  for (size_t i = 0; i < s.models.size(); ++i)
    for (const Variant& sys : s.systems)
      if (s.models[i].store.empty() && !s.models[i].stores.contains(sys.name))
        root["models"][i]["stores"].fail("no store for system '" + sys.name + "'");
  return s;
}

Spec load_spec(const std::string& file) {
  const Json raw = load_json_file(file);
  return spec_from_json(raw, file, fs::path(file).parent_path());
}

std::vector<Cell> cells_of(const Spec& s) {
  std::vector<Cell> out;
  for (const Model& m : s.models)
    for (const TracePair& t : s.traces)
      for (const Variant& sys : s.systems)
        for (const Spec::Budget& b : s.budgets)
          for (const Spec::Batch& batch : s.batches)
            for (const Variant& io : s.io) {
              Cell c;
              c.index = out.size();
              c.model = m.name;
              c.trace = t.name;
              c.system = sys.name;
              c.budget = b.validate;
              c.calibrate_budget = b.calibrate;
              c.batch = batch.validate;
              c.calibrate_batch = batch.calibrate;
              c.io = io.name;
              c.validate = t.validate;
              c.calibrate = t.calibrate;
              const std::string store = m.store.empty() ? m.stores.at(sys.name) : m.store;
              c.args = {"--model", m.model,    "--store",  store,     "--system",
                        sys.name,  "--budget", b.validate, "--batch", std::to_string(batch.validate)};
              if (batch.calibrate > 0)
                c.args.insert(c.args.end(), {"--calibrate-batch", std::to_string(batch.calibrate)});
              if (!b.calibrate.empty()) c.args.insert(c.args.end(), {"--calibrate-budget", b.calibrate});
              c.args.insert(c.args.end(), sys.options.begin(), sys.options.end());
              c.args.insert(c.args.end(), io.options.begin(), io.options.end());
              c.args.insert(c.args.end(), s.options.begin(), s.options.end());
              out.push_back(std::move(c));
            }
  return out;
}

std::vector<NamedPath> files_named(const Spec& spec) {
  std::vector<NamedPath> out;
  for (size_t i = 0; i < spec.traces.size(); ++i) {
    const std::string at = spec.file + ": traces[" + std::to_string(i) + "]";
    out.push_back({spec.traces[i].validate, at + ".validate"});
    out.push_back({spec.traces[i].calibrate, at + ".calibrate"});
  }
  // The cells' options: models (presets resolved through the data folder), stores, the systems' and I/O
  // variants' options and the spec's own, policy parameters that name files included.
  std::set<std::pair<std::string, std::string>> seen;
  for (const Cell& c : cells_of(spec))
    for (size_t i = 1; i < c.args.size(); ++i) {
      const std::string& option = c.args[i - 1];
      if (!option.starts_with("-") || !seen.emplace(option, c.args[i]).second) continue;
      for (NamedPath& f : files_named_by_value(option, c.args[i], false))
        out.push_back({std::move(f.path), spec.file + ": " + f.option + " (cell " + c.label() + ")"});
    }
  return out;
}

}  // namespace moesim::harness::matrix
