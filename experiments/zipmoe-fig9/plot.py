"""ZipMoE Fig. 9 from the sweep's point files (OUT/sweep/points/*.json, run's full metrics): end-to-end latency
against the output length, the mean per system with a band from the median to the p90 of the sequences.
Writes OUT/latency.csv, OUT/speedups.csv, OUT/zipmoe-fig9.png and .pdf; prints a one-line summary.

Usage: plot.py OUT_DIR [NAME SETTING]: another run of the same systems and traces
(experiments/zipmoe-fig9-orin32) names its figure NAME and its device and budget SETTING (the title's
"simulated Jetson AGX Orin 64GB, 20 GiB")."""
import csv
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir("plot.py OUT_DIR [NAME SETTING]")
name = sys.argv[2] if len(sys.argv) > 2 else "zipmoe-fig9"
setting = sys.argv[3] if len(sys.argv) > 3 else "simulated Jetson AGX Orin 64GB, 20 GiB"


def system(p):
    if p["system"] == "zipmoe":
        return "ZipMoE (fused E-chunk reads)"
    if p["system"].startswith("zipmoe"):
        return "ZipMoE, every read on the I/O thread"
    if p["system"] == "offload":
        return "expert offload, LRU per layer" if p.get("scope") == "layer" else "expert offload, LRU, one global cache"
    return "layer offload + window (DeepSpeed-like)"


data = {}  # (family, system, output tokens) -> end_to_end distribution
for path in glob.glob(os.path.join(out, "sweep", "points", "*.json")):
    j = json.load(open(path))
    p = j["point"]
    fam, n = re.match(r"(.*)-decode(\d+)\.", p["trace"]).groups()
    data[(fam, system(p), int(n))] = j["metrics"]["end_to_end"]
families = {"qwen3-real": "Qwen3-30B-A3B, REAL trace prefixes (1 sequence), BF16",
            "deepseek-zipf1": "DeepSeek-V2-Lite, SYNTHETIC Zipf 1.0 (8 sequences; band p50-p90)",
            "qwen15-zipf1": "Qwen1.5-MoE-A2.7B, SYNTHETIC Zipf 1.0 (8 sequences; band p50-p90)"}
systems = ["ZipMoE (fused E-chunk reads)", "ZipMoE, every read on the I/O thread", "expert offload, LRU per layer",
           "expert offload, LRU, one global cache", "layer offload + window (DeepSpeed-like)"]
colors = dict(zip(systems, ["tab:blue", "tab:cyan", "tab:green", "tab:orange", "tab:red"]))

with open(os.path.join(out, "latency.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["trace", "system", "output_tokens", "sequences", "e2e_mean_s", "e2e_p50_s", "e2e_p90_s", "e2e_max_s"])
    for (fam, s, n), d in sorted(data.items()):
        w.writerow([fam, s, n, d["count"], d["mean_s"], d["p50_s"], d["p90_s"], d["max_s"]])

fig, axes = plt.subplots(1, len(families), figsize=(16, 4.3))
for ax, (fam, title) in zip(axes, families.items()):
    for s in systems:
        ns = sorted(n for (f, ss, n) in data if f == fam and ss == s)
        d = [data[(fam, s, n)] for n in ns]
        ax.plot(ns, [x["mean_s"] for x in d], "o-", color=colors[s], label=s, ms=4)
        if d[0]["count"] > 1:
            ax.fill_between(ns, [x["p50_s"] for x in d], [x["p90_s"] for x in d], color=colors[s], alpha=0.2)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) for n in ns])
    ax.set_xlabel("output tokens (decode steps per sequence)")
    ax.set_ylabel("end-to-end latency per sequence (s)")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
axes[0].legend(fontsize=8)
fig.suptitle(f"ZipMoE Fig. 9 in moesim ({setting}): end-to-end latency against the output length",
             fontsize=10)
fig.tight_layout()
plotlib.save(fig, out, name)

summary = []
with open(os.path.join(out, "speedups.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["trace", "output_tokens", "baseline", "zipmoe_speedup_e2e_mean"])
    for fam in families:
        for s in systems[1:]:
            sp = []
            for n in sorted(n for (ff, ss, n) in data if ff == fam and ss == s):
                sp.append(data[(fam, s, n)]["mean_s"] / data[(fam, systems[0], n)]["mean_s"])
                w.writerow([fam, n, s, f"{sp[-1]:.3f}"])
            summary.append(f"{fam} vs {s.split(' (')[0]} {min(sp):.2f}x..{max(sp):.2f}x")
print(f"{name}: ZipMoE end-to-end speedup " + ", ".join(summary) + f" -> {out}/{name}.png")
