"""Routing-rewrite policies written in Python run in replay and run like C++ ones (python/py_routing.h)."""

import moesim
import pytest

from conftest import QWEN


class PyPrune(moesim.RoutingPolicy):
    """prune:h=3 as policies/routing/prune.cpp: every token keeps its top 2 experts."""

    def route(self, layer, decode, selection, weights, logits, cached):
        assert selection.shape[1] == self.setup["top_k"] and len(cached) == self.setup["experts"]
        assert weights is None or weights.shape == selection.shape
        selection[:, 2:] = 0xFFFF

    def counters(self):
        return {"pruned": True}


class Duplicates(moesim.RoutingPolicy):
    def route(self, layer, decode, selection, weights, logits, cached):
        selection[:, 1] = selection[:, 0]


moesim.register_routing("py-prune", PyPrune, cache_dependent=False)
moesim.register_routing("py-duplicates", Duplicates)

def test_a_python_prune_equals_the_cpp_prune_in_replay():
    got = moesim.replay(QWEN, policy=["lru", "belady"], budget=["8", "16"], routing="py-prune")["results"]
    want = moesim.replay(QWEN, policy=["lru", "belady"], budget=["8", "16"], routing="prune:h=3")["results"]
    assert len(got) == len(want) == 4
    own = ("routing", "routing_policy_counters", "replay_s", "lookups_per_s")
    strip = lambda r: {k: v for k, v in r.items() if k not in own}
    assert [strip(r) for r in got] == [strip(r) for r in want]
    assert all(r["routing"] == "py-prune" and r["routing_policy_counters"] == {"pruned": True} for r in got)


def test_a_python_prune_equals_the_cpp_prune_in_a_run():
    got = moesim.run(QWEN, policy="lru", budget="3GiB", routing="py-prune")["metrics"]
    want = moesim.run(QWEN, policy="lru", budget="3GiB", routing="prune:h=3")["metrics"]
    assert got["cache"] == want["cache"] and got["tpot"] == want["tpot"]
    assert got["routing_deviation"] == want["routing_deviation"]
    assert got["routing_policy_counters"] == {"pruned": True}


def test_a_rewrite_breaking_the_contract_is_an_error():
    with pytest.raises(moesim.Error, match="twice"):
        moesim.replay(QWEN, policy="lru", budget="16", routing="py-duplicates")
