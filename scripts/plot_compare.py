#!/usr/bin/python3
"""Plots a `moesim compare --csv` table: hit rate and mean TPOT against the expert-cache budget, one line per
eviction policy (or per system and policy, for a `compare --system` table, which has a `system` column), one row
of panels per cache scope (a global cache and per-layer caches are never drawn in one
panel: a policy is ranked only against others at its scope). Rows with lossy routing or a prefetcher are left
out: this is the lossless comparison. A table without a scope column is one scope.

    scripts/plot_compare.py TABLE.csv OUT.png [--title TEXT] [--pdf]

Writes OUT (its format from the extension) and, with --pdf, the same figure as PDF beside it (OUT with .pdf).
`moesim compare --plot OUT` runs it without --pdf (it writes only the file it was given). Needs Debian's
python3-matplotlib.
"""
import argparse
import csv
import os
import re
import sys

UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "KB": 1e3, "MB": 1e6, "GB": 1e9}


def budget_value(text, where):
    """("bytes", n) for a size such as 2GiB or 2.00 GiB; ("experts", n) for "16" or "16 experts/layer"."""
    m = re.fullmatch(r"\s*([0-9]+)\s*(experts/layer)?\s*", text)
    if m:
        return "experts", float(m.group(1))
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", text)
    if not m or (m.group(2) or "B") not in UNITS:
        sys.exit(f"plot_compare.py: {where}: budget '{text}' is not a size such as 2GiB or 2.00 GiB, nor a count "
                 "of experts per layer")
    return "bytes", float(m.group(1)) * UNITS[m.group(2) or "B"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table")
    ap.add_argument("out")
    ap.add_argument("--title", default="")
    ap.add_argument("--pdf", action="store_true", help="also write OUT with .pdf")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_compare.py: matplotlib is missing (apt-get install python3-matplotlib)")
    need = {"budget", "eviction", "hit_rate", "tpot_mean_s", "routing", "prefetch"}
    series = {}
    kinds = set()
    try:
        with open(a.table, newline="") as f:
            rows = csv.DictReader(f)
            missing = need - set(rows.fieldnames or [])
            if missing:
                sys.exit(f"plot_compare.py: {a.table}: line 1: missing columns {', '.join(sorted(missing))}")
            for i, r in enumerate(rows, start=2):
                if r["routing"] not in ("", "identity") or r["prefetch"] not in ("", "none"):
                    continue
                if not r["hit_rate"] or not r["tpot_mean_s"]:
                    continue
                kind, b = budget_value(r["budget"], f"{a.table}: line {i}")
                kinds.add(kind)
                name = f"{r['system']} [{r['eviction']}]" if r.get("system") else r["eviction"]
                key = (r.get("scope") or "", name)
                series.setdefault(key, []).append((b, float(r["hit_rate"]), float(r["tpot_mean_s"])))
    except OSError as e:
        sys.exit(f"plot_compare.py: {a.table}: {e.strerror}")
    if not series:
        sys.exit(f"plot_compare.py: {a.table}: no lossless rows with a hit rate and a TPOT to plot")

    if len(kinds) > 1:
        sys.exit(f"plot_compare.py: {a.table}: budgets in bytes and in experts per layer in one table; plot them apart")
    kind = next(iter(kinds))
    scopes = sorted({s for s, _ in series}, key=lambda s: (s != "global", s))
    fig, axes = plt.subplots(len(scopes), 2, figsize=(10, 4 * len(scopes)), dpi=100, squeeze=False)
    for row, scope in enumerate(scopes):
        draw_scope(axes[row][0], axes[row][1], scope, {n: p for (s, n), p in series.items() if s == scope}, kind)
    if a.title:
        fig.suptitle(a.title, fontsize=10)
    fig.tight_layout()
    base, _ = os.path.splitext(a.out)
    for path in (a.out, base + ".pdf") if a.pdf and not a.out.endswith(".pdf") else (a.out,):
        tmp = path + ".tmp" + os.path.splitext(path)[1]
        fig.savefig(tmp)
        os.replace(tmp, path)


def draw_scope(ax1, ax2, scope, series, kind):
    """One scope's two panels: hit rate and mean TPOT against the budget (GiB, or experts per layer when kind
    is "experts"), a line per policy or system."""
    for name in sorted(series):
        pts = sorted(series[name])
        gib = [p[0] / 2**30 if kind == "bytes" else p[0] for p in pts]
        style = dict(marker="o", linewidth=1.5, markersize=4, label=name)
        if name == "belady":
            style.update(linestyle="--", color="black", label="belady (offline optimum)")
        ax1.plot(gib, [100 * p[1] for p in pts], **style)
        ax2.plot(gib, [1000 * p[2] for p in pts], **style)
    from matplotlib.ticker import FuncFormatter, LogLocator
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(plain)
        ax.set_xlabel("expert-cache budget (GiB)" if kind == "bytes" else "expert-cache budget (experts per layer)")
        ax.grid(True, alpha=0.3)
    ax1.set_ylabel("expert hit rate (%)")
    ax2.set_ylabel("mean TPOT (ms, simulated)")
    ax2.set_yscale("log")
    ax2.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    ax2.yaxis.set_major_formatter(plain)
    ax2.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax1.legend(fontsize=8)
    if scope:
        label = {"global": "one global cache", "layer": "per-layer caches"}.get(scope, scope)
        ax1.set_title(label, fontsize=9)
        ax2.set_title(label, fontsize=9)


if __name__ == "__main__":
    main()
