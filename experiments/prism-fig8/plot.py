"""Prism Fig. 8 from OUT/g<GPUS>-<ARRIVAL>-<BANDWIDTH>.json (moesim cluster --json): (a) mean latency against the GPU
count per arrival rate, (b) against the link bandwidth per GPU count. Writes OUT/prism-fig8.png/.pdf and
OUT/fig8.csv, and OUT/changes.csv: the changes the paper quotes, ours beside its (also printed)."""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir()
gpus = [4, 16, 64, 256]
res = {}
for g in gpus:
    for a, b in (("8s", "500M"), ("15s", "500M"), ("8s", "100M"), ("8s", "1000M")):
        with open(os.path.join(out, "g%d-%s-%s.json" % (g, a, b))) as f:
            j = json.load(f)
        res[(g, a, b)] = (j["latency"]["mean_s"], j["local_compute_ratio"]["overall"], j["requests"])

with open(os.path.join(out, "fig8.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["gpus", "arrival", "bandwidth", "latency_mean_s", "local_compute_ratio", "requests"])
    for (g, a, b), v in sorted(res.items()):
        w.writerow([g, "poisson:" + a, b + "bit/s", "%.4f" % v[0], "%.4f" % v[1], v[2]])

fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 3.8))
for k, a in enumerate(("8s", "15s")):
    ax.plot(gpus, [res[(g, a, "500M")][0] for g in gpus], **plotlib.series_style(k), label="Poisson " + a)
ax.set_xscale("log", base=2)
ax.set_xticks(gpus)
ax.set_xticklabels([str(g) for g in gpus])
ax.set_xlabel("GPUs (2 per server)")
ax.set_ylabel("mean latency per request (s)")
ax.set_title("(a) scale, 500 Mbit/s", fontsize=9)
ax.legend()
bws = [100, 500, 1000]
# 16, 64 and 256 GPUs lie within a few percent of each other: each line is drawn a little to the side of the
# others (a fixed factor on the log axis) with its own marker, line style and fill, so every one stays visible,
# and the panel says how close they are.
for k, g in enumerate(gpus):
    dodge = 1.045 ** (k - (len(gpus) - 1) / 2)
    bx.plot([b * dodge for b in bws], [res[(g, "8s", "%dM" % b)][0] for b in bws], **plotlib.series_style(k),
            label="%d GPUs" % g)
bx.set_xscale("log")
bx.set_xticks(bws)
bx.set_xticklabels([str(b) for b in bws])
bx.minorticks_off()
spread = max(abs(res[(g, "8s", "%dM" % b)][0] / res[(16, "8s", "%dM" % b)][0] - 1) for g in gpus[1:] for b in bws)
bx.text(0.03, 0.04, "16, 64 and 256 GPUs within %.1f%% of each other\n(lines drawn slightly apart)" % (100 * spread),
        transform=bx.transAxes, fontsize=7.5, va="bottom")
bx.set_xlabel("link bandwidth (Mbit/s, log scale)")
bx.set_title("(b) bandwidth, Poisson 8 s", fontsize=9)
bx.legend()
fig.suptitle("Prism Fig. 8 in moesim (simulated): prism placement at scale", fontsize=10)
fig.tight_layout()
plotlib.save(fig, out, "prism-fig8")

# The changes the paper quotes (§IV-D: 19% and 9% from 4 to 256 GPUs; over 55% and 35% from 100 to 1000 Mbit/s),
# ours beside them, in OUT/changes.csv.
with open(os.path.join(out, "changes.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["panel", "series", "from", "to", "from_s", "to_s", "change", "paper_change"])
    for a, paper in (("8s", -0.19), ("15s", -0.09)):
        lo, hi = res[(4, a, "500M")][0], res[(256, a, "500M")][0]
        w.writerow(["a", "poisson:" + a, "4 GPUs", "256 GPUs", "%.4f" % lo, "%.4f" % hi, "%.4f" % (hi / lo - 1), paper])
        print("prism-fig8 (a) Poisson %s: 4 -> 256 GPUs: %.3f -> %.3f s (%+.0f%%)" % (a, lo, hi, 100 * (hi / lo - 1)))
    for g, paper in ((4, -0.55), (256, -0.35)):
        lo, hi = res[(g, "8s", "100M")][0], res[(g, "8s", "1000M")][0]
        w.writerow(["b", "%d GPUs" % g, "100Mbit/s", "1000Mbit/s", "%.4f" % lo, "%.4f" % hi, "%.4f" % (hi / lo - 1),
                    paper])
        print("prism-fig8 (b) %d GPUs: 100 -> 1000 Mbit/s: %.3f -> %.3f s (%+.0f%%)" % (g, lo, hi, 100 * (hi / lo - 1)))
