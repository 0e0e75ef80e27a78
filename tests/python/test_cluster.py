import json

import moesim
import pytest

from conftest import QWEN, without_wall_clock


def servers(tmp_path):
    spec = {"model": "qwen3-30b-a3b", "network": {"bandwidth": "500Mbit/s", "latency": "1ms"},
            "servers": [{"name": "a", "hw": "desktop-rtx4090", "gpus": 4, "gpu_memory": "8GiB", "traces": [QWEN],
                         "arrival": "poisson:20s"},
                        {"name": "b", "hw": "jetson-agx-orin-64gb", "gpus": 4, "gpu_memory": "8GiB",
                         "traces": [QWEN], "arrival": "poisson:30s"}]}
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(spec))
    return str(path)


def test_cluster_equals_the_cli_json(cli_json, tmp_path):
    spec = servers(tmp_path)
    got = moesim.cluster(spec, placement="prism", duration="3m", migrate_every="1m", seed=3)
    want = cli_json("cluster", spec, "--placement", "prism", "--duration", "3m", "--migrate-every", "1m", "--seed", "3")
    assert without_wall_clock(got) == want


def test_cluster_of_another_system_equals_the_cli_json(cli_json, tmp_path):
    spec = servers(tmp_path)
    got = moesim.cluster(spec, system="moe-infinity:redirect=1", duration="3m", seed=3)
    want = cli_json("cluster", spec, "--system", "moe-infinity:redirect=1", "--duration", "3m", "--seed", "3")
    assert without_wall_clock(got) == want
    assert got["config"]["placement"] is None and "offload" in got


def test_cluster_without_a_placement_is_the_cli_usage_error(cli_error, tmp_path):
    spec = servers(tmp_path)
    message, code = cli_error("cluster", spec)
    assert code == 2
    with pytest.raises(moesim.UsageError) as e:
        moesim.cluster(spec)
    assert str(e.value) == message


def test_cluster_reports_simulated_seconds_to_a_progress_callback(tmp_path):
    calls = []
    got = moesim.cluster(servers(tmp_path), placement="prism", duration="3m", seed=3,
                         progress=lambda done, total, unit: calls.append((done, total, unit)))
    assert calls and calls[-1][1:] == (180, "simulated s") and 0 < calls[-1][0] <= 180
    assert [c[0] for c in calls] == sorted(set(c[0] for c in calls))
    plain = moesim.cluster(servers(tmp_path), placement="prism", duration="3m", seed=3)
    assert without_wall_clock(got) == without_wall_clock(plain)
