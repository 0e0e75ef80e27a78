"""Prism Table I from OUT/<method>.<rate>.json (moesim cluster --json; rate: the Poisson interval per server, s):
OUT/table1.csv (mean latency per server and overall beside the paper's, expert hit rates, unloaded service
times, redirected requests, the load), OUT/comparisons.csv (each method's reduction of the total mean latency
against another, ours and the paper's) and OUT/prism-table1.png/.pdf (latency per server, ours at each rate beside the paper's). Prints one
line per run.

Usage: plot.py OUT_DIR"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402
import numpy as np  # noqa: E402

out = plotlib.out_dir()
# method -> (label, the paper's Table I: server 1, 2, 3, total average in s; None for our controls)
methods = {"moe-infinity": ("MoE-Infinity", [9.14, 4.77, 3.18, 5.19]),
           "moe-infinity-lb": ("MoE-Infinity (w/ LB)", [8.60, 4.77, 3.10, 5.03]),
           "naive": ("Naive Collaboration (uniform)", [4.96, 4.34, 3.40, 4.11]),
           "naive-redundance": ("control: redundance placement", None),
           "moe-infinity-lru": ("control: MoE-Infinity, LRU cache", None),
           "moe-infinity-short": ("control: MoE-Infinity, 4-token answers", None),
           "moe-infinity-lb-short": ("control: MoE-Infinity (w/ LB), 4-token answers", None),
           "naive-short": ("control: Naive Collaboration, 4-token answers", None)}
short = [m for m in methods if m.endswith("-short")]
runs = [(m, 20) for m in methods] + [(m, 10) for m in ("moe-infinity", "moe-infinity-lb", "naive")]
res = {}
for m, rate in runs:
    name = "%s.%s%d.json" % (m, "short-" if m in short else "", rate)
    with open(os.path.join(out, name)) as f:
        res[(m, rate)] = json.load(f)
servers = list(res[("moe-infinity", 20)]["latency"]["per_server"].keys())

with open(os.path.join(out, "table1.csv"), "w", newline="") as f:
    wr = csv.writer(f)
    wr.writerow(["method", "arrival_s"] + ["%s_mean_s" % s for s in servers] + ["mean_s"] +
                ["paper_%s_mean_s" % s for s in servers] + ["paper_mean_s", "requests"] +
                ["%s_hit_rate" % s for s in servers] +
                ["%s_service_s" % s for s in servers] +
                ["redirected", "remote_invocations", "utilisation", "latency_growth", "overloaded_servers"])
    for (m, rate), j in res.items():
        label, paper = methods[m]
        lat = j["latency"]
        off = j.get("offload", {})
        load = j["load"]
        wr.writerow([m, rate] + ["%.4f" % lat["per_server"][s]["mean_s"] for s in servers] +
                    ["%.4f" % lat["mean_s"]] +
                    (["%.2f" % v for v in paper] if paper else [""] * (len(servers) + 1)) + [lat["count"]] +
                    ["%.4f" % off[s]["hit_rate"] if off else "" for s in servers] +
                    ["%.4f" % load["per_server"][s]["service_s"] for s in servers] +
                    [sum(o["redirected"] for o in off.values()) if off else "", j["remote_invocations"],
                     "%.4f" % load["overall"]["utilisation"], "%.4f" % load["overall"]["latency_growth"],
                     sum(int(v["overloaded"]) for v in load["per_server"].values())])
        print("%-34s Poisson %2d s: %s  all %.2f s" % (
            label, rate, "  ".join("%s %.2f" % (s, lat["per_server"][s]["mean_s"]) for s in servers),
            lat["mean_s"]))

# The reductions the README states: the better method's total mean latency against the worse one's, ours at
# each rate beside the paper's.
with open(os.path.join(out, "comparisons.csv"), "w", newline="") as f:
    wr = csv.writer(f)
    wr.writerow(["method", "against", "arrival_s", "against_mean_s", "method_mean_s", "reduction",
                 "paper_reduction"])
    for better, worse in (("moe-infinity-lb", "moe-infinity"), ("naive", "moe-infinity"),
                          ("naive", "moe-infinity-lb"), ("naive-redundance", "naive"),
                          ("moe-infinity-lb-short", "moe-infinity-short"), ("naive-short", "moe-infinity-short"),
                          ("naive-short", "moe-infinity-lb-short")):
        base = (better.replace("-short", ""), worse.replace("-short", ""))
        paper = methods[base[0]][1] and 1 - methods[base[0]][1][-1] / methods[base[1]][1][-1]
        for rate in (20, 10):
            if (better, rate) not in res:
                continue
            a, b = res[(worse, rate)]["latency"]["mean_s"], res[(better, rate)]["latency"]["mean_s"]
            wr.writerow([better, worse, rate, "%.4f" % a, "%.4f" % b, "%.4f" % (1 - b / a),
                         "%.4f" % paper if paper else ""])

# Ours at each rate, then the paper's (hatched), per server and overall.
colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
names = list(methods)
fig, axes = plt.subplots(1, 3, figsize=(15, 4.4), gridspec_kw={"width_ratios": [5, 3, 3]})
x = np.arange(len(servers) + 1)
for ax, rate in zip(axes[:2], (20, 10)):
    shown = [m for m in names if (m, rate) in res and m not in short]
    width = 0.8 / len(shown)
    for k, m in enumerate(shown):
        lat = res[(m, rate)]["latency"]
        ys = [lat["per_server"][s]["mean_s"] for s in servers] + [lat["mean_s"]]
        ax.bar(x + (k - (len(shown) - 1) / 2) * width, ys, width, color=colors[names.index(m)],
               label=methods[m][0])
    ax.set_xticks(x)
    ax.set_xticklabels(servers + ["all"])
    ax.set_ylabel("mean latency (s)")
    ax.set_title("moesim, Poisson %d s per server (SYNTHETIC Zipf traces)" % rate, fontsize=9)
ax = axes[2]
paper = [m for m in names if methods[m][1]]
width = 0.8 / len(paper)
for k, m in enumerate(paper):
    ax.bar(x + (k - (len(paper) - 1) / 2) * width, methods[m][1], width, color=colors[names.index(m)],
           hatch="///", edgecolor="white", linewidth=0)
ax.set_xticks(x)
ax.set_xticklabels(["server 1", "server 2", "server 3", "all"])
ax.set_ylabel("mean latency (s)")
ax.set_title("the paper's Table I (A100 testbed, BIG-bench tasks)", fontsize=9)
fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=len(names) - len(short), fontsize=8,
           bbox_to_anchor=(0.5, 0.0))
fig.suptitle("Prism Table I in moesim (simulated): Mixtral-8x7B on 3 servers with 1, 1, 2 A100 40GB GPUs "
             "(28 GiB for experts each), 500 Mbit/s", fontsize=10)
fig.tight_layout(rect=(0, 0.07, 1, 1))
plotlib.save(fig, out, "prism-table1")
