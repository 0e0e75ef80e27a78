#!/usr/bin/env python3
"""Prefetch accuracy vs TPOT: the oracle predictor's curve, the learned predictors placed at their accuracy.

Usage: plot.py OUT_DIR   (reads OUT_DIR/results.csv of the sweep; writes prefetch-accuracy.csv and
prefetch-accuracy.png/.pdf)

x is the MEASURED accuracy (issued prefetch loads that their target invocation used), not the oracle's
nominal P: an oracle's wrong guesses can still be used by a later token, and its right ones can be declined.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir()
rows = plotlib.read_csv(out, "results.csv")
table = []
for r in rows:
    pf = r["prefetch"] or "none"
    kind = pf.split(":")[0]
    table.append({"system": r["system"], "prefetch": pf, "kind": kind,
                  "nominal_accuracy": float(pf.split("=")[1]) if kind == "oracle" else "",
                  "measured_accuracy": float(r["prefetch_accuracy"]) if r["prefetch_accuracy"] else "",
                  "coverage": float(r["prefetch_coverage"] or 0), "tpot_ms": 1e3 * float(r["tpot_mean_s"]),
                  "hit_rate": float(r["hit_rate"]), "ssd_gib": float(r["ssd_bytes_read"]) / 2**30})
with open(os.path.join(out, "prefetch-accuracy.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(table[0].keys()))
    w.writeheader()
    w.writerows(table)

LEARNED = [("transition", "s", "tab:blue"), ("popularity", "^", "tab:orange"), ("temporal", "D", "tab:red")]
fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.2))
summary = []
for ax, system, title in [(axes[0], "offload", "offload (expert cache, LRU)"), (axes[1], "zipmoe", "ZipMoE")]:
    mine = [t for t in table if t["system"] == system]
    none = next(t for t in mine if t["kind"] == "none")
    oracle = sorted((t for t in mine if t["kind"] == "oracle"), key=lambda t: t["nominal_accuracy"])
    ax.axhline(none["tpot_ms"], color="k", ls="--", lw=1, label=f"no prefetch ({none['tpot_ms']:.0f} ms)")
    ax.plot([100 * t["measured_accuracy"] for t in oracle], [t["tpot_ms"] for t in oracle], "-o", ms=4,
            color="tab:purple", label="oracle:accuracy=P (P = 0.05 .. 1)")
    for t in oracle:
        if t["nominal_accuracy"] in (0.05, 0.5, 0.9, 1.0):
            ax.annotate(f"P={t['nominal_accuracy']:g}", (100 * t["measured_accuracy"], t["tpot_ms"]), fontsize=7,
                        xytext=(3, 4), textcoords="offset points", color="tab:purple")
    for kind, marker, color in LEARNED:
        t = next(t for t in mine if t["kind"] == kind)
        if t["measured_accuracy"] == "":  # issued nothing
            ax.plot([], [], marker, color=color, label=f"{kind}: issued no prefetch")
            continue
        ax.plot(100 * t["measured_accuracy"], t["tpot_ms"], marker, ms=8, color=color,
                label=f"{kind} ({100 * t['measured_accuracy']:.0f}% accurate)")
    # Break-even: the least measured accuracy from which the oracle is no slower than no prefetch.
    even = next((t for t in oracle if t["tpot_ms"] <= none["tpot_ms"]), None)
    summary.append(f"{system}: no prefetch {none['tpot_ms']:.1f} ms, oracle P=1 {oracle[-1]['tpot_ms']:.1f} ms, "
                   + (f"break-even at P={even['nominal_accuracy']:g} ({100 * even['measured_accuracy']:.0f}% measured)"
                      if even else "no break-even"))
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("measured prefetch accuracy (%)")
    ax.set_ylabel("mean TPOT (ms)")
    ax.set_xlim(-2, 102)
    if system == "offload":
        ax.set_ylim(0, None)
    else:
        ax.set_title(title + " (y axis not from 0)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
fig.suptitle("Prefetch accuracy vs TPOT: Qwen3-30B-A3B REAL routing, BF16 experts, 4 GiB, simulated Jetson AGX "
             "Orin 64GB\n(learned predictors trained on a SYNTHETIC trace fitted to the real one)", fontsize=9)
fig.tight_layout()
plotlib.save(fig, out, "prefetch-accuracy")
print("prefetch-accuracy: " + "; ".join(summary))
