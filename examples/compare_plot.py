#!/usr/bin/python3
"""The demo's comparison plot from Python: every C++ eviction policy on the bundled Qwen3-30B-A3B trace at 1, 2,
4 and 8 GiB for experts on a Jetson AGX Orin, simulated by moesim.compare (the demo's `moesim compare`), whose
table -- the DataFrame of `moesim compare --csv` -- is drawn by scripts/plot_compare.py as the demo draws it
(scripts/demo).

    PYTHONPATH=build/python examples/compare_plot.py [OUT_DIR] [--jobs N] [--budget B,...] [--policy P,...]
    (defaults: build/examples, every CPU, 1GiB,2GiB,4GiB,8GiB, every eviction policy)

Writes OUT_DIR/compare.csv and OUT_DIR/compare.png (and .pdf). Needs Debian's python3-pandas and
python3-matplotlib.
"""
import argparse
import os
import subprocess
import sys
import warnings

import moesim

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "data", "traces", "qwen3-30b-a3b.route.csv")
BUDGETS = ["1GiB", "2GiB", "4GiB", "8GiB"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=os.path.join(ROOT, "build", "examples"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cells simulated at once")
    ap.add_argument("--budget", default=",".join(BUDGETS), help="budgets, as compare's --budget")
    ap.add_argument("--policy", default=None, help="eviction policies, as compare's --policy (default: all)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    warnings.simplefilter("ignore", UserWarning)  # the result's "warnings" keeps them
    result = moesim.compare(TRACE, hw="jetson-agx-orin-64gb", budget=args.budget, policy=args.policy,
                            jobs=args.jobs)
    frame = result.table
    budgets = list(dict.fromkeys(frame["budget"]))
    # One table per cache scope: policies are ranked only against others at their scope.
    for scope, rows in frame.groupby("scope", sort=False):
        print(f"mean TPOT (s), {scope} scope")
        print(rows.pivot(index="eviction", columns="budget", values="tpot_mean_s")[budgets].to_string())
    table = os.path.join(args.out, "compare.csv")
    frame.to_csv(table, index=False)
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "plot_compare.py"), table,
                    os.path.join(args.out, "compare.png"), "--pdf", "--title",
                    "Qwen3-30B-A3B (real routing trace), simulated Jetson AGX Orin 64GB: eviction policies"],
                   check=True)
    print(f"plot: {os.path.join(args.out, 'compare.png')}")


if __name__ == "__main__":
    main()
