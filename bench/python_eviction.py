#!/usr/bin/python3
"""A Python eviction policy's speed against the C++ one (bench/results/python-2026-11-28.md):

    PYTHONPATH=build/python bench/python_eviction.py [TRACE] [--budget 16] [--repeat 3]

Replays TRACE (default: the bundled Qwen3-30B-A3B route trace) with the C++ `lru` and with the Python LRU of
tests/python/test_python_policy.py (registered as `py-lru`), in global and layer scope, `--repeat` times each,
and prints the median replay time (the replay's own clock, `replay_s`: the trace is loaded once, outside it) and
lookups per second. Both give the same hits (the test checks it); the script says so for the run it timed.
"""
import argparse
import os
import statistics
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

import moesim  # noqa: E402
import test_python_policy  # noqa: E402,F401  (registers py-lru)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace", nargs="?", default=os.path.join(ROOT, "data", "traces", "qwen3-30b-a3b.route.csv"))
    ap.add_argument("--budget", default="16")
    ap.add_argument("--repeat", type=int, default=3)
    o = ap.parse_args()
    # The replays' warnings (prefill passes larger than a small cache) are the same for both policies.
    warnings.simplefilter("ignore", UserWarning)
    trace = moesim.Trace.load(o.trace)
    print(f"{'scope':6} {'policy':7} {'lookups':>8} {'hits':>8} {'median s':>10} {'Mlookups/s':>11}")
    for scope in ("global", "layer"):
        medians = {}
        for policy in ("lru", "py-lru"):
            runs = [moesim.replay(trace, policy=policy, budget=o.budget, scope=scope)["results"][0]
                    for _ in range(o.repeat)]
            med = statistics.median(r["replay_s"] for r in runs)
            medians[policy] = (med, runs[0]["hits"])
            print(f"{scope:6} {policy:7} {runs[0]['lookups']:8} {runs[0]['hits']:8} {med:10.6f} "
                  f"{runs[0]['lookups'] / med / 1e6:11.3f}")
        same = medians["lru"][1] == medians["py-lru"][1]
        print(f"{scope}: py-lru takes {medians['py-lru'][0] / medians['lru'][0]:.0f}x the C++ lru's time; "
              f"same hits: {same}")


if __name__ == "__main__":
    main()
