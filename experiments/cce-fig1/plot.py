#!/usr/bin/env python3
"""Cache-Conditional Experts Fig. 1 (right) / §4.5: Cache-Prior's decode speed-up over the original routing on a
simulated phone, against lambda.

Usage: plot.py OUT_DIR   (reads OUT_DIR/sweep/points/*.json; writes speedups.csv, table.md and cce-fig1.png/.pdf)

The speed-up is decode tokens/s over the original routing's (identity, LRU) on the same trace, as the paper
takes its best LRU throughput as 1x; the deviation is the mean share of a token's top-k router weight moved off
the experts the routing removed (perplexity needs the model).
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
runs = {}
for f in glob.glob(os.path.join(out, "sweep", "points", "*.json")):
    j = json.load(open(f))
    runs[(j["point"]["trace"].replace(".mtr", ""), j["point"]["routing"])] = j["metrics"]
traces = sorted({t for t, _ in runs})
rows = []
for (trace, routing), m in sorted(runs.items()):
    base = runs[(trace, "identity")]
    params = dict(kv.split("=") for kv in routing.split(":", 1)[1].split(",")) if ":" in routing else {}
    rows.append({"trace": trace, "routing": routing, "lambda": float(params.get("lambda", 0)),
                 "J": int(params["J"]) if "J" in params else "", "tpot_ms": 1e3 * m["tpot"]["mean_s"],
                 "decode_tokens_per_s": m["decode_tokens_per_s"],
                 "speedup": m["decode_tokens_per_s"] / base["decode_tokens_per_s"],
                 "decode_miss_rate": 1 - m["cache"]["decode_hit_rate"],
                 "mass_replaced_mean": m["routing_deviation"]["mass_replaced_mean"] or 0.0})
rows.sort(key=lambda r: (r["trace"], r["J"] if r["J"] != "" else 0, r["lambda"]))
with open(os.path.join(out, "speedups.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)

# The README's table, pasted there as it is: short prompt seed 1 and the long prompt, per routing.
with open(os.path.join(out, "table.md"), "w") as f:
    f.write("| routing | speed-up, short | speed-up, long | decode miss rate, short | router weight replaced, short |\n"
            "|---|---|---|---|---|\n")
    for s in (r for r in rows if r["trace"] == "short-s1"):
        lng = next(r for r in rows if r["trace"] == "long-s1" and r["routing"] == s["routing"])
        name = "original (LRU)" if s["routing"] == "identity" else f"Cache-Prior λ = {s['lambda']:g}, J = {s['J']}"
        f.write(f"| {name} | {s['speedup']:.2f}x | {lng['speedup']:.2f}x | {100 * s['decode_miss_rate']:.1f}% | "
                f"{100 * s['mass_replaced_mean']:.1f}% |\n")

fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
i = 0
for trace in traces:
    for J in (1, 2):
        pts = [r for r in rows if r["trace"] == trace and (r["J"] == J or r["routing"] == "identity")]
        pts.sort(key=lambda r: r["lambda"])
        label = f"{trace.replace('-s', ' prompt, seed ')}, J = {J}"
        axes[0].plot([r["lambda"] for r in pts], [r["speedup"] for r in pts], label=label,
                     **plotlib.series_style(i))
        axes[1].plot([100 * r["mass_replaced_mean"] for r in pts], [r["speedup"] for r in pts], label=label,
                     **plotlib.series_style(i))
        i += 1
axes[0].axhline(2.0, color="k", lw=0.8, ls=":")
axes[0].text(0.0, 2.03, "the paper: over 2x", fontsize=7)
axes[0].set_xlabel("Cache-Prior λ (0 = original routing)")
axes[0].set_ylabel("decode speed-up over original routing + LRU")
axes[1].set_xlabel("router weight replaced (%)")
axes[1].set_ylabel("decode speed-up")
axes[1].legend(fontsize=6.5, ncol=2)
fig.suptitle("Cache-Conditional Experts Fig. 1 (right), simulated: Qwen1.5-MoE-A2.7B Q4_0 on a 12 GB Snapdragon 8 "
             "Gen 3 phone (CPU), 30 of 60 experts per layer cached (LRU), SYNTHETIC traces", fontsize=9)
fig.tight_layout()
plotlib.save(fig, out, "cce-fig1")
best = max(rows, key=lambda r: r["speedup"])
print(f"cce-fig1: speed-up up to {best['speedup']:.2f}x ({best['trace']}, {best['routing']})")
