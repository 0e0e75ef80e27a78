"""Shared fixtures of the Python module's tests: the CLI next to the module (MOESIM_BUILD_DIR, set by ctest) and
the bundled traces; cli_json runs `moesim ... --json` and returns its document without what differs between two
runs of the same command (the header's date, replay's wall-clock timings) or between the module and a CLI built
at another configure of the same tree (the header's commit: `git describe` at configure time)."""

import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("MOESIM_BUILD_DIR", os.path.join(ROOT, "build"))
QWEN = os.path.join(ROOT, "data", "traces", "qwen3-30b-a3b.route.csv")
GPT_OSS = os.path.join(ROOT, "data", "traces", "gpt-oss-120b.route.csv")

WALL_CLOCK_KEYS = ("replay_s", "lookups_per_s")


def without_wall_clock(doc):
    """`doc` without the keys that measure this run's wall clock (the header's date, replay timings) and the
    commit the binary was configured at."""
    doc = json.loads(json.dumps(doc))
    doc.get("header", {}).pop("date", None)
    doc.get("header", {}).get("moesim", {}).pop("commit", None)
    for r in doc.get("results", []):
        for k in WALL_CLOCK_KEYS:
            r.pop(k, None)
    return doc


def run_cli(*args):
    return subprocess.run([os.path.join(BUILD, "moesim"), *args], capture_output=True, text=True)


@pytest.fixture
def cli_json():
    def call(*args):
        p = run_cli(*args, "--json")
        assert p.returncode == 0, p.stderr
        return without_wall_clock(json.loads(p.stdout))

    return call


@pytest.fixture
def cli_error():
    """The message and exit code of a failing CLI command ("moesim: error: MESSAGE" on stderr)."""

    def call(*args):
        p = run_cli(*args)
        first = p.stderr.splitlines()[0]
        prefix = "moesim: error: "
        assert first.startswith(prefix), p.stderr
        return first[len(prefix):], p.returncode

    return call
