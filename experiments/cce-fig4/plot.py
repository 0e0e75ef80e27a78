#!/usr/bin/env python3
"""Fig. 4 of "Mixture of Cache-Conditional Experts", miss-rate side: deviation vs cache miss rate per method.

Usage: plot.py OUT_DIR [NAME [D]]   (reads OUT_DIR/<trace>.json from `moesim replay --json`, run with 1/D of the
experts cached, default 2; writes NAME.csv, NAME-halving.csv and NAME.png/.pdf, NAME default cce-fig4: the
paper's Fig. 14 is the same plot at a quarter, experiments/cce-fig14)

The paper plots Wikitext perplexity against the miss rate; perplexity needs the model, so the y axis here is
the deviation moesim measures: the mean share of a token's top-k router weight moved off removed experts.
Each method's curve is its Pareto front (lowest deviation for a given miss rate), as in the paper. The miss
rate is the decode-only one (misses / the router's lookups): the synthetic traces have no prompt, so it is
their whole miss rate; the real traces are short (64-128 decode tokens after one prompt pass), and their
prompt pass, mostly first uses that no routing avoids, would otherwise dominate.
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir("plot.py OUT_DIR [NAME [D]]")
name_out = sys.argv[2] if len(sys.argv) > 2 else "cce-fig4"
divisor = int(sys.argv[3]) if len(sys.argv) > 3 else 2
share = {2: "half", 4: "a quarter of"}.get(divisor, f"1/{divisor} of")
figure = {2: "Fig. 4", 4: "Fig. 14"}.get(divisor, "Fig. 4")
TRACES = [("qwen1.5-moe-a2.7b", "Qwen1.5-MoE (SYNTHETIC)"), ("deepseek-v2-lite", "DeepSeek-V2-Lite (SYNTHETIC)"),
          ("phi-3.5-moe", "Phi-3.5-MoE (SYNTHETIC)"), ("mixtral-8x7b", "Mixtral-8x7B (SYNTHETIC)"),
          ("qwen3-30b-a3b", "Qwen3-30B-A3B (real, synth. logits)"),
          ("gemma-4-26b-a4b", "Gemma-4-26B-A4B (real, synth. logits)"),
          ("gpt-oss-120b", "gpt-oss-120b (real, synth. logits)")]
METHODS = [("prune", "Pruning", "tab:red"), ("max-rank", "Max-Rank", "tab:blue"),
           ("cumsum", "Cumsum-Threshold", "tab:orange"), ("cache-prior", "Cache-Prior", "tab:purple")]

rows = []
for name, label in TRACES:
    d = json.load(open(os.path.join(out, name + ".json")))
    for r in d["results"]:
        method, _, param = r["routing"].partition(":")
        rows.append({"trace": name, "label": label, "method": method, "param": param,
                     "cache": f"{r['capacity_value']} / {d['trace']['experts']}",
                     "miss_rate": r["decode_miss_rate_vs_router"], "all_lookups_miss_rate": r["miss_rate_vs_router"],
                     "changed_fraction": r["routing_deviation"]["changed_fraction"],
                     "mass_mean": r["routing_deviation"]["mass_replaced_mean"] or 0.0,
                     "lifetime_mean": r["cache_lifetime"]["mean_tokens"]})
with open(os.path.join(out, name_out + ".csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)


def front(points):
    """Pareto front: sorted by miss rate, each point with less deviation than every point of lower miss."""
    best, keep = float("inf"), []
    for p in sorted(points, key=lambda p: (p["mass_mean"], p["miss_rate"])):
        if p["miss_rate"] < best:
            keep.append(p)
            best = p["miss_rate"]
    return sorted(keep, key=lambda p: p["miss_rate"])


halving = []
fig, axes = plt.subplots(2, 4, figsize=(13, 6.4))
for ax, (name, label) in zip(axes.flat, TRACES):
    base = next(r for r in rows if r["trace"] == name and r["method"] == "identity")
    target = base["miss_rate"] / 2
    for method, mlabel, color in METHODS:
        pts = [r for r in rows if r["trace"] == name and r["method"] == method] + [base]
        fr = front(pts)
        ax.plot([100 * p["miss_rate"] for p in fr], [100 * p["mass_mean"] for p in fr], "-o", ms=3, color=color,
                label=mlabel, lw=1.2)
        ok = [p for p in fr if p["miss_rate"] <= target]
        halving.append({"trace": name, "method": method, "lru_miss_rate": base["miss_rate"],
                        "min_mass_to_halve": min(p["mass_mean"] for p in ok) if ok else "",
                        "best_miss_rate": min(p["miss_rate"] for p in pts)})
    ax.plot(100 * base["miss_rate"], 0, "k*", ms=10, label="original routing (LRU)", zorder=5)
    ax.axvline(100 * target, color="gray", ls=":", lw=0.8)
    ax.set_title(f"{label}, cache {base['cache']}", fontsize=8)
    ax.set_xlabel("cache miss rate, decode (%)", fontsize=8)
    ax.set_ylabel("router weight replaced (%)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    # Pruning's deviation runs far above the others (it drops weight outright): clip it, keep the others legible.
    top = max(100 * r["mass_mean"] for r in rows if r["trace"] == name and r["method"] != "prune")
    ax.set_ylim(-0.5, 1.8 * top)
handles, labels = axes.flat[0].get_legend_handles_labels()
axes.flat[-1].axis("off")
axes.flat[-1].legend(handles, labels, loc="center", fontsize=9,
                     title=f"LRU, {share} the experts cached;\ndotted: half the original miss rate;\n"
                     "Pruning clipped at the top", title_fontsize=8)
fig.suptitle(f"Cache-Conditional Experts, {figure} (miss-rate side): deviation (not perplexity) vs miss rate. "
             "SYNTHETIC Zipf traces with logits / REAL routing with SYNTHETIC logits", fontsize=9)
fig.tight_layout()
plotlib.save(fig, out, name_out)
with open(os.path.join(out, name_out + "-halving.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(halving[0].keys()))
    w.writeheader()
    w.writerows(halving)
cp = [h for h in halving if h["method"] == "cache-prior" and h["min_mass_to_halve"] != ""]
print(f"{name_out}: {len(rows)} replays over {len(TRACES)} traces; Cache-Prior halves the LRU miss rate on "
      f"{len(cp)} of {len(TRACES)} at a mean replaced router weight of "
      + ", ".join(f"{100 * h['min_mass_to_halve']:.1f}%" for h in cp))
