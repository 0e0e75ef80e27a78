"""ZipMoE Fig. 8 from OUT/results.csv (moesim sweep): throughput (tokens/s) per system at batch sizes 1, 4, 16,
one panel per trace and hardware, and OUT/speedups.csv: ZipMoE's throughput over each baseline's.
Writes OUT/zipmoe-fig8.png and .pdf; prints a one-line summary."""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402
import numpy as np  # noqa: E402

out = plotlib.out_dir()
rows = plotlib.read_csv(out, "results.csv")


def system(r):
    if r["system"] == "zipmoe":
        return "ZipMoE (fused E-chunk reads)"
    if r["system"].startswith("zipmoe"):
        return "ZipMoE, every read on the I/O thread"
    if r["system"] == "offload":
        return "expert offload, LRU per layer" if r.get("scope") == "layer" else "expert offload, LRU, one global cache"
    return "layer offload + window (DeepSpeed-like)" if r["prefetch"] else "layer offload (Accelerate-like)"


traces = {"qwen3-30b-a3b.fit16.mtr": "Qwen3-30B-A3B (SYNTHETIC, fitted to the real trace)",
          "deepseek-v2-lite.zipf1.seq16.mtr": "DeepSeek-V2-Lite (SYNTHETIC, Zipf 1.0)",
          "qwen1.5-moe-a2.7b.zipf1.seq16.mtr": "Qwen1.5-MoE-A2.7B (SYNTHETIC, Zipf 1.0)"}
hws = {"jetson-agx-orin-64gb": "Orin 64GB, 20 GiB", "jetson-agx-orin-32gb": "Orin 32GB, 10 GiB"}
systems = list(dict.fromkeys(system(r) for r in rows))
batches = sorted({int(r["batch"]) for r in rows})
tput = {(r["trace"], r["hw"], system(r), int(r["batch"])): float(r["tokens_per_s"]) for r in rows}

fig, axes = plt.subplots(len(traces), len(hws), figsize=(11, 10), sharey="row")
colors = ["tab:blue", "tab:cyan", "tab:orange", "tab:green", "tab:red", "tab:purple"]
width = 0.8 / len(systems)
for i, (t, tl) in enumerate(traces.items()):
    for j, (h, hl) in enumerate(hws.items()):
        ax = axes[i][j]
        x = np.arange(len(batches))
        for k, s in enumerate(systems):
            ax.bar(x + (k - (len(systems) - 1) / 2) * width, [tput[(t, h, s, b)] for b in batches], width,
                   label=s, color=colors[k])
        ax.set_yscale("log")
        ax.set_xticks(x)
        ax.set_xticklabels([f"BS={b}" for b in batches])
        ax.set_title(f"{tl}\n{hl}", fontsize=8.5)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        if j == 0:
            ax.set_ylabel("throughput (tokens/s)")
fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=8,
           bbox_to_anchor=(0.5, -0.05))
fig.suptitle("ZipMoE Fig. 8 in moesim (simulated): throughput against the batch size", fontsize=10.5)
fig.tight_layout()
plotlib.save(fig, out, "zipmoe-fig8")

summary = []
with open(os.path.join(out, "speedups.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["trace", "hw", "batch", "baseline", "zipmoe_speedup"])
    for s in systems[1:]:
        sp = []
        for t in traces:
            for h in hws:
                for b in batches:
                    sp.append(tput[(t, h, systems[0], b)] / tput[(t, h, s, b)])
                    w.writerow([t, h, b, s, f"{sp[-1]:.3f}"])
        summary.append(f"vs {s.split(' (')[0]} {min(sp):.2f}x..{max(sp):.2f}x")
print("zipmoe-fig8: ZipMoE throughput " + ", ".join(summary) + f" -> {out}/zipmoe-fig8.png")
