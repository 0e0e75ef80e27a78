#!/usr/bin/python3
"""The demo's comparison plot from Python: every C++ eviction policy on the bundled Qwen3-30B-A3B trace at 1, 2,
4 and 8 GiB for experts on a Jetson AGX Orin, simulated with moesim.run, gathered in a pandas DataFrame with the
columns of `moesim compare --csv`, and drawn by scripts/plot_compare.py (the demo's `moesim compare` then
plot_compare.py, scripts/demo).

    PYTHONPATH=build/python examples/compare_plot.py [OUT_DIR]      (default: build/examples)

Writes OUT_DIR/compare.csv and OUT_DIR/compare.png (and .pdf). Needs Debian's python3-pandas and
python3-matplotlib.
"""
import os
import subprocess
import sys
import warnings

import moesim
import pandas

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "data", "traces", "qwen3-30b-a3b.route.csv")
BUDGETS = ["1GiB", "2GiB", "4GiB", "8GiB"]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "examples")
    os.makedirs(out, exist_ok=True)
    warnings.simplefilter("ignore", UserWarning)  # each run's warnings stay in its result's "warnings"
    trace = moesim.Trace.load(TRACE)
    policies = [p["name"] for p in moesim.policies()["eviction"] if p["description"] != "written in Python"]
    rows = []
    for budget in BUDGETS:
        for policy in policies:
            m = moesim.run(trace, hw="jetson-agx-orin-64gb", policy=policy, budget=budget)["metrics"]
            rows.append({"budget": budget, "eviction": policy, "routing": "identity", "prefetch": "none",
                         "hit_rate": m["cache"]["hit_rate"], "tpot_mean_s": m["tpot"]["mean_s"]})
    frame = pandas.DataFrame(rows)
    print(frame.pivot(index="eviction", columns="budget", values="tpot_mean_s")[BUDGETS].to_string())
    table = os.path.join(out, "compare.csv")
    frame.to_csv(table, index=False)
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "plot_compare.py"), table,
                    os.path.join(out, "compare.png"), "--title",
                    "Qwen3-30B-A3B (real routing trace), simulated Jetson AGX Orin 64GB: eviction policies"],
                   check=True)
    print(f"plot: {os.path.join(out, 'compare.png')}")


if __name__ == "__main__":
    main()
