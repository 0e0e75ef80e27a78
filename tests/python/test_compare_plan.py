import moesim
import pandas
import pytest

from conftest import QWEN, run_cli, without_wall_clock


def test_compare_equals_the_cli_json_and_its_table_the_cli_csv(cli_json, tmp_path):
    got = moesim.compare(QWEN, policy=["lru", "lfu"], budget=["2GiB", "4GiB"], scope="layer", jobs=2)
    csv = tmp_path / "compare.csv"
    want = cli_json("compare", "--trace", QWEN, "--policy", "lru,lfu", "--budget", "2GiB,4GiB", "--scope", "layer",
                    "--jobs", "2", "--csv", str(csv))
    assert without_wall_clock(got) == want
    pandas.testing.assert_frame_equal(got.table, pandas.read_csv(csv))
    assert list(got.table["eviction"]) == [r["eviction"] for r in got["rows"]]


def test_compare_takes_the_cli_comma_form_and_a_loaded_trace(cli_json):
    got = moesim.compare(moesim.Trace.load(QWEN), policy="fifo,lru", budget="8")
    want = cli_json("compare", "--trace", QWEN, "--policy", "fifo,lru", "--budget", "8")
    assert without_wall_clock(got) == want


def test_compare_does_not_depend_on_jobs():
    one = moesim.compare(QWEN, policy="lru,lfu", budget="2GiB,4GiB", jobs=1)
    two = moesim.compare(QWEN, policy="lru,lfu", budget="2GiB,4GiB", jobs=2)
    assert one["rows"] == two["rows"]
    pandas.testing.assert_frame_equal(one.table, two.table)


def test_a_system_comparison_equals_the_cli_json_and_csv(cli_json, tmp_path):
    got = moesim.compare(QWEN, model="qwen3-30b-a3b", system="offload:policy=lfu,zipmoe", budget=["4GiB", "8GiB"],
                         scope="layer")
    csv = tmp_path / "systems.csv"
    want = cli_json("compare", "--trace", QWEN, "--model", "qwen3-30b-a3b", "--system", "offload:policy=lfu,zipmoe",
                    "--budget", "4GiB,8GiB", "--scope", "layer", "--csv", str(csv))
    assert without_wall_clock(got) == want
    pandas.testing.assert_frame_equal(got.table, pandas.read_csv(csv))
    assert sorted({r["system"] for r in got["rows"]}) == ["offload", "zipmoe"]
    with pytest.raises(TypeError):
        moesim.compare(QWEN, system=3)


def test_plan_equals_the_cli_json(cli_json):
    got = moesim.plan(QWEN, model="qwen3-30b-a3b", budget="6GiB", grid=0.1)
    want = cli_json("plan", "--trace", QWEN, "--model", "qwen3-30b-a3b", "--budget", "6GiB", "--grid", "0.1")
    assert without_wall_clock(got) == want


def test_plan_from_inclusion_alone_equals_the_cli_json(cli_json):
    inclusion = "[0.9,0.7,0.5,0.4,0.3,0.2]"
    got = moesim.plan(inclusion=inclusion, model="qwen3-30b-a3b", budget="4GiB", pools="F,C,S", runners_up=2)
    want = cli_json("plan", "--inclusion", inclusion, "--model", "qwen3-30b-a3b", "--budget", "4GiB", "--pools",
                    "F,C,S", "--runners-up", "2")
    assert without_wall_clock(got) == want


def cli_message(*args):
    p = run_cli(*args)
    first = p.stderr.splitlines()[0]
    assert first.startswith("moesim: error: "), p.stderr
    return first[len("moesim: error: "):], p.returncode


@pytest.mark.parametrize("call,args", [
    (lambda: moesim.compare(QWEN, policy="lru", budget="8 parsecs"),
     ["compare", "--trace", QWEN, "--policy", "lru", "--budget", "8 parsecs"]),
    (lambda: moesim.compare(QWEN, policy="lru:depth=2", budget="8"),
     ["compare", "--trace", QWEN, "--policy", "lru:depth=2", "--budget", "8"]),
    (lambda: moesim.plan(QWEN, model="qwen3-30b-a3b", budget="6GiB", pools="F,X"),
     ["plan", "--trace", QWEN, "--model", "qwen3-30b-a3b", "--budget", "6GiB", "--pools", "F,X"]),
])
def test_bad_arguments_raise_usage_errors_with_the_cli_message(call, args):
    message, code = cli_message(*args)
    assert code == 2
    with pytest.raises(moesim.UsageError) as e:
        call()
    assert str(e.value) == message


def test_the_example_draws_the_demo_plot_from_compare(tmp_path):
    # examples/compare_plot.py on two policies and two budgets (the demo's are every policy at four), drawn
    # without a display.
    import os
    import subprocess
    import sys

    from conftest import ROOT

    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "compare_plot.py"), str(tmp_path),
                        "--jobs", "2", "--budget", "1GiB,4GiB", "--policy", "lru,lfu"],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "compare.png").stat().st_size > 0
    table = pandas.read_csv(tmp_path / "compare.csv")
    want = moesim.compare(QWEN, hw="jetson-agx-orin-64gb", budget="1GiB,4GiB", policy="lru,lfu").table
    pandas.testing.assert_frame_equal(table, want)
