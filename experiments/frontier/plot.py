#!/usr/bin/env python3
"""Latency vs routing deviation for every (system, eviction, routing, prefetch) point of the frontier sweep.

Usage: plot.py OUT_DIR   (reads OUT_DIR/results.csv; writes frontier.csv, frontier.md, frontier.png/.pdf)

A point is Pareto-optimal when no point with less (or equal) deviation is at least as fast. The hit rate is
every system's share of lookups that found the expert resident (for ZipMoE in any pool, F, C, S or E).
"""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

out = plotlib.out_dir()
rows = plotlib.read_csv(out, "results.csv")
for r in rows:
    r["tpot_ms"] = float(r["tpot_mean_s"]) * 1e3
    r["dev"] = float(r["routing_changed_fraction"] or 0)
    r["routing"] = r["routing"] or "identity"
    r["prefetch"] = r["prefetch"] or "none"
    r["policy"] = r["policy"] or "default"
    r["hit"] = f"{100 * float(r['hit_rate']):.1f}%"
rows.sort(key=lambda r: (r["dev"], r["tpot_ms"]))
best = float("inf")
for r in rows:
    r["pareto"] = r["tpot_ms"] < best
    best = min(best, r["tpot_ms"])

with open(os.path.join(out, "frontier.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["system", "eviction", "routing", "prefetch", "tpot_ms", "routing_changed_fraction",
                "hit_rate", "pareto"])
    for r in rows:
        w.writerow([r["system"], r["policy"], r["routing"], r["prefetch"], f"{r['tpot_ms']:.3f}",
                    f"{r['dev']:.6f}", r["hit_rate"], int(r["pareto"])])
with open(os.path.join(out, "frontier.md"), "w") as f:
    f.write("| system | eviction | routing | prefetch | TPOT (ms) | selections changed | hit rate | Pareto |\n")
    f.write("|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        pf = "transition" if r["prefetch"].startswith("transition") else r["prefetch"]
        f.write(f"| {r['system']} | {r['policy']} | {r['routing']} | {pf} | {r['tpot_ms']:.1f} | "
                f"{100 * r['dev']:.1f}% | {r['hit']} | {'yes' if r['pareto'] else ''} |\n")


def family(routing):
    return routing.split(":")[0]


colors = {"identity": "black", "cache-prior": "tab:purple", "max-rank": "tab:blue", "prune": "tab:red"}
markers = {"offload": "o", "zipmoe": "s"}
fig, ax = plt.subplots(figsize=(9.5, 5.2))
labelled = []
for r in rows:
    c = colors.get(family(r["routing"]), "tab:gray")
    filled = r["prefetch"] == "none"
    m = "*" if r["policy"] == "belady" else markers.get(r["system"], "^")
    ax.scatter(100 * r["dev"], r["tpot_ms"], marker=m, s=110 if m == "*" else 40,
               facecolors=c if filled else "none", edgecolors=c, linewidths=1.2, zorder=3)
    if r["routing"].startswith("cache-prior") or r["routing"].startswith("max-rank"):
        labelled.append(r)
# Legend by encoding, each encoding drawn in its own kind of symbol so that no entry looks like another:
# colour = routing (colour bars), marker = system (grey markers), fill = prefetch (grey boxes).
header = {"ls": "", "marker": "", "color": "none"}
proxies = [plt.Line2D([], [], label="routing (colour):", **header)]
proxies += [plt.Line2D([], [], color=c, lw=5, label=f) for f, c in colors.items()]
proxies += [plt.Line2D([], [], label="system (marker):", **header),
            plt.Line2D([], [], ls="", marker="o", color="dimgray", label="offload (LRU)"),
            plt.Line2D([], [], ls="", marker="*", color="dimgray", ms=11, label="offload (Belady)"),
            plt.Line2D([], [], ls="", marker="s", color="dimgray", label="zipmoe"),
            plt.Line2D([], [], label="prefetch (fill):", **header),
            Patch(facecolor="dimgray", edgecolor="dimgray", label="filled: none"),
            Patch(facecolor="white", edgecolor="dimgray", label="hollow: transition")]
front = [r for r in rows if r["pareto"]]
xs, ys = [], []
for i, r in enumerate(front):
    xs.append(100 * r["dev"])
    ys.append(r["tpot_ms"])
    nxt = front[i + 1] if i + 1 < len(front) else None
    if nxt is not None:
        xs.append(100 * nxt["dev"])
        ys.append(r["tpot_ms"])
xs.append(100.0)
ys.append(front[-1]["tpot_ms"])
ax.plot(xs, ys, color="tab:green", lw=1.5, ls="--", zorder=2)
proxies.append(plt.Line2D([], [], color="tab:green", ls="--", label="Pareto front"))
ax.set_xlabel("routing deviation: (token, layer) selections changed (%)")
ax.set_ylabel("mean TPOT (ms)")
ax.set_xlim(-3, 103)
ax.set_ylim(0, None)
ax.set_title("Lossless vs lossy: Qwen3-30B-A3B REAL routing + SYNTHETIC logits,\n"
             "BF16 experts, 8 GiB, simulated Jetson AGX Orin 64GB", fontsize=9)
ax.grid(alpha=0.3)
ax.legend(handles=proxies, fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
# Cache-Prior's λ and Max-Rank's M next to their points, each placed clear of the others (they cluster where
# several settings reach the same deviation).
plotlib.label_points(ax, [100 * r["dev"] for r in labelled], [r["tpot_ms"] for r in labelled],
                     [r["routing"].split(":")[1].replace("lambda=", "λ=") for r in labelled],
                     colors=[colors[family(r["routing"])] for r in labelled])
plotlib.save(fig, out, "frontier")
lossless = min(r["tpot_ms"] for r in rows if r["dev"] == 0)
fastest = min(rows, key=lambda r: r["tpot_ms"])
print(f"frontier: {len(rows)} points, {len(front)} Pareto-optimal; best lossless {lossless:.1f} ms, fastest "
      f"{fastest['tpot_ms']:.1f} ms ({fastest['system']} {fastest['routing']}, {100 * fastest['dev']:.0f}% changed)")
