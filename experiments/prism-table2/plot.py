"""Prism Table II and Fig. 6 from OUT/<workload>.<placement>.json (moesim cluster --json): OUT/table2.csv (mean serve
latency per server and overall, local compute ratio, remote invocations, migrations), OUT/prism-table2.png/.pdf
(latency per server, one panel per workload) and OUT/prism-fig6.png/.pdf (local compute ratio over time).
Prints one line per workload."""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402
import numpy as np  # noqa: E402

out = plotlib.out_dir()
workloads = {"bigbench": "task skew, Poisson 10 s (\"BigBench\": SYNTHETIC Zipf 1.0)",
             "multidata": "dataset skew, Poisson 20 s (\"MultiData\": SYNTHETIC Zipf 0.8)",
             "real-qwen3": "no skew: the REAL Qwen3 trace on every server, Poisson 10 s"}
placements = ["uniform", "redundance", "smartmoe", "eplb", "prism"]
static = ["smartmoe-static", "eplb-static", "prism-static"]
res = {}
for w in workloads:
    for p in placements + static:
        with open(os.path.join(out, "%s.%s.json" % (w, p))) as f:
            res[(w, p)] = json.load(f)
servers = list(res[("bigbench", "prism")]["latency"]["per_server"].keys())

with open(os.path.join(out, "table2.csv"), "w", newline="") as f:
    wr = csv.writer(f)
    wr.writerow(["workload", "placement"] + ["%s_mean_s" % s for s in servers] +
                ["mean_s", "requests", "local_compute_ratio", "remote_invocations", "migrations"])
    for (w, p), j in res.items():
        lat = j["latency"]
        wr.writerow([w, p] + ["%.4f" % lat["per_server"][s]["mean_s"] for s in servers] +
                    ["%.4f" % lat["mean_s"], lat["count"], "%.4f" % j["local_compute_ratio"]["overall"],
                     j["remote_invocations"], len(j["migrations"])])

fig, axes = plt.subplots(1, len(workloads), figsize=(13, 3.8))
width = 0.8 / len(placements)
for ax, (w, wl) in zip(axes, workloads.items()):
    x = np.arange(len(servers) + 1)
    for k, p in enumerate(placements):
        lat = res[(w, p)]["latency"]
        ys = [lat["per_server"][s]["mean_s"] for s in servers] + [lat["mean_s"]]
        ax.bar(x + (k - (len(placements) - 1) / 2) * width, ys, width, label=p)
    ax.set_xticks(x)
    ax.set_xticklabels(servers + ["all"])
    ax.set_ylabel("mean serve latency (s)")
    ax.set_title(wl, fontsize=8.5)
axes[0].legend()
fig.suptitle("Prism Table II in moesim (simulated): 3 servers with 1, 1, 2 GPUs, 500 Mbit/s, DeepSeek-V2-Lite / Qwen3",
             fontsize=10)
fig.tight_layout()
plotlib.save(fig, out, "prism-table2")

fig, axes = plt.subplots(1, len(workloads), figsize=(13, 3.6), sharey=True)
for ax, (w, wl) in zip(axes, workloads.items()):
    for k, p in enumerate(placements):
        ot = res[(w, p)]["local_compute_ratio"]["over_time"]
        t = [(i + 0.5) * ot["bucket_s"] / 60 for i in range(len(ot["overall"]))]
        ax.plot(t, ot["overall"], **plotlib.series_style(k), label=p)
        for m in res[(w, p)]["migrations"]:
            ax.axvline(m["time_s"] / 60, color="grey", alpha=0.25, lw=0.8)
    ax.set_xlabel("simulated time (min)")
    ax.set_title(wl, fontsize=8.5)
axes[0].set_ylabel("local compute ratio")
axes[0].legend()
fig.suptitle("Prism Fig. 6 in moesim (simulated): local compute ratio over time (grey: migrations)", fontsize=10)
fig.tight_layout()
plotlib.save(fig, out, "prism-fig6")

for w in workloads:
    best = sorted(placements + static, key=lambda p: res[(w, p)]["latency"]["mean_s"])
    print("prism-table2 %s: " % w + ", ".join("%s %.2f s" % (p, res[(w, p)]["latency"]["mean_s"]) for p in best))
