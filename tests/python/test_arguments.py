"""Keyword arguments in their natural Python types (python/moesim/_args.py): numbers for budgets, str or
os.PathLike for paths, lists for multi-valued options; a wrong type is a TypeError and an impossible value a
ValueError, each naming the argument, never pybind's "Unable to cast Python instance to C++ type"."""

import math
import pathlib
import re

import moesim
import pytest

from conftest import QWEN, without_wall_clock


def hit_rates(doc):
    return [(r["eviction"], r["capacity_experts"], r["hits"]) for r in doc["results"]]


@pytest.mark.parametrize("number", [8, 8.0])
def test_a_budget_may_be_a_number_of_experts_per_layer(number):
    assert hit_rates(moesim.replay(QWEN, budget=number)) == hit_rates(moesim.replay(QWEN, budget="8"))


def test_budgets_may_be_a_list_of_numbers_and_strings():
    got = moesim.replay(QWEN, policy=["lru", "lfu"], budget=[8, "16"])
    assert hit_rates(got) == hit_rates(moesim.replay(QWEN, policy="lru,lfu", budget="8,16"))


@pytest.mark.parametrize("value, words", [
    (8.5, "8.5 is not a count of experts per layer"),
    (10**30, "out of range"),
    (-8, "out of range"),
    (0, "out of range"),
    (math.nan, "is not a count of experts per layer"),
])
def test_an_impossible_budget_is_a_value_error_naming_it_and_its_range(value, words):
    with pytest.raises(ValueError, match=r"^budget: .*" + words + r".*from 1 to 18446744073709551615"):
        moesim.replay(QWEN, budget=value)


@pytest.mark.parametrize("value, name", [
    (10**30, "budget[1]"),
    (-1, "budget[1]"),
])
def test_a_budget_in_a_list_is_named_by_its_position(value, name):
    with pytest.raises(ValueError, match=r"^" + re.escape(name) + ": "):
        moesim.replay(QWEN, budget=[8, value])


@pytest.mark.parametrize("call, name", [
    (lambda: moesim.replay(QWEN, policy=3, budget=8), "policy"),
    (lambda: moesim.replay(QWEN, budget=True), "budget"),
    (lambda: moesim.replay(QWEN, budget={"x": 1}), "budget"),
    (lambda: moesim.replay(QWEN, budget=8, batch="2"), "batch"),
    (lambda: moesim.replay(QWEN, budget=8, batch=2.0), "batch"),
    (lambda: moesim.replay(QWEN, budget=8, lifetime=1), "lifetime"),
    (lambda: moesim.replay(3, budget=8), "trace"),
    (lambda: moesim.run(QWEN, system=["offload", "zipmoe"], budget="8GiB"), "system"),
    (lambda: moesim.run(QWEN, budget="8GiB", io_depth="4"), "io_depth"),
    (lambda: moesim.run(QWEN, budget="8GiB", ratio="0.3"), "ratio"),
    (lambda: moesim.run(QWEN, budget="8GiB", hw=7), "hw"),
    (lambda: moesim.compare(QWEN, budget=8, scope=3), "scope"),
    (lambda: moesim.compare(QWEN, budget=8, scope=["global", 3]), "scope[1]"),
    (lambda: moesim.plan(QWEN, budget=8, ratio=[0.3]), "ratio"),
    (lambda: moesim.Trace.load(QWEN, layer_base="1"), "layer_base"),
    (lambda: moesim.Trace.load(QWEN, where=3), "where"),
    (lambda: moesim.sweep(3), "spec"),
    (lambda: moesim.cluster(3), "servers"),
])
def test_a_wrong_type_is_a_type_error_naming_the_argument(call, name):
    with pytest.raises(TypeError) as e:
        call()
    assert str(e.value).startswith(name + ": "), str(e.value)
    assert "Unable to cast" not in str(e.value)


@pytest.mark.parametrize("call, name", [
    (lambda: moesim.replay(QWEN, budget=8, batch=2**32), "batch"),
    (lambda: moesim.replay(QWEN, budget=8, batch=-1), "batch"),
    (lambda: moesim.replay(QWEN, budget=8, seed=2**64), "seed"),
    (lambda: moesim.run(QWEN, budget="8GiB", io_depth=10**30), "io_depth"),
    (lambda: moesim.run(QWEN, budget="8GiB", host_budget=-1), "host_budget"),
    (lambda: moesim.cluster(QWEN, placement="prism", duration=-5), "duration"),
])
def test_a_number_out_of_its_fields_range_is_a_value_error_naming_it(call, name):
    with pytest.raises(ValueError, match=r"^" + re.escape(name) + r": .*out of range"):
        call()


@pytest.mark.parametrize("call", [
    lambda: moesim.run(QWEN, system="zipmoe", budget="8GiB", ratio=math.nan),
    lambda: moesim.run(QWEN, system="zipmoe", budget="8GiB", ratio=math.inf),
    lambda: moesim.plan(QWEN, budget="8GiB", model="qwen3-30b-a3b", ratio=math.nan),
])
def test_nan_for_the_zipmoe_ratio_is_refused_naming_it(call):
    with pytest.raises(ValueError, match=r"^ratio: (nan|inf) is not a finite number"):
        call()


def test_a_float_ratio_reaches_the_cli_range_check():
    # Floats go through to the C++ field: the range check is the command's own (plan: (0, 4]).
    with pytest.raises(moesim.UsageError, match="--ratio"):
        moesim.plan(QWEN, budget="8GiB", model="qwen3-30b-a3b", ratio=-0.5)


def test_a_path_may_be_a_pathlib_path_everywhere(tmp_path):
    p = pathlib.Path(QWEN)
    t = moesim.Trace.load(p)
    assert t.path == QWEN and t.records > 0
    assert hit_rates(moesim.replay(p, budget=8)) == hit_rates(moesim.replay(QWEN, budget=8))
    r = moesim.run(p, policy="lru", budget="8GiB", timeline=tmp_path / "timeline.json")
    assert r["metrics"]["steps"] > 0 and (tmp_path / "timeline.json").exists()
    assert moesim.compare(p, policy="lru", budget=8, scope="global")["rows"]


@pytest.mark.parametrize("call", [
    lambda: moesim.Trace.load(QWEN + "\x00junk"),
    lambda: moesim.replay(QWEN + "\x00junk", budget=8),
    lambda: moesim.run(QWEN, budget="8GiB", timeline="/nonexistent-folder/t.json\x00x"),
    lambda: moesim.replay(QWEN, policy="lru\x00", budget=8),
    lambda: moesim.sweep({"grid": {"trace": [QWEN + "\x00"], "policy": ["lru"], "budget": ["8"]}}),
])
def test_a_nul_in_a_path_or_text_is_a_value_error(call):
    with pytest.raises(ValueError, match="NUL"):
        call()


def test_compare_takes_its_scopes_as_a_list():
    got = moesim.compare(QWEN, policy="lru", budget=8, scope=["global", "layer"])
    want = moesim.compare(QWEN, policy="lru", budget="8", scope="global,layer")
    assert without_wall_clock(dict(got)) == without_wall_clock(dict(want))
    assert len(got["rows"]) == 2


def test_run_takes_one_system_and_says_so():
    with pytest.raises(TypeError, match="system: expected a str \\(this option takes one value\\)"):
        moesim.run(QWEN, system=["offload"], budget="8GiB")


def test_a_host_budget_may_be_a_number_of_bytes():
    a = moesim.run(QWEN, budget="8GiB", hw="desktop-rtx4090", host_budget=16 * 2**30)
    b = moesim.run(QWEN, budget="8GiB", hw="desktop-rtx4090", host_budget="16GiB")
    c = moesim.run(QWEN, budget="8GiB", hw="desktop-rtx4090", host_budget="1GiB")
    assert a["metrics"] == b["metrics"] != c["metrics"]


def test_cluster_durations_may_be_seconds(tmp_path):
    from test_cluster import servers

    spec = servers(tmp_path)
    a = moesim.cluster(spec, placement="prism", duration=180, migrate_every=60.0, seed=3)
    b = moesim.cluster(spec, placement="prism", duration="3m", migrate_every="1m", seed=3)
    assert without_wall_clock(a) == without_wall_clock(b)


@pytest.mark.parametrize("bad, where", [
    (math.nan, r"grid\.budget\[1\]: nan"),
    (math.inf, r"grid\.budget\[1\]: inf"),
])
def test_nan_in_a_dict_spec_is_a_value_error_naming_its_path(bad, where):
    spec = {"grid": {"trace": [QWEN], "policy": ["lru"], "budget": ["8", bad]}}
    with pytest.raises(ValueError, match=r"^spec: " + where + r" is not a finite number"):
        moesim.sweep(spec)


def test_a_dict_spec_takes_pathlib_paths():
    spec = {"grid": {"trace": [pathlib.Path(QWEN)], "policy": ["lru"], "budget": ["8"]}}
    assert moesim.sweep(spec, jobs=1)["points_failed"] == 0


def test_a_dict_spec_with_a_value_json_cannot_hold_names_it():
    with pytest.raises(TypeError, match=r"^spec: grid\.budget: a set is not a JSON value"):
        moesim.sweep({"grid": {"trace": [QWEN], "policy": ["lru"], "budget": {"8"}}})


def test_a_failed_sweep_without_an_output_names_a_folder_that_exists(tmp_path):
    import os
    import shutil

    missing = str(tmp_path / "missing.csv")
    spec = {"grid": {"trace": [QWEN, missing], "policy": ["lru"], "budget": ["8"]}}
    with pytest.raises(moesim.Error) as e:
        moesim.sweep(spec, jobs=1)
    message = str(e.value)
    named = re.findall(r"(/\S*moesim-sweep-[^/\s]+)", message)
    assert named, message
    for folder in named:
        assert os.path.isdir(folder), message
    assert "is kept" in message
    shutil.rmtree(named[0])
