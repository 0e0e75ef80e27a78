import moesim
import pytest

from conftest import QWEN


def test_a_bad_budget_is_a_usage_error_with_the_cli_message(cli_error):
    message, code = cli_error("replay", QWEN, "--policy", "lru", "--budget", "8 parsecs")
    assert code == 2
    with pytest.raises(moesim.UsageError) as e:
        moesim.replay(QWEN, policy="lru", budget="8 parsecs")
    assert str(e.value) == message


def test_an_unknown_policy_parameter_is_a_usage_error_with_the_cli_message(cli_error):
    message, code = cli_error("run", "--trace", QWEN, "--policy", "lru:depth=2", "--budget", "8GiB")
    assert code == 2
    with pytest.raises(moesim.UsageError) as e:
        moesim.run(QWEN, policy="lru:depth=2", budget="8GiB")
    assert str(e.value) == message


def test_a_missing_file_is_a_runtime_error_with_the_cli_message(cli_error, tmp_path):
    missing = str(tmp_path / "missing.csv")
    message, code = cli_error("replay", missing, "--policy", "lru", "--budget", "8")
    with pytest.raises(moesim.Error) as e:
        moesim.replay(missing, policy="lru", budget="8")
    assert str(e.value) == message
    assert isinstance(e.value, moesim.UsageError) == (code == 2)


def test_usage_errors_are_errors():
    assert issubclass(moesim.UsageError, moesim.Error)


def test_a_timeline_never_replaces_an_input(tmp_path):
    # The command line's rule (base/output_guard.h): the run's trace, and a loaded Trace's file, stay intact.
    trace = tmp_path / "trace.csv"
    trace.write_bytes(open(QWEN, "rb").read())
    before = trace.read_bytes()
    with pytest.raises(moesim.UsageError, match="timeline= '.*' is the same file as input"):
        moesim.run(str(trace), policy="lru", budget="8GiB", timeline=str(trace))
    with pytest.raises(moesim.UsageError, match="is the same file as input"):
        moesim.run(moesim.Trace.load(str(trace)), policy="lru", budget="8GiB", timeline=str(trace))
    assert trace.read_bytes() == before


def test_a_python_policy_returning_no_victim_is_named():
    # After end_invocation nothing is in use: None there leaves the cache over capacity. The error names the
    # policy, the method and what it returned.
    class Hoarder(moesim.EvictionPolicy):
        def evict(self, part):
            return None

    moesim.register_eviction("py-hoarder", Hoarder)
    with pytest.raises(moesim.Error, match=r"python eviction policy 'py-hoarder': evict\(0\) returned None after "
                                           r"end_invocation, while the partition is over capacity"):
        moesim.replay(QWEN, policy="py-hoarder", budget=8)
    with pytest.raises(moesim.Error, match=r"'py-hoarder': evict\(0\) returned None"):
        moesim.run(QWEN, policy="py-hoarder", budget="8GiB")
