import threading

import moesim
import pytest

from conftest import QWEN


def recorder():
    calls = []

    def progress(done, total, unit):
        calls.append((done, total, unit, threading.get_ident()))

    return calls, progress


def assert_counts_up_to_the_total(calls, unit):
    assert calls, "the callback was never called"
    done = [c[0] for c in calls]
    assert done == sorted(set(done)), "done must increase from call to call"
    assert {c[2] for c in calls} == {unit}
    total = calls[-1][1]
    assert total > 0 and done[-1] == total
    assert len(calls) <= 101  # every 1% (and the last count), not every step


def test_run_reports_its_steps():
    calls, progress = recorder()
    r = moesim.run(QWEN, policy="lru", budget="4GiB", progress=progress)
    assert_counts_up_to_the_total(calls, "steps")
    assert calls[-1][1] == r["metrics"]["steps"]
    assert len(calls) > 1


def test_replay_reports_its_replays():
    calls, progress = recorder()
    moesim.replay(QWEN, policy="lru,lfu", budget=["8", "16"], jobs=2, progress=progress)
    assert_counts_up_to_the_total(calls, "replays")
    assert calls[-1][1] == 4


def test_compare_reports_every_cells_steps():
    calls, progress = recorder()
    moesim.compare(QWEN, policy="lru,lfu", budget="8", jobs=2, progress=progress)
    assert_counts_up_to_the_total(calls, "steps")


def test_sweep_reports_its_points_not_the_points_own_bars():
    calls, progress = recorder()
    spec = {"grid": {"trace": [QWEN], "policy": ["lru", "lfu"], "budget": ["4GiB"]}}
    moesim.sweep(spec, jobs=1, progress=progress)
    assert_counts_up_to_the_total(calls, "points")
    assert [c[0] for c in calls] == [1, 2]


def test_the_same_result_with_and_without_a_callback():
    plain = moesim.run(QWEN, policy="lru", budget="4GiB")["metrics"]
    observed = moesim.run(QWEN, policy="lru", budget="4GiB", progress=lambda *a: None)["metrics"]
    assert plain == observed


class Stop(Exception):
    pass


@pytest.mark.parametrize("call", [
    lambda p: moesim.run(QWEN, policy="lru", budget="4GiB", progress=p),
    lambda p: moesim.compare(QWEN, policy="lru,lfu", budget="8", jobs=2, progress=p),
    lambda p: moesim.replay(QWEN, policy="lru,lfu", budget=["8", "16"], jobs=2, progress=p),
    lambda p: moesim.sweep({"grid": {"trace": [QWEN], "policy": ["lru", "lfu"], "budget": ["8"]}}, jobs=2,
                           progress=p),
])
def test_an_exception_in_the_callback_stops_the_call_and_propagates(call):
    calls = []

    def progress(done, total, unit):
        calls.append(done)
        raise Stop(f"stop at {done}")

    with pytest.raises(Stop, match="stop at"):
        call(progress)
    assert len(calls) == 1  # called once: the work stopped there


def test_a_progress_that_is_not_callable_is_a_usage_error():
    with pytest.raises(moesim.UsageError, match="progress: expected a callable"):
        moesim.run(QWEN, policy="lru", budget="4GiB", progress=3)
