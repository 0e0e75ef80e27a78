"""ZipMoE Fig. 4 from the exec timelines run.sh wrote (OUT/*.timeline.json, wall-clock Chrome traces): per-tensor
decompression latency by worker threads against the I/O latency of the same bytes. Writes OUT/latency.csv
(series, threads, samples, median/p10/p90 in ms), OUT/zipmoe-fig4.png and .pdf; prints a one-line summary.
Usage: plot.py OUT NPROC [MACHINE]"""
import csv
import glob
import json
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402
import numpy as np  # noqa: E402

out, nproc = sys.argv[1], int(sys.argv[2])
machine = sys.argv[3] if len(sys.argv) > 3 else f"this {nproc}-core machine"


def ops(path):
    """The timeline's op slices: (kind, step, args, start_us, dur_us)."""
    for e in json.load(open(path)):
        if e.get("ph") == "X" and "args" in e and " L" in e["name"]:
            yield e["name"].split(" ")[0], e["args"]["step"], e["args"], e["ts"], e["dur"]


def decompress_per_tensor(path):
    """Per step served from pool C only (no SSD read): the decompression span over the tensors decoded."""
    steps = defaultdict(list)
    read = set()
    for kind, step, a, ts, dur in ops(path):
        if kind == "ssd_read":
            read.add(step)
        elif kind == "decompress":
            steps[step].append((ts, ts + dur, a["tensor"]))
    return [(max(e for _, e, _ in v) - min(s for s, _, _ in v)) / len({t for _, _, t in v}) / 1e3
            for step, v in steps.items() if step not in read]


def reads(path, part):
    """Durations (ms) of the SSD reads of one part: 'sm' (SM-chunks) or None (whole tensors)."""
    return [dur / 1e3 for kind, _, a, _, dur in ops(path) if kind == "ssd_read" and a.get("part") == part]


series = {}  # name -> {threads: samples}
for path in sorted(glob.glob(os.path.join(out, "*.timeline.json"))):
    name, L = re.match(r"(.*)-L(\d+)\.timeline\.json", os.path.basename(path)).groups()
    L = int(L)
    if name.startswith("decompress-"):
        vals = decompress_per_tensor(path)
    elif name.startswith("io-"):
        vals = reads(path, "sm")
    else:
        vals = reads(path, None)
    series.setdefault(name, {})[L] = vals

labels = {
    "decompress-zstd": "decompression, zstd:3 (exponents of one tensor, no I/O)",
    "decompress-lz4hc": "decompression, lz4hc:4 (same)",
    "io-D": "I/O of the same bytes (SM-chunk), O_DIRECT, D.",
    "io-DP": "I/O of the same bytes, page cache, D.+P.",
    "full": "full tensor read (2x the bytes), O_DIRECT",
}
rows = []
for name, by_l in series.items():
    for L, vals in sorted(by_l.items()):
        v = np.array(vals)
        rows.append([name, L, len(v), np.median(v), np.percentile(v, 10), np.percentile(v, 90)])
with open(os.path.join(out, "latency.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["series", "threads", "samples", "median_ms", "p10_ms", "p90_ms"])
    for r in rows:
        w.writerow(r[:3] + [f"{x:.4f}" for x in r[3:]])

fig, ax = plt.subplots(figsize=(8, 4.6))
threads = sorted({r[1] for r in rows if r[0] == "decompress-zstd"})
for name, color, marker in (("decompress-zstd", "tab:blue", "o"), ("decompress-lz4hc", "tab:green", "s"),
                            ("io-D", "tab:orange", "^")):
    rr = [r for r in rows if r[0] == name]
    ax.plot([r[1] for r in rr], [r[3] for r in rr], marker=marker, color=color, label=labels[name])
    ax.fill_between([r[1] for r in rr], [r[4] for r in rr], [r[5] for r in rr], color=color, alpha=0.15)
for name, color, ls in (("io-DP", "tab:red", "--"), ("full", "black", ":")):
    rr = [r for r in rows if r[0] == name]
    if rr:
        ax.axhline(rr[0][3], color=color, ls=ls, label=f"{labels[name]} (L={rr[0][1]})")
ax.axvline(nproc, color="grey", lw=0.8)
ax.text(nproc, ax.get_ylim()[1], f" {nproc} cores here", va="top", fontsize=8, color="grey")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xticks(threads)
ax.set_xticklabels([str(t) for t in threads])
ax.set_xlabel("CPU worker threads L")
ax.set_ylabel("latency per 2048x1408 BF16 tensor (ms)")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=7.5)
ax.set_title(f"ZipMoE Fig. 4 in moesim: MEASURED with moesim exec on {machine} "
             "(median, band p10-p90)\nsynthetic Gaussian weights; paper: decompression < I/O from 3 threads "
             "on a Jetson AGX Orin", fontsize=9)
plotlib.save(fig, out, "zipmoe-fig4")
med = {(r[0], r[1]): r[3] for r in rows}
io = [med[k] for k in med if k[0] == "io-D"]
print("zipmoe-fig4: per-tensor decompression zstd:3 " +
      ", ".join(f"L={L} {med[('decompress-zstd', L)]:.2f} ms" for L in threads) +
      f"; SM-chunk read {np.median(io):.2f} ms; full tensor {med.get(('full', threads[0]), float('nan')):.2f} ms"
      f" -> {out}/zipmoe-fig4.png")
