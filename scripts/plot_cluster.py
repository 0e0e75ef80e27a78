#!/usr/bin/python3
"""Plots a cluster run over time (`moesim cluster SERVERS.json ... --plot OUT`): the mean latency of the requests
arriving in each bucket, and the local compute ratio (Prism Fig. 6/7b's views), from the table the command
writes for it.

    scripts/plot_cluster.py TABLE.csv OUT.png

TABLE: bucket_start_s,latency_mean_s,local_compute_ratio (empty where a bucket had none). Writes OUT (its format
from the extension). Uses experiments/plotlib.py's style and Debian's python3-matplotlib.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "experiments"))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_cluster.py TABLE.csv OUT.png")
    table, out = sys.argv[1], sys.argv[2]
    try:
        import plotlib  # noqa: E402
        from plotlib import plt  # noqa: E402
    except ImportError as e:
        sys.exit(f"plot_cluster.py: {e} (apt-get install python3-matplotlib)")
    rows = plotlib.read_table(table, {"bucket_start_s", "latency_mean_s", "local_compute_ratio"}, "plot_cluster.py")
    minutes = [float(r["bucket_start_s"]) / 60 for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 5.2), sharex=True)
    for ax, col, label, i in ((top, "latency_mean_s", "mean latency (s) of the requests arriving", 0),
                              (bottom, "local_compute_ratio", "local compute ratio", 1)):
        pts = [(m, float(r[col])) for m, r in zip(minutes, rows) if r[col] != ""]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], **plotlib.series_style(i))
        ax.set_ylabel(label, fontsize=8)
        ax.grid(True, alpha=0.3)
    bottom.set_ylim(0, 1.05)
    bottom.set_xlabel("simulated time (min), by arrival bucket")
    fig.tight_layout()
    plotlib.save_file(fig, out)


if __name__ == "__main__":
    main()
