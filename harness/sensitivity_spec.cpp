// The spec of `moesim sensitivity` (harness/sensitivity_job.h, docs/sensitivity.md).
#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/json_schema.h"
#include "core/data_dir.h"
#include "core/hardware_profile.h"
#include "harness/arguments.h"
#include "harness/sensitivity_job.h"

namespace moesim::harness {
namespace {

namespace fs = std::filesystem;

// A factor scales a profile's field: beyond a thousandfold either way it leaves every real device's range
// (and a 1e300 factor made a field the profile then refused, blamed on the preset's file).
constexpr double kMinFactor = 0.001, kMaxFactor = 1000;

// The keys a point takes, at the top level (every point's default) or in a point of "points".
const std::vector<std::string_view> kPointKeys = {"trace",  "format", "model",    "hw",   "budget", "scope",
                                                  "metric", "batch",  "io_depth", "seed", "systems"};

namespace sensitivity_spec_detail {
// A path relative to the spec's folder; a preset name (no '/' and no ".json") stays as it is.
std::string resolve(const std::string& v, const fs::path& base, bool preset) {
  if (v.empty() || v == "-") return v;
  if (preset && v.find('/') == std::string::npos && fs::path(v).extension() != ".json") return v;
  const fs::path p(v);
  return p.is_relative() && !base.empty() ? (base / p).string() : v;
}
}  // namespace sensitivity_spec_detail

// A system spec of the spec file, parsed once here; bad syntax or an unknown system fails naming its JSON
// path.
PolicySpec system_spec_at(const JsonAt& at) {
  try {
    return parse_system_option(at.string());
  } catch (const UsageError& e) {
    at.fail(e.what());
  }
}

// "offload:policy=lru" -> system "offload", eviction "lru"; the other parameters stay the system's.
SensitivitySystem system_of_text(const JsonAt& at) {
  const std::string text = at.string();
  if (text.empty()) at.expected("a system spec such as \"offload:policy=lru\" or \"zipmoe\"");
  SystemAndPolicies split = take_policy_param(system_spec_at(at));
  // Given more than once, the last policy= counts.
  return SensitivitySystem{std::move(split.system), split.policies.empty() ? "" : split.policies.back(),
                           text};
}

SensitivitySystem system_of(const JsonAt& at) {
  if (at.json().is_string()) return system_of_text(at);
  at.object().only_keys({"system", "policy", "label"});
  SensitivitySystem s;
  s.system = system_spec_at(at["system"]);
  if (auto p = at.find("policy")) s.policy = p->string();
  s.label = at.has("label") ? at["label"].string()
                            : at["system"].string() + (s.policy.empty() ? "" : " --policy " + s.policy);
  return s;
}

void read_point_keys(const JsonAt& at, SensitivityPoint& p, const fs::path& base) {
  if (auto v = at.find("trace")) p.trace = sensitivity_spec_detail::resolve(v->string(), base, false);
  if (auto v = at.find("format")) p.format = v->string();
  if (auto v = at.find("model")) p.model = sensitivity_spec_detail::resolve(v->string(), base, true);
  if (auto v = at.find("hw")) p.hw = sensitivity_spec_detail::resolve(v->string(), base, true);
  if (auto v = at.find("budget"))
    p.budget = v->json().is_number() ? std::to_string(v->integer(1)) : v->string();
  if (auto v = at.find("scope")) p.scope = v->string_of({"global", "layer"});
  if (auto v = at.find("metric")) {
    const std::string m = v->string();
    const auto& known = sensitivity_metrics();
    if (std::find(known.begin(), known.end(), m) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      v->fail("unknown metric '" + m + "' (known: " + list + ")");
    }
    p.metric = m;
  }
  if (auto v = at.find("batch")) p.batch = static_cast<uint32_t>(v->integer(1, 1u << 20));
  if (auto v = at.find("io_depth")) p.io_depth = static_cast<uint32_t>(v->integer(1, kMaxIoDepth));
  if (auto v = at.find("seed")) p.seed = v->integer();
  if (auto v = at.find("systems")) {
    v->array();
    if (v->size() < 2) v->expected("a list of at least two systems (a ranking needs two)");
    p.systems.clear();
    for (size_t i = 0; i < v->size(); ++i) p.systems.push_back(system_of((*v)[i]));
    for (size_t i = 0; i < p.systems.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (p.systems[i].label == p.systems[j].label)
          (*v)[i].fail("the same system twice: " + p.systems[i].label);
  }
}

namespace sensitivity_spec_detail {
void check_point(const JsonAt& at, const SensitivityPoint& p) {
  if (p.trace.empty()) at.fail("no \"trace\" (give it at the top level or in the point)");
  if (p.budget.empty()) at.fail("no \"budget\" (give it at the top level or in the point)");
  if (p.systems.empty()) at.fail("no \"systems\" (give it at the top level or in the point)");
}
}  // namespace sensitivity_spec_detail

}  // namespace

const std::vector<std::string>& sensitivity_metrics() {
  static const std::vector<std::string> m = {"tpot",       "tpot_p90", "ttft",
                                             "end_to_end", "makespan", "decode_tokens_per_s"};
  return m;
}

std::vector<NamedPath> files_named(const SensitivitySpec& spec, const std::string& origin) {
  std::vector<NamedPath> out;
  const SensitivityPoint defaults;
  for (size_t i = 0; i < spec.points.size(); ++i) {
    const SensitivityPoint& p = spec.points[i];
    const std::string at = origin + ": points[" + std::to_string(i) + "] ";
    const auto add = [&](const char* key, const std::string& value, bool is_default) {
      for (NamedPath& f : files_named_by_value(key, value, is_default))
        out.push_back({f.path, at + f.option});
    };
    add("trace", p.trace, false);
    add("model", p.model, false);
    add("hw", p.hw, p.hw == defaults.hw);
    for (const SensitivitySystem& s : p.systems) {
      add("system", s.system.text(), false);
      add("policy", s.policy, false);
    }
  }
  return out;
}

std::vector<double> parse_factors(const std::string& text, const std::string& option) {
  std::vector<double> out;
  size_t from = 0;
  while (from <= text.size()) {
    const size_t comma = std::min(text.find(',', from), text.size());
    const std::string t = text.substr(from, comma - from);
    char* end = nullptr;
    const double f = std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size() || !(f >= kMinFactor && f <= kMaxFactor) || f == 1)
      throw UsageError(option + ": '" + t +
                       "' is not a factor (a number from 0.001 to 1000 other than 1, such as 0.5 "
                       "or 2)");
    out.push_back(f);
    from = comma + 1;
  }
  return out;
}

SensitivitySpec sensitivity_spec_from_json(const Json& raw, const std::string& origin, const fs::path& base) {
  const JsonAt root(raw, origin);
  root.object();
  std::vector<std::string_view> keys = kPointKeys;
  keys.insert(keys.end(), {"description", "points", "factors", "fields"});
  root.only_keys(keys);
  SensitivitySpec s;
  SensitivityPoint defaults;
  read_point_keys(root, defaults, base);
  if (auto f = root.find("factors")) {
    f->array();
    if (f->size() == 0) f->expected("a non-empty list of factors");
    for (size_t i = 0; i < f->size(); ++i) {
      const double v = (*f)[i].number(kMinFactor, kMaxFactor);
      if (v == 1) (*f)[i].expected("a factor other than 1");
      s.factors.push_back(v);
    }
  }
  if (auto f = root.find("fields")) {
    f->array();
    // As "factors": [] is refused, so is an empty list here, rather than meaning its opposite (every field).
    if (f->size() == 0)
      f->expected(
          "a non-empty list of hardware fields (omit \"fields\" to scale every assumption-marked field)");
    for (size_t i = 0; i < f->size(); ++i) {
      const std::string field = (*f)[i].string();
      if (field == "budget" || field == "ratio") {  // run parameters (harness/sensitivity_job.h)
        s.fields.push_back(field);
        continue;
      }
      const size_t dot = field.find('.');
      const char* kind = dot == std::string::npos
                             ? nullptr
                             : hardware_field_kind(field.substr(0, dot), field.substr(dot + 1));
      if (!kind || std::string(kind) == "any")
        (*f)[i].fail(
            "'" + field +
            "' is not a scalar field of a hardware profile (docs/hardware-format.md) nor a run parameter "
            "(budget, ratio)");
      s.fields.push_back(field);
    }
  }
  if (auto pts = root.find("points")) {
    pts->array();
    if (pts->size() == 0) pts->expected("a non-empty list of points");
    for (size_t i = 0; i < pts->size(); ++i) {
      const JsonAt at = (*pts)[i].object();
      at.only_keys(kPointKeys);
      SensitivityPoint p = defaults;
      read_point_keys(at, p, base);
      sensitivity_spec_detail::check_point(at, p);
      s.points.push_back(p);
    }
  } else {
    sensitivity_spec_detail::check_point(root, defaults);
    s.points.push_back(defaults);
  }
  return s;
}

}  // namespace moesim::harness
