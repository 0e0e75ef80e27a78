"""Eviction policies written in Python run in replay and run like C++ ones (python/py_eviction.h)."""

import collections

import moesim
import pytest

from conftest import GPT_OSS, QWEN


class PyLru(moesim.EvictionPolicy):
    """LRU as policies/eviction/lru.cpp: most recent first per partition; evict the least recent unless in use."""

    def __init__(self, config):
        super().__init__(config)
        self.order = [collections.OrderedDict() for _ in range(config["partitions"])]
        self.in_use = set()

    def begin_invocation(self, part):
        self.in_use.clear()

    def on_hit(self, key, part, next_use):
        self.order[part].move_to_end(key)
        self.in_use.add(key)

    def on_admit(self, key, part, next_use):
        self.order[part][key] = None
        self.in_use.add(key)

    def on_refresh(self, key, part):
        self.order[part].move_to_end(key)

    def evict(self, part):
        if not self.order[part]:
            return None
        victim = next(iter(self.order[part]))
        if victim in self.in_use:
            return None
        del self.order[part][victim]
        return victim

    def end_invocation(self, part):
        self.in_use.clear()


moesim.register_eviction("py-lru", PyLru, "LRU written in Python (tests)")

COUNTERS = ("lookups", "hits", "decode_lookups", "decode_hits", "evictions", "over_capacity_invocations",
            "capacity_experts")


@pytest.mark.parametrize("scope", ["global", "layer"])
@pytest.mark.parametrize("trace", [QWEN, GPT_OSS])
def test_a_python_lru_equals_the_cpp_lru_hit_for_hit(trace, scope):
    budgets = ["8", "16", "3000MiB"]
    got = moesim.replay(trace, policy="py-lru", budget=budgets, scope=scope, jobs=2)["results"]
    want = moesim.replay(trace, policy="lru", budget=budgets, scope=scope)["results"]
    assert [{k: r[k] for k in COUNTERS} for r in got] == [{k: r[k] for k in COUNTERS} for r in want]
    assert all(r["eviction"] == "py-lru" for r in got)


def test_a_python_lru_equals_the_cpp_lru_in_a_run():
    got = moesim.run(QWEN, policy="py-lru", budget="3GiB")["metrics"]
    want = moesim.run(QWEN, policy="lru", budget="3GiB")["metrics"]
    assert got["cache"] == want["cache"]
    assert got["tpot"] == want["tpot"]


class EvictsInUse(moesim.EvictionPolicy):
    def __init__(self, config):
        super().__init__(config)
        self.last = None

    def on_admit(self, key, part, next_use):
        self.last = key

    def evict(self, part):
        return self.last


class Raises(moesim.EvictionPolicy):
    def evict(self, part):
        raise ValueError("no idea")


def test_a_policy_breaking_the_contract_is_an_error_naming_it():
    moesim.register_eviction("py-evicts-in-use", EvictsInUse)
    with pytest.raises(moesim.Error, match="python eviction policy 'py-evicts-in-use': evict\\(0\\) returned key "
                                           "[0-9]+, which is in use"):
        moesim.replay(QWEN, policy="py-evicts-in-use", budget="8")


def test_an_exception_in_a_hook_is_an_error_carrying_it():
    moesim.register_eviction("py-raises", Raises)
    with pytest.raises(moesim.Error, match="python eviction policy 'py-raises': evict: ValueError: no idea"):
        moesim.replay(QWEN, policy="py-raises", budget="8")


def test_registering_a_cpp_name_or_a_non_policy_is_refused():
    with pytest.raises(moesim.UsageError, match="already registered"):
        moesim.register_eviction("lru", PyLru)
    with pytest.raises(moesim.UsageError, match="a name other than 'all'"):
        moesim.register_eviction("py:lru", PyLru)
    with pytest.raises(TypeError):
        moesim.register_eviction("py-int", int)


def test_the_python_policy_is_listed():
    names = [e["name"] for e in moesim.policies()["eviction"]]
    assert "py-lru" in names
