import moesim
import pytest

from conftest import GPT_OSS, QWEN, without_wall_clock


@pytest.mark.parametrize("scope", ["global", "layer"])
def test_replay_equals_the_cli_json(cli_json, scope):
    got = moesim.replay(QWEN, policy=["lru", "lfu", "belady"], budget=["8", "3000MiB"], scope=scope)
    want = cli_json("replay", QWEN, "--policy", "lru,lfu,belady", "--budget", "8", "--budget", "3000MiB",
                    "--scope", scope)
    assert without_wall_clock(got) == want


def test_replay_of_a_loaded_trace_equals_the_cli_json(cli_json):
    t = moesim.Trace.load(GPT_OSS)
    got = moesim.replay(t, policy="fifo", budget="8", batch=2)
    assert without_wall_clock(got) == cli_json("replay", GPT_OSS, "--policy", "fifo", "--budget", "8", "--batch", "2")


def test_trace_properties_and_summary(cli_json):
    t = moesim.Trace.load(QWEN)
    info = cli_json("trace", "info", QWEN)
    assert (t.model, t.layers, t.experts, t.top_k, t.sequences) == (
        info["model"], info["layers"], info["experts"], info["top_k"], info["sequences"])
    summary = t.summary()
    for key in ("layers", "experts", "records", "lookups", "invocations", "decode_lookups"):
        assert summary[key] == info[key]


def test_replay_frame_has_one_row_per_result():
    frame = moesim.replay_frame(QWEN, policy=["lru", "fifo"], budget=["8", "16"])
    assert list(frame["eviction"]) == ["lru", "lru", "fifo", "fifo"]
    doc = moesim.replay(QWEN, policy=["lru", "fifo"], budget=["8", "16"])
    assert list(frame["hits"]) == [r["hits"] for r in doc["results"]]


def test_replay_frame_of_a_miss_ratio_curve_equals_the_replays():
    frame = moesim.replay_frame(QWEN, policy=["lru", "fifo"], budget=["8", "16", "32"], mrc=True)
    assert list(frame["eviction"]) == ["lru"] * 3 + ["fifo"] * 3
    assert list(frame["method"]) == ["stack-distance"] * 3 + ["shards"] * 3
    doc = moesim.replay(QWEN, policy="lru", budget=["8", "16", "32"])
    assert list(frame["hits"][:3]) == [r["hits"] for r in doc["results"]]


def test_policies_lists_the_registries(cli_json):
    got = moesim.policies()
    want = cli_json("policies")["policies"]
    # Python policies registered by other tests of this session are listed too; the CLI has none.
    assert {k: [e for e in v if not e["name"].startswith("py-")] for k, v in got.items()} == want


def test_calls_from_threads_give_the_results_of_calls_in_turn():
    import concurrent.futures

    t = moesim.Trace.load(QWEN)
    args = [dict(policy="lru", budget="16"), dict(policy="lfu", budget="32", scope="layer"),
            dict(policy="belady", budget="8")]
    alone = [without_wall_clock(moesim.replay(t, **a)) for a in args]
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        together = list(pool.map(lambda a: without_wall_clock(moesim.replay(t, **a)), args))
    assert together == alone
