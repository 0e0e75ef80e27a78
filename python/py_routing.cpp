#include "python/py_routing.h"

#include <pybind11/numpy.h>

#include <algorithm>
#include <memory>

#include "base/error.h"
#include "base/json_io.h"
#include "core/routing.h"
#include "python/py_classes.h"

namespace py = pybind11;

namespace moesim::python {
namespace {

class PyRouting final : public RoutingPolicy {
 public:
  PyRouting(const RoutingSetup& s, std::string name, bool cache_dependent)
      : name_(std::move(name)), cache_dependent_(cache_dependent) {
    py::gil_scoped_acquire gil;
    py::dict setup;
    setup["layers"] = s.layers;
    setup["experts"] = s.experts;
    setup["top_k"] = s.top_k;
    setup["has_weights"] = s.has_weights;
    setup["has_logits"] = s.has_logits;
    try {
      obj_ = python_classes("routing").at(name_)(setup);
      route_ = obj_.attr("route");
      counters_ = obj_.attr("counters");
    } catch (py::error_already_set& e) {
      rethrow_hook_error(e, prefix() + "cannot create the policy: ");
    }
  }
  ~PyRouting() override {
    py::gil_scoped_acquire gil;
    route_ = counters_ = obj_ = py::object();
  }

  bool cache_dependent() const override { return cache_dependent_; }

  void route(const RoutingContext& ctx, std::span<uint16_t> out) override {
    py::gil_scoped_acquire gil;
    const size_t K = ctx.top_k, T = K ? out.size() / K : 0;
    py::array_t<uint16_t> selection({T, K});
    std::copy(out.begin(), out.end(), selection.mutable_data());
    py::object weights = py::none(), logits = py::none();
    if (ctx.tokens && ctx.tokens->has_weights())
      weights = rows<float>(T, K, [&](uint32_t t) { return ctx.tokens->weights(t); });
    if (ctx.tokens && ctx.tokens->has_logits())
      logits = rows<float>(T, ctx.tokens->experts(), [&](uint32_t t) { return ctx.tokens->logits(t); });
    const uint32_t experts = ctx.tokens ? ctx.tokens->experts() : 0;
    py::array_t<bool> cached(experts);
    for (uint32_t e = 0; e < experts; ++e)
      cached.mutable_data()[e] = ctx.residency && ctx.residency->cached(ctx.layer, e);
    try {
      route_(ctx.layer, ctx.decode, selection, weights, logits, cached);
    } catch (py::error_already_set& e) {
      rethrow_hook_error(e, prefix() + "route: ");
    }
    std::copy(selection.data(), selection.data() + out.size(), out.begin());
  }

  Json counters() const override {
    py::gil_scoped_acquire gil;
    try {
      const std::string text = py::module_::import("json").attr("dumps")(counters_()).cast<std::string>();
      return Json::parse(text);
    } catch (py::error_already_set& e) {
      rethrow_hook_error(e, prefix() + "counters: ");
    }
  }

 private:
  std::string prefix() const { return "python routing policy '" + name_ + "': "; }

  // A tokens x width array whose row t is row_of(t).
  template <typename T, typename F>
  static py::array_t<T> rows(size_t tokens, size_t width, F row_of) {
    py::array_t<T> a({tokens, width});
    for (size_t t = 0; t < tokens; ++t) {
      const auto r = row_of(static_cast<uint32_t>(t));
      std::copy(r.begin(), r.end(), a.mutable_data() + t * width);
    }
    return a;
  }

  std::string name_;
  bool cache_dependent_;
  py::object obj_, route_, counters_;
};

}  // namespace

void register_routing(const std::string& name, py::object cls, const std::string& description,
                      bool cache_dependent) {
  if (!store_python_class(RoutingRegistry::instance(), "routing", name, std::move(cls))) return;
  RoutingRegistry::instance().add(
      {name,
       description.empty() ? "written in Python" : description,
       {},
       [name, cache_dependent](const Params&, const RoutingSetup& s) -> std::unique_ptr<RoutingPolicy> {
         return std::make_unique<PyRouting>(s, name, cache_dependent);
       }});
}

}  // namespace moesim::python
