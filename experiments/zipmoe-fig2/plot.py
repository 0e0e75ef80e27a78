"""ZipMoE Fig. 2 from `moesim weights stats --json`: exponent-byte probability mass as 16 x 16 heat maps
(symbol = 16 * row + column), the real CNN weights next to synthetic Gaussian ones, and one row per real tensor.
Writes OUT/exponents.csv, OUT/zipmoe-fig2.png and .pdf; prints a one-line summary."""
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402

out = plotlib.out_dir()
real = json.load(open(os.path.join(out, "real.json")))
synth = json.load(open(os.path.join(out, "synth.json")))


def entropy(h):
    n = sum(h)
    return -sum(c / n * math.log2(c / n) for c in h if c)


sets = [("REAL faceres-subset (CNN, 8 tensors)", real), ("SYNTHETIC Gaussian N(0, 0.02$^2$), 4 MiB", synth)]
with open(os.path.join(out, "exponents.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["source", "tensor", "exponent", "count", "probability"])
    for label, j in (("real", real), ("synthetic", synth)):
        rows = [("(whole file)", j["exponent_histogram"])]
        rows += [(t["name"], t["exponent_histogram"]) for t in j["per_tensor"]]
        for name, h in rows:
            n = sum(h)
            for e, c in enumerate(h):
                if c:
                    w.writerow([label, name, e, c, f"{c / n:.8g}"])

fig = plt.figure(figsize=(10, 8.2))
gs = fig.add_gridspec(2, 3, width_ratios=[1, 1, 0.05], height_ratios=[1, 0.8], hspace=0.35, wspace=0.3)
norm = LogNorm(vmin=1e-6, vmax=1)
for i, (title, j) in enumerate(sets):
    h = np.array(j["exponent_histogram"], dtype=float)
    p = (h / h.sum()).reshape(16, 16)
    ax = fig.add_subplot(gs[0, i])
    im = ax.imshow(np.ma.masked_equal(p, 0), cmap="viridis", norm=norm)
    ax.set_xticks(range(0, 16, 3))
    ax.set_yticks(range(0, 16, 3))
    ax.set_xlabel("exponent mod 16")
    ax.set_ylabel("exponent // 16")
    ax.set_title(f"{title}\nH = {j['entropy_bits']:.3f} bits, support {j['distinct_exponents']}/256 "
                 f"({100 * j['distinct_exponents'] / 256:.2f}%)", fontsize=8.5)
fig.colorbar(im, cax=fig.add_subplot(gs[0, 2]), label="probability mass")

# Per-tensor rows of the real file over the exponents any tensor uses.
tensors = real["per_tensor"]
used = [e for e in range(256) if any(t["exponent_histogram"][e] for t in tensors)]
lo, hi = min(used), max(used)
mat = np.array([[t["exponent_histogram"][e] / max(1, t["elements"]) for e in range(lo, hi + 1)] for t in tensors])
ax = fig.add_subplot(gs[1, :2])
ax.imshow(np.ma.masked_equal(mat, 0), cmap="viridis", norm=norm, aspect="auto",
          extent=(lo - 0.5, hi + 0.5, len(tensors) - 0.5, -0.5), interpolation="nearest")
ax.set_yticks(range(len(tensors)))
ax.set_yticklabels([f"{t['name']}  H={t['entropy_bits']:.2f}" for t in tensors], fontsize=7)
ax.set_xlabel("exponent byte (biased: 127 is 2$^0$; 0 is zero/subnormal)")
ax.set_title("REAL faceres-subset, one row per tensor", fontsize=8.5)
fig.suptitle("ZipMoE Fig. 2 in moesim: BF16 exponent probability mass (moesim weights stats)\n"
             "paper, on three MoE models' experts: H = 2.651 / 2.563 / 2.554 bits, support 14.06 / 11.33 / 14.84%",
             fontsize=9.5)
plotlib.save(fig, out, "zipmoe-fig2")
print(f"zipmoe-fig2: real H={real['entropy_bits']:.3f} bits ({real['distinct_exponents']} symbols), "
      f"synthetic H={synth['entropy_bits']:.3f} bits ({synth['distinct_exponents']} symbols) -> {out}/zipmoe-fig2.png")
assert abs(entropy(real["exponent_histogram"]) - real["entropy_bits"]) < 1e-9
