"""ZipMoE Fig. 7 from OUT/results.csv (moesim sweep): mean TPOT and mean TTFT against the budget, one column
per trace, one line per system, and OUT/reductions.csv: ZipMoE's TPOT/TTFT reduction against each baseline, and
OUT/against-paper.csv: per baseline and metric, how many of those reductions lie inside, above and below the
paper's range (§5.1: TPOT 62.65-97.97%, TTFT 53.25-87.90% lower where offloading is mandatory).
Writes OUT/zipmoe-fig7.png and .pdf; prints a one-line summary.

Usage: plot.py OUT_DIR [NAME DEVICE TRACE=TITLE...]: another run of the same systems (experiments/zipmoe-fig7-orin32)
names its figure NAME, its device DEVICE and its traces (the sweep's trace values) with their panel titles."""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir("plot.py OUT_DIR [NAME DEVICE TRACE=TITLE...]")
name = sys.argv[2] if len(sys.argv) > 2 else "zipmoe-fig7"
device = sys.argv[3] if len(sys.argv) > 3 else "Jetson AGX Orin 64GB"
rows = plotlib.read_csv(out, "results.csv")


def system(r):
    if r["system"] == "zipmoe":
        return "ZipMoE (planned pools, fused E-chunk reads)"
    if r["system"].startswith("zipmoe:io=thread"):
        return "ZipMoE, every read on the I/O thread (§3)"
    if r["system"] == "offload":
        scope = "per layer" if r.get("scope") == "layer" else "one global cache"
        policy = "LFU with history" if r["policy"].startswith("lfu") else "LRU"
        return f"expert offload, {policy}, {scope}"
    return "layer offload + 1-layer window (DeepSpeed-like)" if r["prefetch"] else "layer offload (Accelerate-like)"


def gib(b):
    return float(b.replace("GiB", ""))


traces = [("qwen3-30b-a3b.route.csv", "Qwen3-30B-A3B, REAL routing, BF16 (54 GiB experts)"),
          ("deepseek-v2-lite.zipf1.mtr", "DeepSeek-V2-Lite, SYNTHETIC Zipf-1.0 routing (26.8 GiB)")]
if len(sys.argv) > 4:
    traces = [tuple(a.split("=", 1)) for a in sys.argv[4:]]
systems = list(dict.fromkeys(system(r) for r in rows))
# Layer offloading with and without its window give nearly the same TTFT: marker, line style and fill differ per
# system so a line drawn over another still shows.
styles = {s: plotlib.series_style(i) for i, s in enumerate(systems)}
data = {}
for r in rows:
    data[(r["trace"], system(r), gib(r["budget"]))] = (float(r["tpot_mean_s"]), float(r["ttft_mean_s"]))

fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex="col")
for c, (trace, title) in enumerate(traces):
    for m, metric in enumerate(("TPOT", "TTFT")):
        ax = axes[m][c]
        for s in systems:
            pts = sorted((b, v[m]) for (t, ss, b), v in data.items() if t == trace and ss == s)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=s, **styles[s])
        ax.set_xscale("log", base=2)
        plotlib.log_axis(ax, "y")
        ax.set_ylabel(f"mean {metric} (s, log scale)")
        ax.grid(True, which="both", alpha=0.3)
        if m == 0:
            ax.set_title(title, fontsize=9.5)
        else:
            ax.set_xlabel("memory budget (GiB)")
        budgets = sorted({b for (t, _, b) in data if t == trace})
        ax.set_xticks(budgets)
        ax.set_xticklabels([f"{b:g}" for b in budgets])
fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=8,
           bbox_to_anchor=(0.5, -0.06))
fig.suptitle(f"ZipMoE Fig. 7 in moesim (simulated {device}): TPOT and TTFT against the memory budget",
             fontsize=10.5)
plotlib.save(fig, out, name)

# ZipMoE's reduction against every baseline, per trace and budget: 1 - zipmoe / baseline.
zname = systems[0]
summary = []
with open(os.path.join(out, "reductions.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["trace", "budget_gib", "baseline", "tpot_reduction", "ttft_reduction"])
    for trace, _ in traces:
        for s in systems[1:]:
            red = []
            for (t, ss, b), v in sorted(data.items()):
                if t == trace and ss == s and (t, zname, b) in data:
                    z = data[(t, zname, b)]
                    red.append((1 - z[0] / v[0], 1 - z[1] / v[1]))
                    w.writerow([trace, f"{b:g}", s, f"{red[-1][0]:.4f}", f"{red[-1][1]:.4f}"])
            summary.append(f"{trace.split('.')[0]} vs {s.split(' (')[0]}: TPOT reduction "
                           f"{100 * min(x[0] for x in red):.0f}%..{100 * max(x[0] for x in red):.0f}%")
# Against the paper's range: reductions per baseline (both traces together) inside, above and below it.
PAPER = {"tpot": (0.6265, 0.9797), "ttft": (0.5325, 0.8790)}
with open(os.path.join(out, "reductions.csv"), newline="") as f:
    reds = list(csv.DictReader(f))
with open(os.path.join(out, "against-paper.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["baseline", "metric", "paper_low", "paper_high", "points", "inside", "above", "below", "lowest",
                "highest"])
    for s in systems[1:]:
        for metric, (lo, hi) in PAPER.items():
            vals = [float(r[f"{metric}_reduction"]) for r in reds if r["baseline"] == s]
            w.writerow([s, metric, lo, hi, len(vals), sum(lo <= v <= hi for v in vals), sum(v > hi for v in vals),
                        sum(v < lo for v in vals), f"{min(vals):.4f}", f"{max(vals):.4f}"])
print(f"{name}: " + "; ".join(summary) + f" -> {out}/{name}.png")
