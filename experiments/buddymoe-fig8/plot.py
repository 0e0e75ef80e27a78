#!/usr/bin/env python3
"""BuddyMoE Fig. 8: PCIe traffic of the base system against BuddyMoE, from the runs' timelines.

Usage: plot.py OUT_DIR   (reads OUT_DIR/{deepseek,qwen3}-{base,buddy}.json and .timeline.json; writes
traffic.csv, per-token.csv and buddymoe-fig8.png/.pdf)

A link transfer counts toward the step (token) its timeline event names and toward the one-second bin of
simulated time it starts in. "second half": the decode tokens after the first half of the run's decode steps,
where the empty GPU cache's first loads are over.
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir()
TRACES = [("deepseek", "DeepSeek-V2-Lite, SYNTHETIC trace (Zipf 1.0), c = 0.5"),
          ("qwen3", "Qwen3-30B-A3B, REAL routing, c = 0.5")]
METHODS = [("base", "Base (Original, on demand)"), ("buddy", "BuddyMoE τ=0.95 |B|=16 ρ=3")]
BIN_S = 1.0


def link_transfers(path):
    """(start s, step, bytes) of every transfer on the timeline's link process."""
    with open(path) as f:
        j = json.load(f)
    events = j["traceEvents"] if isinstance(j, dict) else j
    link = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
            and e["args"]["name"] == "link"}
    steps = {e["args"]["step"]: e["args"]["phase"] for e in events if e.get("ph") == "X" and e.get("pid") == 1
             and "phase" in e.get("args", {})}
    return [(e["ts"] * 1e-6, e["args"]["step"], e["args"]["bytes"]) for e in events
            if e.get("ph") == "X" and e.get("pid") in link], steps


traffic, per_token, series = [], [], {}
for trace, _ in TRACES:
    for method, _ in METHODS:
        m = json.load(open(os.path.join(out, f"{trace}-{method}.json")))["metrics"]
        xfers, steps = link_transfers(os.path.join(out, f"{trace}-{method}.timeline.json"))
        decode = sorted(s for s, ph in steps.items() if ph == "decode")
        by_step = {s: 0 for s in decode}
        for _, s, b in xfers:
            if s in by_step:
                by_step[s] += b
        half = decode[len(decode) // 2:]
        bins = [0.0] * (int(m["makespan_s"] / BIN_S) + 1)
        for t, _, b in xfers:
            bins[min(int(t / BIN_S), len(bins) - 1)] += b
        series[(trace, method)] = ([by_step[s] / 2**20 for s in decode], [b / BIN_S / 1e9 for b in bins])
        link_bytes = m["resources"]["link"]["bytes"]
        assert sum(b for _, _, b in xfers) == link_bytes, "the timeline's transfers are the run's link bytes"
        traffic.append({"trace": trace, "method": method, "decode_tokens": len(decode),
                        "link_gib": link_bytes / 2**30, "decode_link_mib_per_token":
                        sum(by_step.values()) / len(decode) / 2**20,
                        "second_half_link_mib_per_token": sum(by_step[s] for s in half) / len(half) / 2**20,
                        "ttft_s": m["ttft"]["mean_s"], "makespan_s": m["makespan_s"], "mean_link_gb_per_s": link_bytes / m["makespan_s"] / 1e9,
                        "link_busy": m["resources"]["link"]["utilization"],
                        "decode_tokens_per_s": m["decode_tokens_per_s"]})
        for i, s in enumerate(decode):
            per_token.append({"trace": trace, "method": method, "decode_token": i, "link_mib": by_step[s] / 2**20})
for r in traffic:  # BuddyMoE against the base run of the same trace
    base = next(x for x in traffic if x["trace"] == r["trace"] and x["method"] == "base")
    for k in ("link_gib", "second_half_link_mib_per_token", "mean_link_gb_per_s"):
        r[f"{k}_vs_base"] = r[k] / base[k] - 1
with open(os.path.join(out, "traffic.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(traffic[0].keys()))
    w.writeheader()
    w.writerows(traffic)
with open(os.path.join(out, "per-token.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(per_token[0].keys()))
    w.writeheader()
    w.writerows(per_token)

fig, axes = plt.subplots(2, 2, figsize=(12, 7))
for row, (trace, title) in zip(axes, TRACES):
    for i, (method, label) in enumerate(METHODS):
        tokens, gbps = series[(trace, method)]
        k = 8  # a rolling mean over 8 tokens: one token's traffic is a handful of whole experts
        smooth = [sum(tokens[max(0, j - k + 1):j + 1]) / len(tokens[max(0, j - k + 1):j + 1])
                  for j in range(len(tokens))]
        for ax, ys, xs in ((row[0], gbps, [BIN_S * (j + 0.5) for j in range(len(gbps))]),
                           (row[1], smooth, range(len(smooth)))):
            ax.plot(xs, ys, label=label, markevery=max(1, len(ys) // 25), **plotlib.series_style(i))
    row[0].set_xlabel("simulated time (s)")
    row[0].set_ylabel(f"PCIe GB/s ({BIN_S:g} s bins)")
    row[1].set_xlabel("decode token")
    row[1].set_ylabel("PCIe MiB per token (mean of 8)")
    row[0].set_title(title, fontsize=9)
    row[1].set_title(title, fontsize=9)
    for ax in row:
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
fig.suptitle("BuddyMoE Fig. 8: PCIe traffic, base against BuddyMoE, on the paper's A100 + llama.cpp at its measured "
             "costs (9.5 ms per expert load),\nper-layer LRU GPU cache of half the experts (empty at the start), "
             "every expert in host memory", fontsize=9)
fig.tight_layout()
plotlib.save(fig, out, "buddymoe-fig8")
print("buddymoe-fig8: " + "; ".join(f"{r['trace']} {r['method']}: {r['link_gib']:.1f} GiB, "
                                    f"{r['mean_link_gb_per_s']:.2f} GB/s" for r in traffic))
