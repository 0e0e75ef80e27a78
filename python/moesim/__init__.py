"""moesim from Python: the simulator's commands called in process over the same C++ library as the CLI.

Results are dicts with the keys of the CLI's JSON (docs/cli-json.md); replay_frame gives a pandas DataFrame,
compare's and sweep's results carry the CLI's CSV as one, and run's result carries its per-step and
per-invocation timings as numpy arrays. run, replay, compare, sweep and cluster take progress=callable(done,
total, unit). Eviction policies can be written in
Python (EvictionPolicy, register_eviction). docs/python.md describes the API.
"""

import io
import json
import os
import tempfile

# An installed package (setup.py) carries the presets and bundled traces; a build tree's module reads the source
# tree's data/ (or $MOESIM_DATA).
_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
if os.path.isdir(_DATA):
    os.environ.setdefault("MOESIM_DATA", _DATA)

from ._core import Error, Trace, UsageError, cluster, policies, replay
from . import _core

# Tracebacks and reprs name the package users import, not its extension module.
for _name in ("Error", "UsageError", "Trace"):
    getattr(_core, _name).__module__ = __name__

__all__ = ["Error", "UsageError", "Trace", "policies", "replay", "replay_frame", "run", "RunResult", "compare",
           "CompareResult", "plan", "sweep", "SweepResult", "cluster", "EvictionPolicy", "register_eviction",
           "RoutingPolicy", "register_routing"]


def replay_frame(trace, **options):
    """replay(trace, **options)'s results as a pandas DataFrame, one row per result (nested keys joined by '.')."""
    import pandas

    return pandas.json_normalize(replay(trace, **options)["results"])


class RunResult(dict):
    """The dict of `moesim run --json`, with the run's timings as numpy arrays:
    step_phase, step_s (every workload step: 0 prefill / 1 decode, duration in s), tpot_s (the decode steps'
    durations: the per-token latencies the TPOT statistics summarize), invocation_layer, invocation_phase and
    invocation_s (every layer invocation's layer, phase and makespan in s)."""

    def __init__(self, doc, arrays):
        super().__init__(doc)
        for k, v in arrays.items():
            setattr(self, k, v)
        self.tpot_s = self.step_s[self.step_phase == 1]


def run(trace, *, system="offload", policy=None, budget=None, hw="jetson-agx-orin-64gb", scope="global", batch=1,
        routing="identity", scheduling="", prefetch="none", host_budget="", recover_on="gpu", compute_on="gpu",
        pools="", shards=None, delta=0, store="", ratio=0.0, grid=0.05, seed=1, io_depth=1, io="direct", workers=0, force=False,
        allow_overcommit=False, dense="pinned", timeline="", timeline_steps=None, format="auto", fields="", model="", progress=None):
    """`moesim run --json`: one simulated serving run; keyword arguments are the CLI's options."""
    options = dict(locals())
    del options["trace"]
    return RunResult(*_core._run(trace, options))


class CompareResult(dict):
    """The dict of `moesim compare --json`, with .table: the table `compare --csv` writes, as a pandas DataFrame
    (one row per cell, the CSV's columns in its order)."""

    def __init__(self, doc, csv):
        super().__init__(doc)
        import pandas

        self.table = pandas.read_csv(io.StringIO(csv))


def compare(trace, *, policy=None, budget=None, hw="jetson-agx-orin-64gb", scope="global,layer", batch=1, io_depth=1,
            jobs=1, routing=None, prefetch=None, force=False, allow_overcommit=False, format="auto", fields="", model="",
            progress=None):
    """`moesim compare --json`: eviction policies x routing x prefetch x budgets x scopes, each cell a simulated
    `run --system offload`; policy, budget, routing and prefetch are lists or the CLI's comma-separated form."""
    options = dict(locals())
    del options["trace"]
    return CompareResult(*_core._compare(trace, options))


def plan(trace=None, *, budget=None, model="", hw="jetson-agx-orin-64gb", pools="F,C,S,E", grid=0.05, batch=1,
         workers=0, shards=None, ratio=None, store="", phase="decode", inclusion="", runners_up=5, force=False,
         allow_overcommit=False, format="auto", fields=""):
    """`moesim plan --json`: ZipMoE's cache pools for a trace (or inclusion=), model and budget, as a dict."""
    options = dict(locals())
    del options["trace"]
    return _core._plan(trace, options)


class SweepResult(dict):
    """The summary of `moesim sweep --json`, with .results: results.csv as a pandas DataFrame (its columns and
    values, as pandas.read_csv reads the file)."""

    def __init__(self, doc, results):
        super().__init__(doc)
        self.results = results


def sweep(spec, *, output=None, jobs=0, shard="", resume=False, force=False, progress=None):
    """`moesim sweep SPEC --json -o OUTPUT`: spec is a spec file or the spec as a dict (docs/sweep.md; a dict's
    relative paths are relative to the current directory). output=None runs it in a temporary folder, removed
    afterwards (the summary's results_csv and manifest are then None)."""
    import pandas

    if isinstance(spec, dict):
        text, is_json = json.dumps(spec), True
    else:
        text, is_json = os.fspath(spec), False
    if output is not None:
        doc = _core._sweep(text, is_json, os.fspath(output), jobs, shard, resume, force, progress)
        return SweepResult(doc, pandas.read_csv(doc["results_csv"]))
    with tempfile.TemporaryDirectory(prefix="moesim-sweep-") as d:
        doc = _core._sweep(text, is_json, os.path.join(d, "out"), jobs, shard, resume, force, progress)
        results = pandas.read_csv(doc["results_csv"])
    doc["results_csv"] = None
    doc["manifest"] = None
    return SweepResult(doc, results)


class EvictionPolicy:
    """Base class of eviction policies written in Python (core/eviction_policy.h has the contract).

    The cache calls, per layer invocation of partition `part` (0 with scope "global", the layer with "layer"):
    begin_invocation(part); on_hit(key, part, next_use) or on_admit(key, part, next_use) for each unique key it
    looks up; on_refresh(key, part) for a key touched again in the invocation; evict(part) while over capacity;
    end_invocation(part). evict returns a resident key of `part` and forgets it, or None when every resident key
    is in use (looked up since begin_invocation); after end_invocation it may return any resident key.
    key = layer * experts + expert. `config` (a dict: layers, experts, top_k, scope, partitions, keys, capacity,
    key_weight, weights_are_bytes, expert_bytes, next_use_available) describes the cache.
    """

    def __init__(self, config):
        self.config = config

    def begin_invocation(self, part):
        pass

    def on_hit(self, key, part, next_use):
        pass

    def on_admit(self, key, part, next_use):
        pass

    def on_refresh(self, key, part):
        pass

    def evict(self, part):
        raise NotImplementedError("an EvictionPolicy must implement evict(part)")

    def end_invocation(self, part):
        pass


def register_eviction(name, cls, description="", next_use=False):
    """Registers `cls` (a subclass of EvictionPolicy, built as cls(config) per cache) as eviction policy `name`
    for replay and run. Registering a name again replaces its class; next_use=True when it reads next uses."""
    if not (isinstance(cls, type) and issubclass(cls, EvictionPolicy)):
        raise TypeError("register_eviction: cls must be a subclass of moesim.EvictionPolicy")
    _core._register_eviction(name, cls, description, next_use)


class RoutingPolicy:
    """Base class of routing-rewrite policies written in Python (core/routing.h has the contract).

    route(layer, decode, selection, weights, logits, cached) is called per layer invocation: `selection` (a numpy
    uint16 array, tokens x top_k, each row the token's experts in rank order) is to be rewritten in place: keep an
    expert in its slot, put a replacement in the slot of the expert it displaces, 0xFFFF empties a slot, and a
    token never holds an expert twice. `weights` (tokens x top_k) and `logits` (tokens x experts) are float32
    arrays, None when the trace has none; `cached` (bool, experts) says which experts of the layer are resident.
    counters() returns the policy's own counters (a JSON-able dict). `setup` (a dict: layers, experts, top_k,
    has_weights, has_logits) describes the run.
    """

    def __init__(self, setup):
        self.setup = setup

    def route(self, layer, decode, selection, weights, logits, cached):
        raise NotImplementedError("a RoutingPolicy must implement route(...)")

    def counters(self):
        return {}


def register_routing(name, cls, description="", cache_dependent=True):
    """Registers `cls` (a subclass of RoutingPolicy, built as cls(setup) per run) as routing policy `name` for
    replay and run. cache_dependent=False when the rewrite does not read `cached` (oracle caches then see it)."""
    if not (isinstance(cls, type) and issubclass(cls, RoutingPolicy)):
        raise TypeError("register_routing: cls must be a subclass of moesim.RoutingPolicy")
    _core._register_routing(name, cls, description, cache_dependent)
