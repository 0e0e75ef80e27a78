"""moesim from Python: the simulator's commands called in process over the same C++ library as the CLI.

Results are dicts with the keys of the CLI's JSON (docs/cli-json.md); replay_frame gives a pandas DataFrame,
compare's and sweep's results carry the CLI's CSV as one, and run's result carries its per-step and
per-invocation timings as numpy arrays. run, replay, compare, sweep and cluster take progress=callable(done,
total, unit). Eviction policies can be written in
Python (EvictionPolicy, register_eviction). docs/python.md describes the API.

Keyword arguments take their natural Python types (ints and floats for numbers and budgets, str or os.PathLike
for paths, lists for multi-valued options; moesim._args checks them): a wrong type raises TypeError and an
impossible value ValueError, each naming the argument. Ctrl-C stops a running call within a second and raises
KeyboardInterrupt.
"""

import io
import os
import shutil
import tempfile

# An installed package (setup.py) carries the presets and bundled traces; a build tree's module reads the source
# tree's data/ (or $MOESIM_DATA).
_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
if os.path.isdir(_DATA):
    os.environ.setdefault("MOESIM_DATA", _DATA)

from ._core import Error, Trace, UsageError, policies
from . import _args, _core

# Tracebacks and reprs name the package users import, not its extension module.
for _name in ("Error", "UsageError", "Trace"):
    getattr(_core, _name).__module__ = __name__

__all__ = ["Error", "UsageError", "Trace", "policies", "replay", "replay_frame", "run", "RunResult", "compare",
           "CompareResult", "plan", "sweep", "SweepResult", "cluster", "EvictionPolicy", "register_eviction",
           "RoutingPolicy", "register_routing"]


def _trace(trace):
    """The trace argument: a loaded Trace, or a path."""
    return trace if isinstance(trace, Trace) else _args.path("trace", trace)


def _load(path, *, format="auto", fields="", model="", token_from="column", layer_base=0, where=None,
          skip_warmup=False, drop_duplicates=False, delimiter=""):
    """Loads a routing trace once, to be replayed or run many times (the import options of every command)."""
    a = _args
    return Trace._load(a.path("path", path), a.text("format", format), a.text("fields", fields),
                       a.path("model", model), a.text("token_from", token_from), a.integer("layer_base", layer_base),
                       a.strings("where", where), a.flag("skip_warmup", skip_warmup),
                       a.flag("drop_duplicates", drop_duplicates), a.text("delimiter", delimiter))


Trace.load = staticmethod(_load)


def replay(trace, *, policy="lru", budget=None, scope="global", batch=1, jobs=1, routing=None, lifetime=False,
           prefetch=None, seed=1, oracle_passes=4, format="auto", fields="", model="", progress=None, mrc=False,
           mrc_sample=0.1, mrc_salts=3):
    """`moesim replay --json`: hit rates of eviction policies on a trace, as a dict; with mrc=True their
    miss-ratio curves (`moesim replay --mrc`: exact stack distances for LRU, SHARDS sampling for the others,
    mrc_sample of the keys in each of mrc_salts samples)."""
    a = _args
    return _core._replay(_trace(trace), a.strings("policy", policy), a.strings("budget", budget, a.budget),
                         a.text("scope", scope), a.integer("batch", batch), a.integer("jobs", jobs),
                         a.strings("routing", routing), a.flag("lifetime", lifetime), a.strings("prefetch", prefetch),
                         a.integer("seed", seed, 0, a.U64), a.integer("oracle_passes", oracle_passes),
                         a.text("format", format), a.text("fields", fields), a.path("model", model), progress,
                         a.flag("mrc", mrc), a.real("mrc_sample", mrc_sample), a.integer("mrc_salts", mrc_salts))


def replay_frame(trace, **options):
    """replay(trace, **options)'s results as a pandas DataFrame, one row per result (nested keys joined by '.').
    With mrc=True (a miss-ratio curve, `moesim replay --mrc`): one row per point of each policy's curve, with the
    curve's method ("stack-distance": exact, or "shards": estimated) and exactness on every row."""
    import pandas

    doc = replay(trace, **options)
    if "mrc" in doc:
        return pandas.json_normalize(doc["mrc"], record_path="points", meta=["method", "exact"])
    return pandas.json_normalize(doc["results"])


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
        pools="", shards=None, delta=0, store="", ratio=None, grid=0.05, seed=1, io_depth=1, io="direct", workers=0, force=False,
        allow_overcommit=False, dense="pinned", timeline="", timeline_steps=None, format="auto", fields="", model="", progress=None,
        warm=False, warm_from=""):
    """`moesim run --json`: one simulated serving run; keyword arguments are the CLI's options (warm, warm_from:
    --warm, --warm-from)."""
    a = _args
    options = dict(
        system=a.text("system", system), policy=a.strings("policy", policy),
        budget=a.strings("budget", budget, a.budget), hw=a.path("hw", hw), scope=a.text("scope", scope),
        batch=a.integer("batch", batch), routing=a.text("routing", routing),
        scheduling=a.text("scheduling", scheduling), prefetch=a.text("prefetch", prefetch),
        host_budget=a.size("host_budget", host_budget, 0) if host_budget != "" else "",
        recover_on=a.text("recover_on", recover_on), compute_on=a.text("compute_on", compute_on),
        pools=a.text("pools", pools), shards=None if shards is None else a.integer("shards", shards),
        delta=a.integer("delta", delta), store=a.path("store", store), ratio=None if ratio is None else a.real("ratio", ratio),
        grid=a.real("grid", grid), seed=a.integer("seed", seed, 0, a.U64), io_depth=a.integer("io_depth", io_depth),
        io=a.text("io", io), workers=a.integer("workers", workers), force=a.flag("force", force),
        allow_overcommit=a.flag("allow_overcommit", allow_overcommit), dense=a.text("dense", dense),
        timeline=a.path("timeline", timeline),
        timeline_steps=None if timeline_steps is None else a.text("timeline_steps", timeline_steps),
        format=a.text("format", format), fields=a.text("fields", fields), model=a.path("model", model),
        progress=progress, warm=a.flag("warm", warm), warm_from=a.path("warm_from", warm_from))
    return RunResult(*_core._run(_trace(trace), options))


class CompareResult(dict):
    """The dict of `moesim compare --json`, with .table: the table `compare --csv` writes, as a pandas DataFrame
    (one row per cell, the CSV's columns in its order)."""

    def __init__(self, doc, csv):
        super().__init__(doc)
        import pandas

        self.table = pandas.read_csv(io.StringIO(csv))


def compare(trace, *, policy=None, budget=None, hw="jetson-agx-orin-64gb", scope="global,layer", batch=1, io_depth=1,
            jobs=1, routing=None, prefetch=None, force=False, allow_overcommit=False, format="auto", fields="", model="",
            progress=None, system=None):
    """`moesim compare --json`: eviction policies x routing x prefetch x budgets x scopes, each cell a simulated
    `run --system offload`; policy, budget, scope, routing and prefetch are lists or the CLI's comma-separated
    form. system (a list, or the CLI's form "offload:policy=lru,zipmoe") compares systems instead
    (`compare --system`): each system x policy x budget x scope a full simulated run; rows carry `system`."""
    a = _args
    options = dict(
        system=a.strings("system", system),
        policy=a.strings("policy", policy), budget=a.strings("budget", budget, a.budget), hw=a.path("hw", hw),
        scope=a.joined("scope", scope), batch=a.integer("batch", batch), io_depth=a.integer("io_depth", io_depth),
        jobs=a.integer("jobs", jobs), routing=a.strings("routing", routing), prefetch=a.strings("prefetch", prefetch),
        force=a.flag("force", force), allow_overcommit=a.flag("allow_overcommit", allow_overcommit),
        format=a.text("format", format), fields=a.text("fields", fields), model=a.path("model", model),
        progress=progress)
    return CompareResult(*_core._compare(_trace(trace), options))


def plan(trace=None, *, budget=None, model="", hw="jetson-agx-orin-64gb", pools="F,C,S,E", grid=0.05, batch=1,
         workers=0, shards=None, ratio=None, store="", phase="decode", inclusion="", runners_up=5, force=False,
         allow_overcommit=False, format="auto", fields=""):
    """`moesim plan --json`: ZipMoE's cache pools for a trace (or inclusion=), model and budget, as a dict."""
    a = _args
    options = dict(
        budget=None if budget is None else a.budget("budget", budget), model=a.path("model", model),
        hw=a.path("hw", hw), pools=a.text("pools", pools), grid=a.real("grid", grid), batch=a.integer("batch", batch),
        workers=a.integer("workers", workers), shards=None if shards is None else a.integer("shards", shards),
        ratio=None if ratio is None else a.real("ratio", ratio), store=a.path("store", store),
        phase=a.text("phase", phase), inclusion=a.path("inclusion", inclusion),
        runners_up=a.integer("runners_up", runners_up), force=a.flag("force", force),
        allow_overcommit=a.flag("allow_overcommit", allow_overcommit), format=a.text("format", format),
        fields=a.text("fields", fields))
    return _core._plan(None if trace is None else _trace(trace), options)


class SweepResult(dict):
    """The summary of `moesim sweep --json`, with .results: results.csv as a pandas DataFrame (its columns and
    values, as pandas.read_csv reads the file)."""

    def __init__(self, doc, results):
        super().__init__(doc)
        self.results = results


def sweep(spec, *, output=None, jobs=0, shard="", resume=False, force=False, progress=None, dry_run=False):
    """`moesim sweep SPEC --json -o OUTPUT`: spec is a spec file or the spec as a dict (docs/sweep.md; a dict's
    relative paths are relative to the current directory). output=None runs it in a temporary folder, removed
    afterwards (the summary's results_csv and manifest are then None) unless the sweep fails naming a file in
    it: the folder is then kept, and the error says so. dry_run=True writes nothing and returns the dry run's
    summary (a dict: points per shard and command, timed points, estimate_s, slurm_time), as `--dry-run
    --json` prints it."""
    import pandas

    a = _args
    if isinstance(spec, dict):
        text, is_json = a.spec_json("spec", spec), True
    else:
        text, is_json = a.path("spec", spec), False
    rest = (a.integer("jobs", jobs), a.text("shard", shard), a.flag("resume", resume), a.flag("force", force),
            progress)
    if a.flag("dry_run", dry_run):
        return _core._sweep(text, is_json, "" if output is None else a.path("output", output), *rest, True)
    if output is not None:
        doc = _core._sweep(text, is_json, a.path("output", output), *rest)
        return SweepResult(doc, pandas.read_csv(doc["results_csv"]))
    d = tempfile.mkdtemp(prefix="moesim-sweep-")
    try:
        doc = _core._sweep(text, is_json, os.path.join(d, "out"), *rest)
        results = pandas.read_csv(doc["results_csv"])
    except Error as e:
        # A message naming the folder (a failed point's manifest) must name one that still exists.
        if d in str(e):
            raise type(e)(f"{e} (output=None: the sweep's temporary folder {d} is kept for its manifest and point "
                          "files; remove it when done)") from None
        shutil.rmtree(d, ignore_errors=True)
        raise
    except BaseException:
        shutil.rmtree(d, ignore_errors=True)
        raise
    shutil.rmtree(d, ignore_errors=True)
    doc["results_csv"] = None
    doc["manifest"] = None
    return SweepResult(doc, results)


def cluster(servers, *, placement="", migrate_every="", duration="30m", seed=1, profile_tokens=1000,
            draw="round-robin", bucket="1m", timeline="", timeline_window="", system="prism", progress=None):
    """`moesim cluster --json`: Prism's edge cluster in simulated time, as a dict; durations are the CLI's text
    ("30m") or seconds; system: the cluster system (--system: prism, which needs a placement, or
    moe-infinity[:redirect=1], which takes none)."""
    a = _args
    return _core._cluster(a.path("servers", servers), a.text("placement", placement),
                          a.seconds("migrate_every", migrate_every) if migrate_every != "" else "",
                          a.seconds("duration", duration), a.integer("seed", seed, 0, a.U64),
                          a.integer("profile_tokens", profile_tokens, 0, a.U64), a.text("draw", draw),
                          a.seconds("bucket", bucket), a.path("timeline", timeline),
                          a.text("timeline_window", timeline_window), a.text("system", system), progress)


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
    _core._register_eviction(_args.text("name", name), cls, _args.text("description", description),
                             _args.flag("next_use", next_use))


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
    _core._register_routing(_args.text("name", name), cls, _args.text("description", description),
                            _args.flag("cache_dependent", cache_dependent))
