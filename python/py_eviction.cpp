#include "python/py_eviction.h"

#include <pybind11/stl.h>

#include <memory>
#include <vector>

#include "base/error.h"
#include "core/eviction.h"
#include "python/py_classes.h"

namespace py = pybind11;

namespace moesim::python {
namespace {

py::dict config_dict(const CacheConfig& c) {
  py::dict d;
  d["layers"] = c.layers;
  d["experts"] = c.experts;
  d["top_k"] = c.top_k;
  d["scope"] = scope_name(c.scope);
  d["partitions"] = c.partitions();
  d["keys"] = c.keys();
  d["capacity"] = c.capacity;
  d["key_weight"] = c.key_weight;
  d["weights_are_bytes"] = c.weights_are_bytes;
  d["expert_bytes"] = c.expert_bytes;
  d["next_use_available"] = c.next_use_available;
  return d;
}

class PyEviction final : public EvictionPolicyBase<PyEviction> {
 public:
  PyEviction(const CacheConfig& cfg, std::string name)
      : EvictionPolicyBase(cfg), name_(std::move(name)), resident_(cfg.keys(), 0), stamp_(cfg.keys(), 0) {
    py::gil_scoped_acquire gil;
    try {
      obj_ = python_classes("eviction").at(name_)(config_dict(cfg));
      begin_ = obj_.attr("begin_invocation");
      hit_ = obj_.attr("on_hit");
      admit_ = obj_.attr("on_admit");
      refresh_ = obj_.attr("on_refresh");
      evict_ = obj_.attr("evict");
      end_ = obj_.attr("end_invocation");
    } catch (py::error_already_set& e) {
      rethrow_hook_error(e, prefix() + "cannot create the policy: ");
    }
  }
  ~PyEviction() override {
    py::gil_scoped_acquire gil;
    for (py::object* o : {&begin_, &hit_, &admit_, &refresh_, &evict_, &end_, &obj_}) *o = py::object();
  }

  // The whole stream with the GIL held once: the hooks' own acquisitions are then cheap.
  CacheCounters replay(const LookupView& view) override {
    py::gil_scoped_acquire gil;
    return EvictionPolicyBase::replay(view);
  }

  void begin_invocation(uint32_t part) override {
    ++epoch_;
    protecting_ = true;
    call("begin_invocation", begin_, part);
  }
  void on_hit(uint32_t key, uint32_t part, uint32_t next_use) override {
    stamp_[key] = epoch_;
    call("on_hit", hit_, key, part, next_use);
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t next_use) override {
    resident_[key] = 1;
    stamp_[key] = epoch_;
    call("on_admit", admit_, key, part, next_use);
  }
  void on_refresh(uint32_t key, uint32_t part) override { call("on_refresh", refresh_, key, part); }
  uint32_t evict(uint32_t part) override {
    py::gil_scoped_acquire gil;
    uint32_t v = kNoKey;
    try {
      const py::object r = evict_(part);
      if (r.is_none()) {
        // After end_invocation the cache asks only while over capacity, and nothing is in use any more.
        if (!protecting_)
          throw Error(prefix() + "evict(" + std::to_string(part) +
                      ") returned None after end_invocation, while the partition is over capacity: it must " +
                      "return one of its resident keys then (none is in use any more)");
        return kNoKey;
      }
      const long long k = r.cast<long long>();
      if (k < 0 || k >= static_cast<long long>(config().keys()))
        throw Error(prefix() + "evict(" + std::to_string(part) + ") returned " + std::to_string(k) +
                    ", not a key (0 <= key < " + std::to_string(config().keys()) + ")");
      v = static_cast<uint32_t>(k);
    } catch (py::error_already_set& e) {
      rethrow_hook_error(e, prefix() + "evict: ");
    } catch (py::cast_error&) {
      throw Error(prefix() + "evict(" + std::to_string(part) + ") returned neither a key (an int) nor None");
    }
    check_victim(v, part);
    resident_[v] = 0;
    return v;
  }
  void end_invocation(uint32_t part) override {
    protecting_ = false;
    call("end_invocation", end_, part);
  }

 private:
  std::string prefix() const { return "python eviction policy '" + name_ + "': "; }

  template <typename... A>
  void call(const char* hook, const py::object& f, A... args) {
    py::gil_scoped_acquire gil;
    try {
      f(args...);
    } catch (py::error_already_set& e) {
      rethrow_hook_error(e, prefix() + hook + ": ");
    }
  }

  void check_victim(uint32_t v, uint32_t part) const {
    const std::string what =
        prefix() + "evict(" + std::to_string(part) + ") returned key " + std::to_string(v);
    if (!resident_[v]) throw Error(what + ", which is not resident");
    if (config().partition_of_layer(v / config().experts) != part)
      throw Error(what + ", which belongs to another partition");
    if (protecting_ && stamp_[v] == epoch_)
      throw Error(what + ", which is in use (looked up in this invocation, before end_invocation)");
  }

  std::string name_;
  py::object obj_, begin_, hit_, admit_, refresh_, evict_, end_;
  std::vector<uint8_t> resident_;
  std::vector<uint64_t> stamp_;
  uint64_t epoch_ = 0;
  bool protecting_ = false;
};

}  // namespace

void register_eviction(const std::string& name, py::object cls, const std::string& description,
                       bool next_use) {
  if (!store_python_class(EvictionRegistry::instance(), "eviction", name, std::move(cls))) return;
  EvictionRegistry::instance().add(
      {name,
       description.empty() ? "written in Python" : description,
       {},
       [name](const Params&, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
         return std::make_unique<PyEviction>(cfg, name);
       },
       PolicyNeeds{.next_use = next_use}});
}

}  // namespace moesim::python
