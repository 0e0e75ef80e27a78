#!/usr/bin/env python3
"""Prism Fig. 5: a layer's latency against the share of its experts executed on other servers.

Usage: plot.py OUT_DIR   (reads OUT_DIR/gpus*.json from `moesim cluster --json`; writes fig5.csv and
prism-fig5.png/.pdf)

One point per server and cluster: its share of expert invocations executed remotely (1 - its local compute
ratio), the share of its layer passes that call at least one remote expert, its decode time per MoE layer (mean
TPOT / the model's 26 MoE layers) and its mean request latency.
"""
import csv
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir()
MOE_LAYERS = 26  # DeepSeek-V2-Lite (data/models/deepseek-v2-lite.json: moe_layers)

rows = []
for f in sorted(glob.glob(os.path.join(out, "gpus*.json"))):
    if f.endswith(".servers.json"):
        continue
    j = json.load(open(f))
    split = os.path.basename(f)[len("gpus"):-len(".json")]
    gpus = [int(g) for g in split.split("-")]
    for i, g in enumerate(gpus):
        s = f"server{i + 1}"
        remote = 1 - j["local_compute_ratio"]["per_server"][s]
        rows.append({"cluster_gpus": split.replace("-", ":"), "server": s, "gpus": g,
                     "gpu_share": g / sum(gpus), "remote_share": remote,
                     "remote_pass_share": j["passes"]["per_server"][s]["remote_pass_share"],
                     "decode_ms_per_layer": 1e3 * j["tpot"]["per_server"][s]["mean_s"] / MOE_LAYERS,
                     "tpot_ms": 1e3 * j["tpot"]["per_server"][s]["mean_s"],
                     "latency_s": j["latency"]["per_server"][s]["mean_s"],
                     "requests": j["latency"]["per_server"][s]["count"]})
rows.sort(key=lambda r: r["remote_share"])
local = rows[0]
for r in rows:
    r["vs_all_local"] = r["decode_ms_per_layer"] / local["decode_ms_per_layer"]
with open(os.path.join(out, "fig5.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)

fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
xs = [100 * r["remote_share"] for r in rows]
axes[0].plot(xs, [r["decode_ms_per_layer"] for r in rows], **plotlib.series_style(0))
axes[0].set_ylabel("decode time per MoE layer (ms)")
axes[1].plot(xs, [r["latency_s"] for r in rows], **plotlib.series_style(1))
axes[1].set_ylabel("mean request latency (s)")
for ax in axes:
    ax.set_xlabel("experts executed on another server (%)")
    ax.set_ylim(bottom=0)
plotlib.label_points(axes[0], xs, [r["decode_ms_per_layer"] for r in rows],
                     [f"{r['cluster_gpus']} s{r['server'][-1]}" for r in rows], fontsize=6)
fig.suptitle("Prism Fig. 5 (simulated): layer latency against the share of experts executed remotely. "
             "DeepSeek-V2-Lite, SYNTHETIC traces, Uniform placement\nover two servers of k : 8 - k GPUs "
             "(labels: the split and the server) and one of 8; 500 Mbit/s between servers", fontsize=9)
fig.tight_layout()
plotlib.save(fig, out, "prism-fig5")
print(f"prism-fig5: {len(rows)} points, remote share {xs[0]:.0f}-{xs[-1]:.0f}%, per-layer decode "
      f"{rows[0]['decode_ms_per_layer']:.2f} -> {rows[-1]['decode_ms_per_layer']:.2f} ms")
