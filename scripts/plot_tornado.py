#!/usr/bin/python3
"""Tornado plot of break-evens (`moesim sensitivity --find-flip --plot OUT`): one bar per input (profile field or run
parameter), on a log axis of the factor it is scaled by, spanning the factors between which the systems' ranking
holds -- from the flip below 1 to the flip above 1, or to the searched range's end where there is none (an arrow),
or to the last factor in the input's own range (a bar). Inputs with the narrowest span (the comparison's weakest
support) on top.

    scripts/plot_tornado.py TABLE.csv OUT.png

TABLE: point,field,base_value,lower_factor,upper_factor,lower_range_end,upper_range_end,lo,hi (empty factor: no
flip on that side; a range end: the input left its range beyond it). Writes OUT (its
format from the extension). Uses experiments/plotlib.py's style and Debian's python3-matplotlib.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "experiments"))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_tornado.py TABLE.csv OUT.png")
    table, out = sys.argv[1], sys.argv[2]
    try:
        import plotlib  # noqa: E402
        from plotlib import plt  # noqa: E402
    except ImportError as e:
        sys.exit(f"plot_tornado.py: {e} (apt-get install python3-matplotlib)")
    rows = plotlib.read_table(table, {"point", "field", "lower_factor", "upper_factor", "lo", "hi"}, "plot_tornado.py")
    bars = []
    for i, r in enumerate(rows, start=2):
        try:
            lo, hi = float(r["lo"]), float(r["hi"])
            low = float(r["lower_factor"]) if r["lower_factor"] else None
            high = float(r["upper_factor"]) if r["upper_factor"] else None
            low_end = float(r["lower_range_end"]) if r.get("lower_range_end") else None
            high_end = float(r["upper_range_end"]) if r.get("upper_range_end") else None
        except ValueError as e:
            sys.exit(f"plot_tornado.py: {table}: line {i}: {e}")
        label = r["field"] if len({x["point"] for x in rows}) == 1 else f"point {r['point']}: {r['field']}"
        left = low if low else low_end if low_end else lo
        right = high if high else high_end if high_end else hi
        kinds = ("flip" if low else "end" if low_end else "open", "flip" if high else "end" if high_end else "open")
        bars.append((right / left, label, left, right, kinds))
    bars.sort(reverse=True)  # widest at the bottom: barh draws from the bottom
    fig, ax = plt.subplots(figsize=(7.0, 0.45 * len(bars) + 1.4))
    lo, hi = float(rows[0]["lo"]), float(rows[0]["hi"])
    for y, (_, label, left, right, kinds) in enumerate(bars):
        ax.barh(y, right - left, left=left, height=0.5, color="#4c72b0", alpha=0.8)
        for x, kind, side in ((left, kinds[0], "right"), (right, kinds[1], "left")):
            if kind == "flip":
                ax.text(x, y + 0.32, f"flips at x{x:.3g}", ha=side, va="bottom", fontsize=7)
            elif kind == "end":
                ax.plot([x, x], [y - 0.3, y + 0.3], color="black", lw=2)
                ax.text(x, y + 0.32, f"range ends past x{x:.3g}", ha=side, va="bottom", fontsize=7)
            else:
                ax.annotate("", xy=(x * (0.75 if side == "right" else 1.33), y), xytext=(x, y),
                            arrowprops=dict(arrowstyle="->", color="#4c72b0"))
    ax.set_yticks(range(len(bars)))
    ax.set_yticklabels([b[1] for b in bars])
    ax.axvline(1, color="black", lw=0.8)
    ax.set_xlim(lo / 1.5, hi * 1.5)
    plotlib.log_axis(ax, "x")
    ax.set_xlabel("factor on the input (1: as given); the bar spans the factors where the ranking holds", fontsize=8)
    ax.set_title("Break-evens of the ranking (arrow: no flip in the range searched)", fontsize=9)
    fig.tight_layout()
    plotlib.save_file(fig, out)


if __name__ == "__main__":
    main()
