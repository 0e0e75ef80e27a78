#!/usr/bin/python3
"""Plots a miss-ratio curve table (`moesim replay --mrc --csv`): miss ratio against the cache's capacity in
experts, one line per eviction policy; an estimated (SHARDS) curve is dashed, with its standard error as a band.

    scripts/plot_mrc.py TABLE.csv OUT.png

Writes OUT (its format from the extension: .png, .pdf, .svg). Uses the experiments' shared style
(experiments/plotlib.py) and Debian's python3-matplotlib. `moesim replay --mrc --plot OUT` runs it.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "experiments"))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_mrc.py TABLE.csv OUT.png")
    table, out = sys.argv[1], sys.argv[2]
    try:
        import plotlib  # noqa: E402
        from plotlib import plt  # noqa: E402
    except ImportError as e:
        sys.exit(f"plot_mrc.py: {e} (apt-get install python3-matplotlib)")
    need = {"eviction", "scope", "capacity_experts", "miss_ratio", "method", "hit_ratio_stderr"}
    rows = plotlib.read_csv(table)
    if not rows:
        sys.exit(f"plot_mrc.py: {table}: no rows")
    missing = need - set(rows[0])
    if missing:
        sys.exit(f"plot_mrc.py: {table}: line 1: missing columns {', '.join(sorted(missing))}")
    series = {}
    for i, r in enumerate(rows, start=2):
        try:
            x, y = int(r["capacity_experts"]), float(r["miss_ratio"])
            se = float(r["hit_ratio_stderr"]) if r["hit_ratio_stderr"] else 0.0
        except ValueError as e:
            sys.exit(f"plot_mrc.py: {table}: line {i}: {e}")
        series.setdefault((r["eviction"], r["scope"], r["method"]), []).append((x, y, se))
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for i, ((policy, scope, method), pts) in enumerate(sorted(series.items())):
        pts.sort()
        xs, ys, ses = zip(*pts)
        style = plotlib.series_style(i)
        style["marker"] = None if len(xs) > 20 else style["marker"]
        label = f"{policy} ({scope}, {'exact' if method == 'stack-distance' else 'SHARDS estimate'})"
        if method != "stack-distance":
            style["linestyle"] = "--"
            if any(ses):
                ax.fill_between(xs, [y - s for y, s in zip(ys, ses)], [y + s for y, s in zip(ys, ses)], alpha=0.2)
        ax.plot(xs, ys, label=label, **style)
    ax.set_xlabel("cache capacity (experts, all partitions)")
    ax.set_ylabel("miss ratio")
    ax.set_ylim(bottom=0)
    ax.legend()
    fig.savefig(out, dpi=plotlib.DPI, bbox_inches="tight")


if __name__ == "__main__":
    main()
