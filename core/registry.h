// A registry of plug-ins of one kind (eviction, routing, prefetch, scheduling, planning, placement, system).
// Each plug-in registers itself from its own .cpp with MOESIM_REGISTER (below), naming its kind's registry
// type (EvictionRegistry, RoutingRegistry, PrefetchRegistry, SchedulingRegistry, PlanningRegistry,
// PlacementRegistry, SystemRegistry); the registry lives in a function-local static, so registration order
// across translation units does not matter. Policies are built as an OBJECT library so no registrar is
// dropped. docs/architecture.md §3 lists every registered name, and scripts/check-structure keeps that list
// true.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "core/params.h"

namespace moesim {

// What a plug-in reads beyond the inputs every run has, declared in its registry entry so that a caller
// prepares it (or refuses early) by looking the entry up instead of building the plug-in to find out.
struct PolicyNeeds {
  bool next_use = false;   // the future: the stream's next uses (offline oracles such as Belady)
  bool frequency = false;  // whole-trace lookups per key (frequency oracles)
  bool logits = false;     // the router's full logits per token (ranks beyond the top-k)
};

// What a plug-in is, declared in its registry entry, so that a caller asks the entry instead of comparing
// the plug-in's name: outside its own registration no code names a policy to decide something
// (scripts/check-structure's name-compares rule).
struct PolicyTraits {
  // Changes nothing: the routing that keeps the router's own choice, the prefetcher that prefetches nothing.
  // Reports leave such a column out, and options that exclude a policy of the kind accept it.
  bool no_op = false;
  // Evicts by recency alone: at every capacity C the cache holds the C most recently used keys, so one pass
  // over the recency stack's distances (replay/mrc.h, Mattson et al., 1970) gives its whole miss-ratio curve.
  bool recency_stack = false;
};

// The traits type of a kind's registry entries: PolicyTraits for policies; a kind with traits of its own
// specialises it next to its interface (serving/system.h: SystemTraits for systems).
template <typename Interface>
struct EntryTraits {
  using type = PolicyTraits;
};

template <typename Interface, typename... Args>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Interface>(const Params&, Args...)>;
  struct Entry {
    std::string name;
    std::string description;
    std::vector<ParamDef> params;
    Factory factory;
    PolicyNeeds needs{};  // optional argument of MOESIM_REGISTER; nothing beyond the run's inputs
    typename EntryTraits<Interface>::type traits{};  // optional argument after the needs
  };

  static Registry& instance() {
    static Registry r;
    return r;
  }

  bool add(Entry e) {
    for (const auto& x : entries_)
      if (x.name == e.name) throw Error("policy '" + e.name + "' registered twice");
    entries_.push_back(std::move(e));
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.name < b.name; });
    return true;
  }

  const Entry& find(const std::string& name, const char* kind) const {
    for (const auto& e : entries_)
      if (e.name == name) return e;
    throw UsageError("unknown " + std::string(kind) + " policy '" + printable(name) + "' (known: " + names() +
                     ")");
  }

  // The entry of a spec's policy ("lfu:decay=0.5" -> lfu's): its traits and needs.
  const Entry& entry(const PolicySpec& spec, const char* kind) const { return find(spec.name, kind); }
  const Entry& entry(const std::string& spec_text, const char* kind) const {
    return entry(PolicySpec::parse(spec_text), kind);
  }

  // Validated parameters of a spec such as "lfu:decay=0.5": every value checked against the entry's
  // ParamDefs (type, range, choices), defaults filled in.
  Params params(const PolicySpec& spec, const char* kind) const {
    return Params(spec, find(spec.name, kind).params);
  }
  Params params(const std::string& spec_text, const char* kind) const {
    return params(PolicySpec::parse(spec_text), kind);
  }

  // The plug-in of a spec; its factory sees only parameters that passed the entry's ParamDefs.
  std::unique_ptr<Interface> create(const PolicySpec& spec, const char* kind, Args... args) const {
    const Entry& e = find(spec.name, kind);
    return e.factory(Params(spec, e.params), std::forward<Args>(args)...);
  }
  std::unique_ptr<Interface> create(const std::string& spec_text, const char* kind, Args... args) const {
    return create(PolicySpec::parse(spec_text), kind, std::forward<Args>(args)...);
  }

  const std::vector<Entry>& entries() const { return entries_; }

  std::string names() const {
    std::string s;
    for (const auto& e : entries_) s += (s.empty() ? "" : ", ") + e.name;
    return s;
  }

 private:
  std::vector<Entry> entries_;
};

}  // namespace moesim

#define MOESIM_REGISTRY_CONCAT2(a, b) a##b
#define MOESIM_REGISTRY_CONCAT(a, b) MOESIM_REGISTRY_CONCAT2(a, b)
// MOESIM_REGISTER(EvictionRegistry, "lru", "least recently used", {ParamDefs...}, factory): registers a
// plug-in of the kind the registry type names, once per policy .cpp, at namespace scope. The factory has the
// signature of that registry's Factory (std::unique_ptr<Interface>(const Params&, Args...)). Variadic, so a
// braced parameter list may contain commas: {{"lambda", "0.5", "...", ParamType::kReal, ParamRange::closed(0,
// 1)}, {"J", "2", "...", ParamType::kWhole}} (key, default, description, type, range, choices). An optional
// PolicyNeeds after the factory declares what the plug-in reads beyond the run's inputs, and optional traits
// after that what it is (PolicyTraits; SystemTraits for systems).
#define MOESIM_REGISTER(registry, name, description, ...)                                   \
  [[maybe_unused]] static const bool MOESIM_REGISTRY_CONCAT(moesim_registered_, __LINE__) = \
      ::moesim::registry::instance().add({name, description, __VA_ARGS__})
