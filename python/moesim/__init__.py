"""moesim from Python: the simulator's commands called in process over the same C++ library as the CLI.

Results are dicts with the keys of the CLI's JSON (docs/cli-json.md); replay_frame gives a pandas DataFrame and
run's result carries its per-step and per-invocation timings as numpy arrays. Eviction policies can be written in
Python (EvictionPolicy, register_eviction). docs/python.md describes the API.
"""

import os

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

__all__ = ["Error", "UsageError", "Trace", "policies", "replay", "replay_frame", "run", "RunResult", "cluster",
           "EvictionPolicy", "register_eviction"]


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
        pools="", shards=None, delta=0, store="", ratio=0.0, grid=0.05, seed=1, io_depth=1, workers=0, force=False,
        timeline="", timeline_steps=None, format="auto", fields="", model=""):
    """`moesim run --json`: one simulated serving run; keyword arguments are the CLI's options."""
    options = dict(locals())
    del options["trace"]
    return RunResult(*_core._run(trace, options))


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
