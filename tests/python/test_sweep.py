import json
import os

import moesim
import pandas
import pytest

from conftest import QWEN, run_cli

# Replay and run points, a grid and an explicit point: every kind of results.csv column.
SPEC = {
    "description": "the Python module's sweep against the CLI's",
    "command": "replay",
    "grid": {"trace": [QWEN], "policy": ["lru", "lfu"], "budget": ["8", "16"]},
    "points": [{"command": "run", "trace": QWEN, "policy": "lru", "budget": "4GiB", "scope": "layer"}],
}


def cli_sweep(spec_file, out):
    p = run_cli("sweep", str(spec_file), "--jobs", "1", "-o", str(out))
    assert p.returncode == 0, p.stderr
    return pandas.read_csv(out / "results.csv")


@pytest.fixture
def spec_file(tmp_path):
    f = tmp_path / "spec.json"
    f.write_text(json.dumps(SPEC))
    return f


def test_sweep_results_equal_the_cli_results_csv(spec_file, tmp_path):
    want = cli_sweep(spec_file, tmp_path / "cli")
    got = moesim.sweep(str(spec_file), output=str(tmp_path / "py"), jobs=1)
    pandas.testing.assert_frame_equal(got.results, want)
    assert list(got.results.columns) == list(want.columns)
    assert got["points_total"] == len(want) == 5
    assert got["points_failed"] == 0
    assert (tmp_path / "py" / "results.csv").read_bytes() == (tmp_path / "cli" / "results.csv").read_bytes()


def test_a_dry_run_counts_and_times_and_writes_nothing(spec_file, tmp_path):
    got = moesim.sweep(str(spec_file), output=str(tmp_path / "never"), dry_run=True, shard="1/2")
    assert not (tmp_path / "never").exists()
    assert got["points_total"] == 5 and got["shard_points"] == 2 and got["points_to_run"] == 2
    assert [t["index"] for t in got["timed_points"]] == [1, 3]
    assert got["estimate_s"] > 0 and got["slurm_time"] == "00:01:00"
    assert moesim.sweep(SPEC, dry_run=True)["points_to_run"] == 5
    with pytest.raises(TypeError):
        moesim.sweep(SPEC, dry_run="yes")


def test_a_dict_spec_in_a_temporary_folder_gives_the_same_results(spec_file, tmp_path):
    want = cli_sweep(spec_file, tmp_path / "cli")
    got = moesim.sweep(SPEC, jobs=2)
    pandas.testing.assert_frame_equal(got.results, want)
    assert got["results_csv"] is None


def test_sweep_results_do_not_depend_on_jobs():
    one = moesim.sweep(SPEC, jobs=1).results
    two = moesim.sweep(SPEC, jobs=2).results
    pandas.testing.assert_frame_equal(one, two)


def test_a_spec_error_is_raised_with_the_cli_message(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"grid": {"budgte": ["8"]}}))
    p = run_cli("sweep", str(bad), "-o", str(tmp_path / "cli"))
    message = p.stderr.splitlines()[0][len("moesim: error: "):]
    with pytest.raises(moesim.Error) as e:
        moesim.sweep(str(bad), output=str(tmp_path / "py"))
    assert str(e.value) == message
    assert isinstance(e.value, moesim.UsageError) == (p.returncode == 2)


def test_a_failed_point_raises_with_the_cli_message(tmp_path):
    # (A missing trace, not an unknown policy: that message lists the Python policies other tests registered.)
    spec = dict(SPEC, points=[{"command": "run", "trace": str(tmp_path / "missing.csv"), "policy": "lru",
                               "budget": "4GiB"}])
    f = tmp_path / "spec.json"
    f.write_text(json.dumps(spec))
    p = run_cli("sweep", str(f), "--jobs", "1", "-o", str(tmp_path / "cli"))
    assert p.returncode == 1
    message = [l for l in p.stderr.splitlines() if l.startswith("moesim: error: ")][0][len("moesim: error: "):]
    with pytest.raises(moesim.Error) as e:
        moesim.sweep(str(f), output=str(tmp_path / "cli2"), jobs=1)
    assert str(e.value) == message.replace(str(tmp_path / "cli"), str(tmp_path / "cli2"))


def test_the_output_folder_never_holds_the_spec(spec_file, tmp_path):
    before = spec_file.read_bytes()
    with pytest.raises(moesim.UsageError, match="output= '.*'"):
        moesim.sweep(str(spec_file), output=str(tmp_path))
    assert spec_file.read_bytes() == before


def test_the_working_directory_is_kept(spec_file, tmp_path):
    here = os.getcwd()
    moesim.sweep(str(spec_file), output=str(tmp_path / "py"), jobs=1)
    assert os.getcwd() == here


def test_sweeps_and_compares_on_python_threads_equal_the_same_calls_one_after_another():
    from concurrent.futures import ThreadPoolExecutor

    calls = [lambda: moesim.sweep(SPEC, jobs=1).results,
             lambda: moesim.compare(QWEN, policy="lru,lfu", budget="8").table]
    alone = [c() for c in calls]
    with ThreadPoolExecutor(2) as pool:
        together = [f.result() for f in [pool.submit(c) for c in calls]]
    for a, b in zip(alone, together):
        pandas.testing.assert_frame_equal(a, b)
