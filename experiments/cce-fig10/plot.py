#!/usr/bin/env python3
"""Fig. 10 of "Mixture of Cache-Conditional Experts", miss-rate side: miss rate against cache size.

Usage: plot.py OUT_DIR   (reads OUT_DIR/<trace>.{lru,belady}.json from `moesim replay --json`; writes
cce-fig10.csv, cce-fig10-best.csv, cce-fig10-counts.csv, cce-fig10.md (the README's table) and\ncce-fig10.png/.pdf)

Cache-Prior's lambda is chosen per model and cache size as the one of least miss rate whose routing deviation
(mean share of each token's top-k router weight moved off removed experts) stays within 1%, 5% or 10%: the
paper's thresholds are on the perplexity increase, which needs the model. Miss rates are decode-only (the
synthetic traces have no prompt; the real ones are short, and their one prompt pass would dominate).
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir()
TRACES = [("qwen1.5-moe-a2.7b", "Qwen1.5-MoE (SYNTHETIC)"), ("deepseek-v2-lite", "DeepSeek-V2-Lite (SYNTHETIC)"),
          ("phi-3.5-moe", "Phi-3.5-MoE (SYNTHETIC)"), ("mixtral-8x7b", "Mixtral-8x7B (SYNTHETIC)"),
          ("qwen3-30b-a3b", "Qwen3-30B-A3B (real, synth. logits)"),
          ("gemma-4-26b-a4b", "Gemma-4-26B-A4B (real, synth. logits)"),
          ("gpt-oss-120b", "gpt-oss-120b (real, synth. logits)")]
# The 1% curve often lies on LRU's: LRU is black and dashed with hollow squares, each cap its own hue, marker and
# line style, so the two stay apart where they coincide.
CAPS = [(0.01, {"color": "tab:orange", "marker": "^", "linestyle": ":", "markerfacecolor": "none", "ms": 5}),
        (0.05, {"color": "#9467bd", "marker": "D", "linestyle": "-.", "ms": 3}),
        (0.10, {"color": "#4b2a7a", "marker": "o", "linestyle": "-", "ms": 3})]

rows = []
for name, label in TRACES:
    for ev in ("lru", "belady"):
        d = json.load(open(os.path.join(out, f"{name}.{ev}.json")))
        for r in d["results"]:
            method, _, param = r["routing"].partition(":")
            rows.append({"trace": name, "eviction": ev, "routing": r["routing"],
                         "lambda": float(param.split(",")[0].split("=")[1]) if method == "cache-prior" else 0.0,
                         "cache_size": r["capacity_value"], "experts": d["trace"]["experts"],
                         "top_k": d["trace"]["top_k"], "decode_miss_rate": r["decode_miss_rate_vs_router"],
                         "miss_rate": r["miss_rate_vs_router"],
                         "mass_mean": r["routing_deviation"]["mass_replaced_mean"] or 0.0,
                         "changed_fraction": r["routing_deviation"]["changed_fraction"]})
with open(os.path.join(out, "cce-fig10.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)

best = []
fig, axes = plt.subplots(2, 4, figsize=(13, 6.2))
for ax, (name, label) in zip(axes.flat, TRACES):
    mine = [r for r in rows if r["trace"] == name]
    sizes = sorted({r["cache_size"] for r in mine})
    lru = [next(r for r in mine if r["cache_size"] == s and r["eviction"] == "lru" and r["routing"] == "identity")
           for s in sizes]
    bel = [next(r for r in mine if r["cache_size"] == s and r["eviction"] == "belady") for s in sizes]
    ax.plot(sizes, [100 * r["decode_miss_rate"] for r in lru], "--s", ms=4, color="black", markerfacecolor="none",
            lw=1.1, label="LRU")
    ax.plot(sizes, [100 * r["decode_miss_rate"] for r in bel], "-*", ms=6, color="tab:green",
            label="Optimal (Belady)")
    for cap, style in CAPS:
        pts = []
        for s, b in zip(sizes, bel):
            ok = [r for r in mine if r["cache_size"] == s and r["eviction"] == "lru" and r["mass_mean"] <= cap]
            r = min(ok, key=lambda r: (r["decode_miss_rate"], r["lambda"]))
            pts.append(r)
            best.append({"trace": name, "cache_size": s, "experts": r["experts"], "mass_cap": cap, "lambda": r["lambda"],
                         "decode_miss_rate": r["decode_miss_rate"], "mass_mean": r["mass_mean"],
                         "lru_decode_miss_rate": next(x for x in lru if x["cache_size"] == s)["decode_miss_rate"],
                         "belady_decode_miss_rate": b["decode_miss_rate"],
                         "beats_belady": int(r["decode_miss_rate"] < b["decode_miss_rate"])})
        ax.plot(sizes, [100 * r["decode_miss_rate"] for r in pts], **style,
                label=f"Cache-Prior (LRU), deviation ≤ {100 * cap:.0f}%")
    k, e = mine[0]["top_k"], mine[0]["experts"]
    ax.set_title(f"{label}\n{e} experts, top-{k}", fontsize=8)
    ax.set_xlabel("cache size (experts per layer)", fontsize=8)
    ax.set_ylabel("cache miss rate, decode (%)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
handles, labels = axes.flat[0].get_legend_handles_labels()
axes.flat[-1].axis("off")
axes.flat[-1].legend(handles, labels, loc="center", fontsize=8,
                     title="λ per size: least miss rate within\nthe deviation cap (paper: perplexity cap)",
                     title_fontsize=8)
fig.suptitle("Cache-Conditional Experts, Fig. 10 (miss-rate side): miss rate vs cache size, from top-k to all "
             "experts. SYNTHETIC Zipf traces with logits / REAL routing with SYNTHETIC logits", fontsize=9)
fig.tight_layout()
plotlib.save(fig, out, "cce-fig10")
with open(os.path.join(out, "cce-fig10-best.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(best[0].keys()))
    w.writeheader()
    w.writerows(best)
summ = []
for cap, _ in CAPS:
    sel = [b for b in best if b["mass_cap"] == cap and b["cache_size"] < b["experts"]]
    summ.append(f"≤{100 * cap:.0f}%: {sum(b['beats_belady'] for b in sel)}/{len(sel)}")
# The README's table (OUT/cce-fig10.md, pasted there verbatim and checked by scripts/check-figures): per trace,
# at how many cache sizes below "all experts" Cache-Prior is below Belady, per cap.
with open(os.path.join(out, "cce-fig10.md"), "w") as f:
    f.write("| trace | " + " | ".join(f"≤ {100 * cap:.0f}%" for cap, _ in CAPS) + " |\n|---|---|---|---|\n")
    for name, label in TRACES:
        sel = {cap: [b for b in best if b["mass_cap"] == cap and b["cache_size"] < b["experts"] and b["trace"] == name]
               for cap, _ in CAPS}
        first = sel[CAPS[0][0]]
        f.write(f"| {label}, sizes {min(b['cache_size'] for b in first)}-{max(b['cache_size'] for b in first)} of "
                f"{first[0]['experts']} | " + " | ".join(f"{sum(b['beats_belady'] for b in v)}/{len(v)}"
                                                         for v in sel.values()) + " |\n")
# Per trace and cap: at how many cache sizes below "all experts" Cache-Prior is below Belady (the README's table).
with open(os.path.join(out, "cce-fig10-counts.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["trace", "mass_cap", "sizes_below_all", "beats_belady", "smallest_size", "largest_size", "experts"])
    for name, _ in TRACES + [("all", "")]:
        for cap, _ in CAPS:
            sel = [b for b in best if b["mass_cap"] == cap and b["cache_size"] < b["experts"]
                   and name in ("all", b["trace"])]
            w.writerow([name, cap, len(sel), sum(b["beats_belady"] for b in sel),
                        min(b["cache_size"] for b in sel), max(b["cache_size"] for b in sel),
                        sel[0]["experts"] if name != "all" else ""])
print("cce-fig10: (trace, size < all) points where Cache-Prior beats Belady, by deviation cap: " + ", ".join(summ))
