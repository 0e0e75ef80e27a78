// The `moesim` Python module's C++ part, moesim._core (docs/python.md): the commands of the CLI called in
// process through the same harness/ functions, with the CLI's option names as keyword arguments and the CLI's
// JSON as the result. The package python/moesim/ wraps it (argument checks, DataFrames, numpy arrays, the
// EvictionPolicy base class): the functions here take the values the package has checked and converted.
//
// Every call releases the GIL around the C++ work and captures the warnings raised on its thread
// (base/warnings.h): the result's "warnings" carries them, as the CLI's JSON does, and each is raised as a
// Python UserWarning afterwards. moesim::UsageError becomes moesim.UsageError (the CLI's exit 2), any other
// moesim::Error moesim.Error, with the CLI's message. A progress= callable receives the command's progress
// bar (base/progress.h: done, total, unit), the GIL taken only for the call; what it raises stops the command
// and is raised by it.
//
// Ctrl-C: Python runs signal handlers on its main thread only, between bytecodes. A call made there runs its
// work on a thread of its own while the main thread, the GIL released, runs the handlers every 50 ms; when
// one raises (KeyboardInterrupt), the work is asked to stop (base/interrupt.h), unwinds from its next
// interrupt point and the call raises what the handler raised. A call on another thread runs in place;
// stopped by such a request (or by a Python policy raising KeyboardInterrupt) it raises KeyboardInterrupt.
// Never a moesim.Error, so that `except moesim.Error` does not swallow it.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/interrupt.h"
#include "base/output_guard.h"
#include "base/progress.h"
#include "base/warnings.h"
#include "cli/run_command.h"
#include "core/data_dir.h"
#include "harness/arguments.h"
#include "harness/cluster/cluster_job.h"
#include "harness/compare_job.h"
#include "harness/plan_job.h"
#include "harness/policies_job.h"
#include "harness/replay_job.h"
#include "harness/run_outcome.h"
#include "harness/sweep_job.h"
#include "harness/trace_job.h"
#include "python/py_eviction.h"
#include "python/py_routing.h"
#include "traces/trace_io.h"

namespace py = pybind11;
using namespace moesim;

namespace {

// A loaded trace and how it was loaded (the path and options name it in every result).
struct PyTrace {
  std::shared_ptr<const traces::Trace> trace;
  std::string path;
  traces::LoadOptions load;
};

py::object json_loads(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

// The progress= callable as a ProgressObserver. report() runs on whichever thread the work reports from, with
// the GIL released there: it takes the GIL for the call only. The first exception the callable raises is kept
// (with the GIL held) and a moesim::Error stops the work; later reports do not call it again.
class PyProgress : public ProgressObserver {
 public:
  explicit PyProgress(py::object callback) : callback_(std::move(callback)) {}
  void report(uint64_t done, uint64_t total, const std::string& unit) override {
    py::gil_scoped_acquire gil;
    if (!raised_) {
      try {
        callback_(done, total, unit);
        return;
      } catch (py::error_already_set& e) {
        raised_ = std::move(e);
      }
    }
    throw Error("stopped: the progress callback raised an exception");
  }
  // Raises the callable's exception, if it raised one (the GIL held).
  void rethrow() {
    if (raised_) throw *raised_;
  }

 private:
  py::object callback_;
  std::optional<py::error_already_set> raised_;
};

// The interpreter's main thread (the one Python runs signal handlers on), set when the module is imported.
unsigned long g_main_thread = 0;

// Runs work() (which throws nothing) on a thread of its own while this thread, the main one, waits with the
// GIL released and runs Python's signal handlers every 50 ms. A handler's exception is kept in
// `signal_raised` and the work asked to stop (base/interrupt.h); the work has ended when this returns. The
// worker keeps one Python thread state for its life, so that the GIL it takes (a progress callback, a Python
// policy's every hook) is quick to take.
void run_watched(const std::function<void()>& work, std::optional<py::error_already_set>& signal_raised) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  py::gil_scoped_release release;
  std::thread worker([&] {
    const PyGILState_STATE state = PyGILState_Ensure();
    PyThreadState* saved = PyEval_SaveThread();
    work();
    PyEval_RestoreThread(saved);
    PyGILState_Release(state);
    const std::lock_guard<std::mutex> lock(m);
    done = true;
    cv.notify_one();
  });
  std::unique_lock<std::mutex> lock(m);
  while (!cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
    if (signal_raised) continue;
    lock.unlock();
    {
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) {
        signal_raised.emplace();  // fetches the handler's exception
        request_interrupt();
      }
    }
    lock.lock();
  }
  lock.unlock();
  worker.join();
}

// Runs f() with the GIL released, its warnings captured and `progress` (None or a callable) observing its
// progress bar, then raises each warning as a UserWarning; interruptible by Ctrl-C (above).
template <typename F>
auto call_released(F&& f, const py::object& progress = py::none()) {
  std::optional<PyProgress> observer;
  if (!progress.is_none()) {
    if (!PyCallable_Check(progress.ptr()))
      throw UsageError("progress: expected a callable (done, total, unit)");
    observer.emplace(progress);
  }
  decltype(f()) r{};
  std::vector<std::string> raised;
  std::exception_ptr failed;
  const std::function<void()> work = [&] {
    try {
      ThreadWarningScope scope;
      ProgressObserverScope observing(observer ? &*observer : nullptr);
      r = f();
      raised = scope.items();
    } catch (...) {
      failed = std::current_exception();
    }
  };
  std::optional<py::error_already_set> signal_raised;
  if (PyThread_get_thread_ident() == g_main_thread) {
    run_watched(work, signal_raised);
  } else {
    py::gil_scoped_release release;
    work();
  }
  if (signal_raised) {
    clear_interrupt();
    throw py::error_already_set(*signal_raised);
  }
  if (failed) {
    if (observer) observer->rethrow();
    try {
      std::rethrow_exception(failed);
    } catch (const Interrupted&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw py::error_already_set();
    }
  }
  for (const auto& w : raised)
    if (PyErr_WarnEx(PyExc_UserWarning, ("moesim: " + w).c_str(), 2) < 0) throw py::error_already_set();
  return r;
}

// The command line's guard (cli/io_guard.h, base/output_guard.h) over a call: what its keyword values name --
// the file, the preset a hw= or model= resolves to (the default profile when hw= is not given), the files a
// policy's parameters name (core/data_dir.h) -- is an input no output of the call may replace. Each value is
// (keyword, value, whether the call uses it as a default).
struct KeywordValue {
  std::string key, value;
  bool is_default = false;
};
std::vector<NamedPath> inputs_named(const std::vector<KeywordValue>& values) {
  std::vector<NamedPath> out;
  for (const KeywordValue& v : values)
    for (NamedPath& f : files_named_by_value(v.key + "=", v.value, v.is_default)) out.push_back(std::move(f));
  return out;
}

// The trace argument: a path (read with the load options given) or a moesim.Trace (its own options).
void trace_argument(const py::object& t, const traces::LoadOptions& given, std::string& path,
                    traces::LoadOptions& load, std::shared_ptr<const traces::Trace>& loaded) {
  if (py::isinstance<PyTrace>(t)) {
    const auto& pt = t.cast<const PyTrace&>();
    if (given.format != "auto" || !given.fields.empty() || !given.model.empty())
      throw UsageError(
          "format, fields and model belong to Trace.load when the trace is a loaded moesim.Trace");
    path = pt.path;
    load = pt.load;
    loaded = pt.trace;
    return;
  }
  path = t.cast<std::string>();  // the package has made a path of it
  load = given;
}

void bind_errors(py::module_& m) {
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<UsageError> usage(m, "UsageError", error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UsageError& e) {
      usage(e.what());
    } catch (const Error& e) {
      error(e.what());
    }
  });
}

void bind_trace(py::module_& m) {
  py::class_<PyTrace>(m, "Trace", "A routing trace loaded once (moesim.Trace.load), reused by replay and run")
      .def_static("_load",
                  [](const std::string& path, const std::string& format, const std::string& fields,
                     const std::string& model, const std::string& token_from, uint32_t layer_base,
                     const std::vector<std::string>& where, bool skip_warmup, bool drop_duplicates,
                     const std::string& delimiter) {
                    PyTrace t{nullptr, path, {}};
                    t.load = {.format = format,
                              .fields = fields,
                              .model = model,
                              .token_from = token_from,
                              .layer_base = layer_base,
                              .where = where,
                              .skip_warmup = skip_warmup,
                              .drop_duplicates = drop_duplicates,
                              .delimiter = delimiter};
                    t.trace = call_released([&] {
                      return std::make_shared<const traces::Trace>(traces::load_trace(path, t.load));
                    });
                    return t;
                  })
      .def_property_readonly("path", [](const PyTrace& t) { return t.path; })
      .def_property_readonly("model", [](const PyTrace& t) { return t.trace->info().model; })
      .def_property_readonly("layers", [](const PyTrace& t) { return t.trace->info().layers; })
      .def_property_readonly("experts", [](const PyTrace& t) { return t.trace->info().experts; })
      .def_property_readonly("top_k", [](const PyTrace& t) { return t.trace->info().top_k; })
      .def_property_readonly("records", [](const PyTrace& t) { return t.trace->records(); })
      .def_property_readonly("sequences", [](const PyTrace& t) { return t.trace->sequence_ids().size(); })
      .def(
          "summary",
          [](const PyTrace& t) {
            const std::string text = call_released(
                [&] { return harness::describe_trace(*t.trace, t.path, t.load).summary.dump(); });
            return json_loads(text);
          },
          "The trace's description, as `moesim trace info --json` gives it");
}

py::object replay(const py::object& trace, const std::vector<std::string>& policy,
                  const std::vector<std::string>& budget, const std::string& scope, uint32_t batch,
                  unsigned jobs, const std::vector<std::string>& routing, bool lifetime,
                  const std::vector<std::string>& prefetch, uint64_t seed, uint32_t oracle_passes,
                  const std::string& format, const std::string& fields, const std::string& model,
                  const py::object& progress, bool mrc, double mrc_sample, uint32_t mrc_salts) {
  harness::ReplayArgs a;
  a.mrc = mrc;
  a.mrc_sample = mrc_sample;
  a.mrc_salts = mrc_salts;
  traces::LoadOptions given;
  given.format = format;
  given.fields = fields;
  given.model = model;
  trace_argument(trace, given, a.trace, a.load, a.loaded);
  a.policies = policy;
  a.budgets = budget;
  a.scope = scope;
  a.batch = batch;
  a.threads = jobs;
  a.routing = routing;
  a.lifetime = lifetime;
  a.prefetch = prefetch;
  a.seed = seed;
  a.oracle_passes = oracle_passes;
  a.json = true;
  return json_loads(call_released([&] { return harness::replay_output(a); }, progress));
}

template <typename T>
py::array_t<T> array(const std::vector<T>& v) {
  return py::array_t<T>(static_cast<py::ssize_t>(v.size()), v.data());
}

// A call's keyword arguments as the package passes them (a dict of all of them, checked and converted to the
// C++ fields' types; None where not given).
struct KeywordOptions {
  py::dict kw;
  // Sets `field` when `key` is given and not None.
  template <typename T>
  void take(const char* key, T& field) const {
    if (kw.contains(key) && !kw[key].is_none()) field = kw[key].cast<T>();
  }
  // format=, fields= and model=: how a trace given as a path is read.
  traces::LoadOptions load() const {
    traces::LoadOptions l;
    take("format", l.format);
    take("fields", l.fields);
    take("model", l.model);
    return l;
  }
  // A list option, as the package passes it (a list of str).
  std::vector<std::string> strings(const char* key) const {
    std::vector<std::string> v;
    take(key, v);
    return v;
  }
  py::object progress() const { return kw.contains("progress") ? py::object(kw["progress"]) : py::none(); }
};

// `moesim run --json`'s dict and the timings as numpy arrays (see harness/run_outcome.h).
py::tuple run(const py::object& trace, py::dict kw) {
  harness::RunArgs a;
  const KeywordOptions options{kw};
  const auto take = [&options](const char* key, auto& field) { options.take(key, field); };
  trace_argument(trace, options.load(), a.trace, a.load, a.loaded);
  if (kw.contains("system") && !kw["system"].is_none())  // parsed here, once, as the command line's --system
    a.system = harness::parse_system_option(kw["system"].cast<std::string>());
  take("hw", a.hw);
  take("scope", a.scope);
  take("routing", a.routing);
  take("scheduling", a.scheduling);
  take("prefetch", a.prefetch);
  take("host_budget", a.host_budget);
  take("recover_on", a.recover_on);
  take("compute_on", a.compute_on);
  take("pools", a.pools);
  take("store", a.store);
  take("delta", a.delta);
  take("ratio", a.ratio);
  take("grid", a.grid);
  take("seed", a.seed);
  take("batch", a.batch);
  take("io_depth", a.io_depth);
  take("io", a.io);
  take("workers", a.workers);
  take("force", a.force);
  take("allow_overcommit", a.allow_overcommit);
  take("dense", a.dense);
  take("timeline", a.timeline);
  take("warm", a.warm);
  take("warm_from", a.warm_from);
  if (kw.contains("shards") && !kw["shards"].is_none()) {
    a.shards = kw["shards"].cast<uint32_t>();
    a.shards_given = true;
  }
  if (kw.contains("timeline_steps") && !kw["timeline_steps"].is_none()) {
    a.timeline_steps = kw["timeline_steps"].cast<std::string>();
    a.timeline_steps_given = true;
  }
  a.policies = options.strings("policy");
  a.policy_given = !a.policies.empty();
  a.budgets = options.strings("budget");
  a.json = true;
  harness::RunOutcome o;
  const bool hw_default = !kw.contains("hw") || kw["hw"].is_none();  // read with the GIL held
  const std::string text = call_released(
      [&] {
        // The command line's rule (cli/io_guard.h): the timeline never replaces one of the run's inputs.
        std::vector<KeywordValue> named = {
            {"trace", a.trace},        {"hw", a.hw, hw_default},     {"model", a.load.model},
            {"store", a.store},        {"system", a.system.text()},  {"routing", a.routing},
            {"prefetch", a.prefetch},  {"scheduling", a.scheduling}, {"profile_trace", a.profile_trace},
            {"warm_from", a.warm_from}};
        for (const std::string& p : a.policies) named.push_back({"policy", p});
        refuse_outputs_over_inputs({{a.timeline, "timeline="}}, inputs_named(named));
        const DeclaredOutputs declared({{a.timeline, "timeline="}});
        o = harness::run_outcome(a);
        return harness::run_outcome_json(a, o).dump();
      },
      options.progress());
  py::dict arrays;
  arrays["step_phase"] = array(o.step_phase);
  arrays["step_s"] = array(o.step_s);
  arrays["invocation_layer"] = array(o.invocation_layer);
  arrays["invocation_phase"] = array(o.invocation_phase);
  arrays["invocation_s"] = array(o.invocation_s);
  return py::make_tuple(json_loads(text), arrays);
}

py::object cluster(const std::string& servers, const std::string& placement, const std::string& migrate_every,
                   const std::string& duration, uint64_t seed, uint64_t profile_tokens,
                   const std::string& draw, const std::string& bucket, const std::string& timeline,
                   const std::string& timeline_window, const std::string& system,
                   const py::object& progress) {
  harness::ClusterArgs a;
  a.spec = servers;
  if (!system.empty()) a.system = harness::parse_system_option(system);  // parsed here, as --system is
  a.placement = placement;
  a.migrate_every = migrate_every;
  a.duration = duration;
  a.seed = seed;
  a.profile_tokens = profile_tokens;
  a.draw = draw;
  a.bucket = bucket;
  a.timeline = timeline;
  a.timeline_window = timeline_window;
  a.json = true;
  return json_loads(call_released(
      [&] {
        refuse_outputs_over_inputs({{a.timeline, "timeline="}}, {{a.spec, "servers"}});
        const DeclaredOutputs declared({{a.timeline, "timeline="}});
        return harness::cluster_output(a);
      },
      progress));
}

// `moesim compare --json`'s dict and the --csv table's text (the package makes it a DataFrame).
py::tuple compare(const py::object& trace, py::dict kw) {
  harness::CompareArgs a;
  const KeywordOptions options{kw};
  std::shared_ptr<const traces::Trace> loaded;  // compare reads the trace itself: a Trace gives its path
  trace_argument(trace, options.load(), a.trace, a.load, loaded);
  a.policies = options.strings("policy");
  a.budgets = options.strings("budget");
  a.routing = options.strings("routing");
  a.prefetch = options.strings("prefetch");
  a.systems = options.strings("system");
  options.take("hw", a.hw);
  options.take("scope", a.scope);
  options.take("batch", a.batch);
  options.take("io_depth", a.io_depth);
  options.take("jobs", a.threads);
  options.take("force", a.force);
  options.take("allow_overcommit", a.allow_overcommit);
  a.json = true;
  const auto r = call_released(
      [&] {
        harness::CompareResult c = harness::compare_result(a);
        return std::make_pair(c.doc.dump(), std::move(c.csv));
      },
      options.progress());
  return py::make_tuple(json_loads(r.first), r.second);
}

// `moesim plan --json`'s dict; `trace` None plans from `inclusion` alone.
py::object plan(const py::object& trace, py::dict kw) {
  harness::PlanArgs a;
  const KeywordOptions options{kw};
  const auto take = [&options](const char* key, auto& field) { options.take(key, field); };
  const traces::LoadOptions given = options.load();
  if (trace.is_none()) {
    a.load = given;
  } else {
    std::shared_ptr<const traces::Trace> loaded;  // the planner reads the trace itself
    trace_argument(trace, given, a.trace, a.load, loaded);
  }
  take("hw", a.hw);
  take("budget", a.budget);
  take("pools", a.pools);
  take("store", a.store);
  take("inclusion", a.inclusion);
  take("phase", a.phase);
  take("grid", a.grid);
  take("batch", a.batch);
  take("workers", a.threads);
  take("runners_up", a.runners_up);
  take("force", a.force);
  take("allow_overcommit", a.allow_overcommit);
  if (kw.contains("ratio") && !kw["ratio"].is_none()) a.ratio = kw["ratio"].cast<double>();
  if (kw.contains("shards") && !kw["shards"].is_none()) a.shards = kw["shards"].cast<uint32_t>();
  a.json = true;
  return json_loads(call_released([&] { return harness::plan_output(a); }));
}

// `moesim sweep --json -o OUTPUT`'s summary; `spec` is a file or the spec's JSON text (spec_json true). The
// points run through the CLI's own option parsing (cli/run_command.h), as `moesim sweep` runs them.
py::object sweep(const std::string& spec, bool spec_json, const std::string& output, unsigned jobs,
                 const std::string& shard, bool resume, bool force, const py::object& progress,
                 bool dry_run) {
  harness::SweepArgs a;
  a.spec = spec_json ? "spec" : spec;
  if (spec_json) a.spec_json = Json::parse(spec);
  a.out = output;
  a.jobs = jobs;
  a.shard = shard;
  a.resume = resume;
  a.force = force;
  a.report = false;
  a.dry_run = dry_run;
  const harness::SweepOutcome o = call_released(
      [&] {
        if (a.out.empty() && !dry_run) throw UsageError("sweep: an output folder (output=) is needed");
        if (!spec_json && !dry_run) refuse_outputs_over_inputs({{a.out, "output="}}, {{a.spec, "spec"}});
        return harness::run_sweep(a, cli::run_command, cli::command_line_inputs, cli::check_command);
      },
      progress);
  if (!o.error.empty()) throw Error(o.error);
  return json_loads(o.summary.dump());
}

void bind_commands(py::module_& m) {
  m.def("_replay", &replay);
  m.def("_compare", &compare, py::arg("trace"), py::arg("options"));
  m.def("_plan", &plan, py::arg("trace"), py::arg("options"));
  m.def("_sweep", &sweep, py::arg("spec"), py::arg("spec_json"), py::arg("output"), py::arg("jobs"),
        py::arg("shard"), py::arg("resume"), py::arg("force"), py::arg("progress"),
        py::arg("dry_run") = false);
  m.def("_run", &run, py::arg("trace"), py::arg("options"));
  m.def("_cluster", &cluster);
  m.def(
      "policies",
      []() -> py::object {
        const py::object doc = json_loads(call_released([] { return harness::policies_output(true); }));
        return doc["policies"];
      },
      "Every registry (eviction, routing, ...): kind -> [{name, description, params}], as `moesim policies "
      "--json`");
  m.def("_register_eviction", &python::register_eviction, py::arg("name"), py::arg("cls"),
        py::arg("description"), py::arg("next_use"));
  m.def("_register_routing", &python::register_routing, py::arg("name"), py::arg("cls"),
        py::arg("description"), py::arg("cache_dependent"));
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "moesim's C++ library (the package moesim wraps it)";
  g_main_thread = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  bind_errors(m);
  bind_trace(m);
  bind_commands(m);
}
