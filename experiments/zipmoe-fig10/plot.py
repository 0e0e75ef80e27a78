"""ZipMoE Fig. 10 from OUT/results.csv (run.sh merges the two sweeps, first column `pools`): mean TPOT against
throughput over batch sizes, one curve per cache-management variant, one panel per trace. Writes
OUT/zipmoe-fig10.png and .pdf and OUT/ablation.csv (the comparisons the README states); prints a one-line summary (TPOT of each variant at batch 1)."""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir()
rows = plotlib.read_csv(out, "results.csv")


def variant(r):
    ev = {"": "", "fifo": " + FIFO", "marking": " + Marking", "lru": " + LRU"}[r["policy"]]
    if r["pools"] == "planned":
        return "ZipMoE (planner + its eviction)"
    return "w/o planner" + (ev or " (its eviction)")


traces = {"qwen3-30b-a3b.fit4.mtr": "Qwen3-30B-A3B (SYNTHETIC, fitted to the real trace), BF16",
          "deepseek-v2-lite.zipf1.seq8.mtr": "DeepSeek-V2-Lite (SYNTHETIC, Zipf 1.0)"}
variants = list(dict.fromkeys(variant(r) for r in rows))
style = dict(zip(variants, [("tab:blue", "o", "-"), ("tab:orange", "s", "-"), ("tab:green", "^", "--"),
                            ("tab:red", "v", "--"), ("tab:purple", "D", "--")]))
fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
summary = []
for ax, (t, title) in zip(axes, traces.items()):
    for v in variants:
        rr = sorted((r for r in rows if r["trace"] == t and variant(r) == v), key=lambda r: int(r["batch"]))
        x = [float(r["tokens_per_s"]) for r in rr]
        y = [1e3 * float(r["tpot_mean_s"]) for r in rr]
        c, m, ls = style[v]
        ax.plot(x, y, marker=m, ls=ls, color=c, label=v, ms=5)
        summary.append(f"{t.split('.')[0]} {v} {y[0]:.0f} ms")
    # Every point is labelled with its batch size: ZipMoE's apart, and the four variants without the planner,
    # which lie within 2% of each other at each batch, once per batch (in grey, beside the cluster).
    pts = []
    for v in variants:
        for r in (r for r in rows if r["trace"] == t and variant(r) == v):
            pts.append((v == variants[0], int(r["batch"]), float(r["tokens_per_s"]), 1e3 * float(r["tpot_mean_s"])))
    labels = []
    for planned in (True, False):
        for b in sorted({p[1] for p in pts if p[0] == planned}):
            group = [p for p in pts if p[0] == planned and p[1] == b]
            labels.append((sum(p[2] for p in group) / len(group), max(p[3] for p in group), f"B={b}",
                           style[variants[0]][0] if planned else "dimgrey"))
    plotlib.label_points(ax, [x for x, _, _, _ in labels], [y for _, y, _, _ in labels], [t for _, _, t, _ in labels],
                         colors=[c for _, _, _, c in labels])
    ax.set_xlabel("throughput (tokens/s)")
    ax.set_ylabel("mean TPOT (ms)")
    ax.set_title(title, fontsize=9)
    ax.grid(True, alpha=0.3)
axes[0].legend(fontsize=7.5)
fig.suptitle("ZipMoE Fig. 10 in moesim (simulated Jetson AGX Orin 64GB, 8 GiB): cache management, latency against "
             "throughput over batch sizes (lower right is better)", fontsize=9.5)
fig.tight_layout()
plotlib.save(fig, out, "zipmoe-fig10")
# The ablation's comparisons, per trace and batch (OUT/ablation.csv): the planned configuration against even pools
# (TPOT reduction, throughput gain), and the even pools' own eviction against FIFO, Marking and LRU (TPOT
# reduction; negative where it loses), and the spread of the three baseline evictions' TPOT.
with open(os.path.join(out, "ablation.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["trace", "batch", "planner_tpot_reduction", "planner_throughput_gain", "own_vs_fifo",
                "own_vs_marking", "own_vs_lru", "baseline_spread"])
    for t in traces:
        for b in sorted({int(r["batch"]) for r in rows if r["trace"] == t}):
            at = {variant(r): r for r in rows if r["trace"] == t and int(r["batch"]) == b}
            tp = {v: float(r["tpot_mean_s"]) for v, r in at.items()}
            th = {v: float(r["tokens_per_s"]) for v, r in at.items()}
            own = "w/o planner (its eviction)"
            base = [tp["w/o planner + FIFO"], tp["w/o planner + Marking"], tp["w/o planner + LRU"]]
            w.writerow([t, b] + ["%.4f" % v for v in (
                1 - tp[variants[0]] / tp[own], th[variants[0]] / th[own] - 1, 1 - tp[own] / tp["w/o planner + FIFO"],
                1 - tp[own] / tp["w/o planner + Marking"], 1 - tp[own] / tp["w/o planner + LRU"],
                max(base) / min(base) - 1)])
print("zipmoe-fig10: TPOT at batch 1: " + "; ".join(summary) + f" -> {out}/zipmoe-fig10.png")
