"""What every experiments/NAME/plot.py shares: the Agg backend, one style, reading the run's CSVs, log axes with
readable tick labels, series styles that stay apart when lines coincide, labels placed off each other, and
saving PNG + PDF at one resolution with tight bounds.

A plot.py runs as `python3 experiments/NAME/plot.py OUT_DIR [...]` and starts with

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import plotlib  # noqa: E402
    from plotlib import plt  # noqa: E402

(the script's own folder, not experiments/, is on Python's path when it runs).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # figures are files: no display on CI, on clusters or over ssh
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported: `from plotlib import plt`)
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

# One resolution for every PNG, so figures side by side in the READMEs have the same type size.
DPI = 100

plt.rcParams.update({
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.titlesize": 10,
    "axes.labelsize": 9.5,
    "legend.fontsize": 8,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "savefig.dpi": DPI,
})

# Series that may coincide (two systems with the same latency) must stay visible: each gets its own marker,
# line style and marker size, and hollow markers alternate with filled ones so one drawn over the other shows.
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
_LINESTYLES = ["-", "--", ":", "-."]


def series_style(i):
    """Keyword arguments for ax.plot of the i-th series: marker, line style, size and fill all differ."""
    style = {"marker": _MARKERS[i % len(_MARKERS)], "linestyle": _LINESTYLES[i % len(_LINESTYLES)],
             "markersize": 7.5 - 1.5 * (i % 3), "linewidth": 1.4}
    if i % 2 == 1:
        style["markerfacecolor"] = "none"
        style["markeredgewidth"] = 1.4
    return style


def out_dir(usage="plot.py OUT_DIR"):
    """The run's output folder (argv[1]); exits with the usage line when it is missing."""
    if len(sys.argv) < 2:
        sys.exit(f"usage: {usage}")
    return sys.argv[1]


def read_csv(*path):
    """The rows of a CSV file as dicts (path parts are joined)."""
    with open(os.path.join(*path), newline="") as f:
        return list(csv.DictReader(f))


def _plain(v, _pos=None):
    return f"{v:g}"


def log_axis(ax, which="y", base=10):
    """A log scale whose ticks carry numbers even when the data spans less than a decade (where matplotlib's
    default shows no major tick and hides the minor labels). Call after the data is plotted."""
    axis = ax.yaxis if which == "y" else ax.xaxis
    (ax.set_yscale if which == "y" else ax.set_xscale)("log", base=base)
    lo, hi = ax.get_ylim() if which == "y" else ax.get_xlim()
    span = hi / lo if lo > 0 else float("inf")
    if base == 10:
        subs = (1.0,) if span > 1e3 else (1.0, 2.0, 5.0) if span > 10 else (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
        axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(_plain))
    axis.set_minor_formatter(NullFormatter())


def _overlaps(box, boxes):
    return any(box.overlaps(b) for b in boxes)


def label_points(ax, xs, ys, texts, colors=None, fontsize=7, marker_pts=9):
    """Labels each point (xs[i], ys[i]) with texts[i], each where it covers no other label and no point: tried
    at growing distances in eight directions, with a thin leader line when it lands away from its point. A
    label that finds no free place is put at the farthest candidate anyway (never dropped)."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    to_px = fig.dpi / 72.0
    half = marker_pts * to_px / 2
    trans = ax.transData
    taken = []
    for x, y in zip(xs, ys):
        px, py = trans.transform((x, y))
        taken.append(matplotlib.transforms.Bbox([[px - half, py - half], [px + half, py + half]]))
    directions = [(1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (-1, 0), (0, 1), (0, -1)]
    for i, (x, y, t) in enumerate(zip(xs, ys, texts)):
        c = colors[i] if colors else "black"
        chosen = None
        for dist in (4, 10, 18, 28, 40):
            for dx, dy in directions:
                ha = "left" if dx > 0 else "right" if dx < 0 else "center"
                va = "bottom" if dy > 0 else "top" if dy < 0 else "center"
                a = ax.annotate(t, (x, y), xytext=(dx * dist, dy * dist), textcoords="offset points",
                                fontsize=fontsize, color=c, ha=ha, va=va)
                box = a.get_window_extent(renderer).expanded(1.05, 1.1)
                inside = ax.bbox.contains(box.x0, box.y0) and ax.bbox.contains(box.x1, box.y1)
                if inside and not _overlaps(box, taken):
                    chosen = (a, box, dist)
                    break
                a.remove()
            if chosen:
                break
        if not chosen:
            a = ax.annotate(t, (x, y), xytext=(40, 40), textcoords="offset points", fontsize=fontsize, color=c)
            chosen = (a, a.get_window_extent(renderer), 40)
        a, box, dist = chosen
        if dist > 4:
            ax.annotate("", (x, y), xytext=a.xyann, textcoords="offset points",
                        arrowprops={"arrowstyle": "-", "color": c, "lw": 0.5, "alpha": 0.7, "shrinkA": 0,
                                    "shrinkB": 3})
        taken.append(box)


def read_table(path, need, who):
    """The rows of a command's table for scripts/plot_*.py (`who`, for messages); exits naming the file when it
    has no rows or lacks one of the columns `need`."""
    rows = read_csv(path)
    if not rows:
        sys.exit(f"{who}: {path}: no rows")
    missing = set(need) - set(rows[0])
    if missing:
        sys.exit(f"{who}: {path}: line 1: missing columns {', '.join(sorted(missing))}")
    return rows


def save_file(fig, out):
    """Writes exactly OUT (its format from the extension), through a temporary beside it so that a failed write
    leaves no half image (the file a command's --plot names), and closes the figure."""
    tmp = out + ".tmp" + os.path.splitext(out)[1]
    fig.savefig(tmp)
    os.replace(tmp, out)
    plt.close(fig)


def save(fig, out, name):
    """Writes OUT/NAME.png and OUT/NAME.pdf at DPI with tight bounds and closes the figure; returns the PNG."""
    png = os.path.join(out, f"{name}.png")
    for ext in ("png", "pdf"):
        fig.savefig(os.path.join(out, f"{name}.{ext}"), dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return png
