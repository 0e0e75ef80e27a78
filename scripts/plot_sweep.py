#!/usr/bin/python3
"""Plots two columns of a sweep's results.csv against each other, one line per value of a third
(`moesim sweep SPEC -o DIR --plot OUT --x budget --y tpot_mean_s --group policy`).

    scripts/plot_sweep.py RESULTS.csv OUT.png X Y [GROUP]

X is drawn as numbers when every value is one (a size such as 4GiB as bytes, shown in GiB; a share such as 25% as
its percentage), else as categories in the order they first appear. Rows where X or Y is empty (a point whose
command does not measure Y) are left out; GROUP empty: one line. Writes OUT (its format from the extension).
Uses experiments/plotlib.py's style and Debian's python3-matplotlib.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "experiments"))

UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}


def number(text):
    """(value, kind) of a cell: a plain number, a size (bytes), a percentage; None when it is none of them."""
    t = text.strip()
    try:
        return float(t), "number"
    except ValueError:
        pass
    m = re.fullmatch(r"([0-9.]+)\s*([A-Za-z]+)", t)
    if m and m.group(2) in UNITS:
        return float(m.group(1)) * UNITS[m.group(2)], "bytes"
    m = re.fullmatch(r"([0-9.]+)%", t)
    if m:
        return float(m.group(1)), "percent"
    return None


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit("usage: plot_sweep.py RESULTS.csv OUT.png X Y [GROUP]")
    table, out, xcol, ycol = sys.argv[1:5]
    group = sys.argv[5] if len(sys.argv) == 6 else ""
    try:
        import plotlib  # noqa: E402
        from plotlib import plt  # noqa: E402
    except ImportError as e:
        sys.exit(f"plot_sweep.py: {e} (apt-get install python3-matplotlib)")
    rows = plotlib.read_table(table, {xcol, ycol} | ({group} if group else set()), "plot_sweep.py")
    kept = [r for r in rows if r[xcol] != "" and r[ycol] != ""]
    if not kept:
        sys.exit(f"plot_sweep.py: {table}: no row has both {xcol} and {ycol}")
    parsed = [number(r[xcol]) for r in kept]
    kinds = {p[1] for p in parsed if p}
    numeric = all(parsed) and len(kinds) == 1
    categories = list(dict.fromkeys(r[xcol] for r in kept))
    series = {}
    for i, r in enumerate(kept):
        try:
            y = float(r[ycol])
        except ValueError:
            sys.exit(f"plot_sweep.py: {table}: {ycol} '{r[ycol]}' is not a number")
        x = parsed[i][0] / (2**30 if "bytes" in kinds else 1) if numeric else categories.index(r[xcol])
        name = r[group] if group else ycol
        series.setdefault(os.path.basename(name) if "/" in name else name, []).append((x, y))
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for i, (name, pts) in enumerate(sorted(series.items())):
        pts.sort()
        style = plotlib.series_style(i)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=f"{group} {name}" if group else name, **style)
    unit = " (GiB)" if numeric and "bytes" in kinds else " (%)" if numeric and "percent" in kinds else ""
    ax.set_xlabel(xcol + unit)
    ax.set_ylabel(ycol)
    if not numeric:
        ax.set_xticks(range(len(categories)))
        ax.set_xticklabels(categories, rotation=30, ha="right", fontsize=8)
    ax.grid(True, alpha=0.3)
    if len(series) > 1 or group:
        ax.legend(fontsize=8)
    ax.set_title(f"{os.path.basename(os.path.dirname(os.path.abspath(table)))}: {ycol} against {xcol}", fontsize=9)
    fig.tight_layout()
    plotlib.save_file(fig, out)


if __name__ == "__main__":
    main()
