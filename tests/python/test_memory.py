"""The whole device's memory from Python: a budget that does not fit beside the dense weights, KV cache and reserve
is refused as the CLI refuses it (moesim.Error, not a usage error: exit 1), and allow_overcommit runs it and says
so in the run's memory."""

import moesim
import pytest

from conftest import QWEN, run_cli


def test_a_budget_that_does_not_fit_is_refused_with_the_cli_message():
    p = run_cli("-q", "run", QWEN, "--hw", "jetson-orin-nano-8gb", "--budget", "7GiB")
    assert p.returncode == 1
    with pytest.raises(moesim.Error) as e:
        moesim.run(QWEN, hw="jetson-orin-nano-8gb", budget="7GiB")
    assert not isinstance(e.value, moesim.UsageError)
    assert "does not fit in the memory of NVIDIA Jetson Orin Nano 8GB" in str(e.value)
    assert str(e.value) in p.stderr


def test_allow_overcommit_runs_it_and_says_so():
    r = moesim.run(QWEN, hw="jetson-orin-nano-8gb", budget="7GiB", allow_overcommit=True)
    memory = r["header"]["config"]["device_memory"]
    assert memory["overcommitted"] is True
    assert memory["fits"] is False


def test_compare_and_plan_refuse_it_too():
    with pytest.raises(moesim.Error, match="does not fit in the memory of"):
        moesim.compare(QWEN, policy="lru", budget="7GiB", hw="jetson-orin-nano-8gb", scope="global")
    with pytest.raises(moesim.Error, match="does not fit in the memory of"):
        moesim.plan(QWEN, budget="7GiB", model="qwen3-30b-a3b", hw="jetson-orin-nano-8gb")
