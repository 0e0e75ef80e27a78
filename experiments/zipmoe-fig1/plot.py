"""ZipMoE Fig. 1 from OUT/<trace>-<budget>-<env>.{run,timeline}.json (moesim run --json --timeline): the share of
decode time the GPU is idle waiting for experts, per trace, cache size and environment, against the paper's
(§2.2: 38.5% on a server to 80.1% on an edge device for decoder-only models). Writes OUT/fig1.csv and
OUT/zipmoe-fig1.png/.pdf.

Stall share = 1 - (the union of the GPU's dense, expert and recover ops inside decode steps) / (the decode
steps' time): what the GPU does not spend computing, it spends waiting for reads and transfers."""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir()
TRACES = [("qwen3", "Qwen3-30B-A3B, REAL routing, BF16"), ("deepseek", "DeepSeek-V2-Lite, SYNTHETIC Zipf 1.0")]
ENVS = [("server", "server: experts in host DRAM (H100, PCIe-class link)", 0.385),
        ("edge", "edge: experts on NVMe SSD (Jetson AGX Orin 64GB)", 0.801)]
BUDGETS = [25, 50]
GPU_PID = 7  # docs/timeline.md: the GPU's process in the timeline


def union(intervals):
    total, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def stall(path):
    """(decode seconds, GPU-busy seconds within them) of one timeline."""
    with open(path) as f:
        ev = json.load(f)
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("ph") == "X" and e.get("pid") == 1
             and e.get("args", {}).get("phase") == "decode" and e["name"].startswith("step ")]
    steps.sort()
    gpu = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("ph") == "X" and e.get("pid") == GPU_PID]
    busy = []
    for a, b in gpu:  # clipped to the decode steps (ops of a prefill step are left out)
        for s0, s1 in steps:
            if b > s0 and a < s1:
                busy.append((max(a, s0), min(b, s1)))
    return sum(s1 - s0 for s0, s1 in steps) / 1e6, union(busy) / 1e6


rows = []
for t, _ in TRACES:
    for b in BUDGETS:
        for env, _, paper in ENVS:
            stem = os.path.join(out, f"{t}-{b}-{env}")
            with open(stem + ".run.json") as f:
                m = json.load(f)["metrics"]
            decode_s, busy_s = stall(stem + ".timeline.json")
            rows.append({"trace": t, "budget_pct": b, "env": env, "tpot_ms": "%.4f" % (1e3 * m["tpot"]["mean_s"]),
                         "decode_s": "%.6f" % decode_s, "gpu_busy_s": "%.6f" % busy_s,
                         "stall_share": "%.4f" % (1 - busy_s / decode_s),
                         "decode_hit_rate": "%.4f" % m["cache"]["decode_hit_rate"], "paper_stall_share": paper})
with open(os.path.join(out, "fig1.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)

fig, axes = plt.subplots(1, len(TRACES), figsize=(11, 4.2), sharey=True)
width = 0.36
for ax, (t, title) in zip(axes, TRACES):
    for k, (env, label, paper) in enumerate(ENVS):
        xs = [i + (k - 0.5) * width for i in range(len(BUDGETS))]
        share = [100 * float(next(r for r in rows if r["trace"] == t and r["budget_pct"] == b and r["env"] == env)
                             ["stall_share"]) for b in BUDGETS]
        color = ("tab:blue", "tab:red")[k]
        ax.bar(xs, share, width, color=color, label=label)
        ax.bar(xs, [100 - s for s in share], width, bottom=share, color=color, alpha=0.18)
        for x, s in zip(xs, share):
            ax.text(x, s + 1.5, f"{s:.1f}%", ha="center", fontsize=7.5)
        ax.axhline(100 * paper, color=color, ls="--", lw=1, label=f"paper, {env}: {100 * paper:.1f}%")
    ax.set_xticks(range(len(BUDGETS)))
    ax.set_xticklabels([f"GPU cache: {b}% of experts" for b in BUDGETS])
    ax.set_title(title, fontsize=9)
    ax.set_ylim(0, 105)
axes[0].set_ylabel("decode time stalled on I/O (%)\n(light: computing)")
fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=8)
fig.suptitle("ZipMoE Fig. 1 in moesim (simulated): share of decode time the GPU waits for experts, expert-level "
             "LRU offloading, warm", fontsize=10)
fig.tight_layout(rect=(0, 0.08, 1, 1))
plotlib.save(fig, out, "zipmoe-fig1")
print("zipmoe-fig1: " + "; ".join(f"{r['trace']} {r['budget_pct']}% {r['env']} {100 * float(r['stall_share']):.1f}%"
                                  for r in rows))
