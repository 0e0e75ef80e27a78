#!/usr/bin/env python3
"""Fig. 9 of "Mixture of Cache-Conditional Experts", miss-rate side: parameters loaded from flash per token.

Usage: plot.py OUT_DIR   (reads OUT_DIR/<trace>.{lru,belady}.json from `moesim replay --json`; writes
cce-fig9.csv, cce-fig9.md (the README's table) and cce-fig9.png/.pdf)

x: routed-expert parameters read from flash per decode token (decode misses x parameters per expert, from the
model preset); y: the routing deviation (mean share of a token's top-k router weight moved off removed
experts), where the paper has Wikitext perplexity. LRU and Belady are lossless (deviation 0).
"""
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir()
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TRACES = [("qwen1.5-moe-a2.7b", "Qwen1.5-MoE (SYNTHETIC)"), ("deepseek-v2-lite", "DeepSeek-V2-Lite (SYNTHETIC)"),
          ("phi-3.5-moe", "Phi-3.5-MoE (SYNTHETIC)"), ("mixtral-8x7b", "Mixtral-8x7B (SYNTHETIC)"),
          ("qwen3-30b-a3b", "Qwen3-30B-A3B (real, synth. logits)"),
          ("gpt-oss-120b", "gpt-oss-120b (real, synth. logits)")]


def params_per_expert(model):
    d = json.load(open(os.path.join(root, "data", "models", model + ".json")))
    return sum(math.prod(t["shape"]) for t in d["expert_tensors"])


rows = []
for name, label in TRACES:
    ppe = params_per_expert(name)
    for ev in ("lru", "belady"):
        d = json.load(open(os.path.join(out, f"{name}.{ev}.json")))
        tokens = d["trace"]["decode_tokens"]
        for r in d["results"]:
            misses = r["router_decode_lookups"] * r["decode_miss_rate_vs_router"]
            method, _, param = r["routing"].partition(":")
            rows.append({"trace": name, "label": label, "eviction": ev, "routing": r["routing"],
                         "lambda": float(param.split(",")[0].split("=")[1]) if method == "cache-prior" else "",
                         "cache": f"{r['capacity_value']} / {d['trace']['experts']}",
                         "params_per_expert": ppe, "decode_miss_rate": r["decode_miss_rate_vs_router"],
                         "mparams_per_token": misses * ppe / tokens / 1e6,
                         "mass_mean": r["routing_deviation"]["mass_replaced_mean"] or 0.0,
                         "changed_fraction": r["routing_deviation"]["changed_fraction"]})
with open(os.path.join(out, "cce-fig9.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)

fig, axes = plt.subplots(2, 3, figsize=(11.5, 6.6))
summary = []
for ax, (name, label) in zip(axes.flat, TRACES):
    lru = next(r for r in rows if r["trace"] == name and r["eviction"] == "lru" and r["routing"] == "identity")
    bel = next(r for r in rows if r["trace"] == name and r["eviction"] == "belady")
    cp = sorted((r for r in rows if r["trace"] == name and r["lambda"] != ""), key=lambda r: r["lambda"])
    ax.plot([r["mparams_per_token"] for r in cp], [100 * r["mass_mean"] for r in cp], "-o", ms=3,
            color="tab:purple", label="Cache-Prior (LRU), λ = 0 .. 1")
    for r in cp:
        if r["lambda"] in (0.1, 0.25, 0.5, 1.0):
            ax.annotate(f"λ={r['lambda']:g}", (r["mparams_per_token"], 100 * r["mass_mean"]), fontsize=6,
                        xytext=(3, 3), textcoords="offset points", color="tab:purple")
    ax.plot(lru["mparams_per_token"], 0, "ks", ms=7, label="LRU (original routing)")
    ax.plot(bel["mparams_per_token"], 0, "*", color="tab:green", ms=11, label="Optimal (Belady, original routing)")
    ax.axvline(bel["mparams_per_token"], color="tab:green", ls=":", lw=0.8)
    match = next((r for r in cp if r["mparams_per_token"] <= bel["mparams_per_token"]), None)
    summary.append((name, lru["mparams_per_token"], bel["mparams_per_token"], match))
    ax.set_title(f"{label}, cache {lru['cache']}", fontsize=8)
    ax.set_xlabel("expert parameters loaded from flash per token (M)", fontsize=8)
    ax.set_ylabel("router weight replaced (%)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
axes.flat[0].legend(fontsize=7)
fig.suptitle("Cache-Conditional Experts, Fig. 9 (miss-rate side): flash loads vs deviation (not perplexity); "
             "half the experts cached.\nSYNTHETIC Zipf traces with logits / REAL routing with SYNTHETIC logits",
             fontsize=9)
fig.tight_layout()
plotlib.save(fig, out, "cce-fig9")
# The README's table (OUT/cce-fig9.md, pasted there verbatim and checked by scripts/check-figures).
with open(os.path.join(out, "cce-fig9.md"), "w") as f:
    f.write("| trace | params/expert | LRU: M params/token (miss) | Belady | Belady / LRU | Cache-Prior at Belady's loads "
            "(weight moved) | λ = 0.5 (weight moved) |\n|---|---|---|---|---|---|---|\n")
    for (name, label), (_, lru_p, bel_p, m) in zip(TRACES, summary):
        lru = next(r for r in rows if r["trace"] == name and r["eviction"] == "lru" and r["routing"] == "identity")
        bel = next(r for r in rows if r["trace"] == name and r["eviction"] == "belady")
        half = next(r for r in rows if r["trace"] == name and r["lambda"] == 0.5)
        at = f"λ={m['lambda']:g}: {m['mparams_per_token']:.1f}, {100 * m['mass_mean']:.1f}%" if m else "never"
        f.write(f"| {label.replace(', synth. logits', ' routing').replace('real', 'real')} | "
                f"{lru['params_per_expert'] / 1e6:.1f}M | {lru_p:.1f} ({100 * lru['decode_miss_rate']:.1f}%) | "
                f"{bel_p:.1f} ({100 * bel['decode_miss_rate']:.1f}%) | {bel_p / lru_p:.2f} | {at} | "
                f"{half['mparams_per_token']:.1f}, {100 * half['mass_mean']:.1f}% |\n")
parts = []
for name, lru, bel, m in summary:
    s = f"{name} Belady/LRU {bel / lru:.2f}"
    s += f", Cache-Prior matches Belady at λ={m['lambda']:g} ({100 * m['mass_mean']:.1f}% weight)" if m else ""
    parts.append(s)
print("cce-fig9: " + "; ".join(parts))
