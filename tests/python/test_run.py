import moesim
import numpy
import pytest

from conftest import QWEN, without_wall_clock


@pytest.mark.parametrize("system,budget", [("offload", "4GiB"), ("zipmoe", "6GiB")])
def test_run_equals_the_cli_json(cli_json, system, budget):
    got = moesim.run(QWEN, system=system, budget=budget, batch=2, model="qwen3-30b-a3b")
    want = cli_json("run", "--trace", QWEN, "--system", system, "--budget", budget, "--batch", "2", "--model",
                    "qwen3-30b-a3b")
    assert without_wall_clock(got) == want


def test_run_gives_the_per_token_latencies_its_tpot_summarizes():
    r = moesim.run(moesim.Trace.load(QWEN), policy="lfu", budget="4GiB")
    tpot = r["metrics"]["tpot"]
    assert isinstance(r.tpot_s, numpy.ndarray)
    assert len(r.tpot_s) == tpot["count"]
    assert r.tpot_s.max() == tpot["max_s"]
    assert len(r.step_s) == r["metrics"]["steps"]
    assert len(r.invocation_s) == len(r.invocation_layer) == r["metrics"]["layer_makespan"]["count"]
    assert r.invocation_s.max() == r["metrics"]["layer_makespan"]["max_s"]


def test_a_warm_run_equals_the_cli_json(cli_json):
    got = moesim.run(QWEN, budget="4GiB", warm=True)
    assert without_wall_clock(got) == cli_json("run", "--trace", QWEN, "--budget", "4GiB", "--warm")
    assert got["header"]["config"]["warm"].startswith("--warm")
    assert got["metrics"]["cache"]["hit_rate"] > moesim.run(QWEN, budget="4GiB")["metrics"]["cache"]["hit_rate"]
    with pytest.raises(TypeError):
        moesim.run(QWEN, budget="4GiB", warm="yes")
    with pytest.raises(moesim.UsageError):
        moesim.run(QWEN, budget="4GiB", warm=True, warm_from=QWEN)


def test_host_budget_zero_means_no_host_tier():
    none = moesim.run(QWEN, hw="desktop-rtx4090", budget="2GiB")
    for zero in (0, "0", "0GiB"):
        assert without_wall_clock(moesim.run(QWEN, hw="desktop-rtx4090", budget="2GiB", host_budget=zero))["metrics"] \
            == without_wall_clock(none)["metrics"]
    with pytest.raises(ValueError):
        moesim.run(QWEN, hw="desktop-rtx4090", budget="2GiB", host_budget=-1)
