"""ZipMoE Fig. 10 from OUT/results.csv (run.sh merges the two sweeps, first column `pools`): mean TPOT against
throughput over batch sizes, one curve per cache-management variant, one panel per trace. Writes
OUT/zipmoe-fig10.png and .pdf; prints a one-line summary (TPOT of each variant at batch 1)."""
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
        for r, xi, yi in zip(rr, x, y):
            if v == variants[0]:
                ax.annotate(f"B={r['batch']}", (xi, yi), textcoords="offset points", xytext=(4, -10), fontsize=7)
        summary.append(f"{t.split('.')[0]} {v} {y[0]:.0f} ms")
    ax.set_xlabel("throughput (tokens/s)")
    ax.set_ylabel("mean TPOT (ms)")
    ax.set_title(title, fontsize=9)
    ax.grid(True, alpha=0.3)
axes[0].legend(fontsize=7.5)
fig.suptitle("ZipMoE Fig. 10 in moesim (simulated Jetson AGX Orin 64GB, 8 GiB): cache management, latency against "
             "throughput over batch sizes (lower right is better)", fontsize=9.5)
fig.tight_layout()
plotlib.save(fig, out, "zipmoe-fig10")
print("zipmoe-fig10: TPOT at batch 1: " + "; ".join(summary) + f" -> {out}/zipmoe-fig10.png")
