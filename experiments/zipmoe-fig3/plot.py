"""ZipMoE Fig. 3 from OUT/ratios.csv (written by run.sh): stored / BF16 size per codec on the split format,
real CNN weights and synthetic Gaussian ones, with each set's entropy bound and the paper's reported values.
Writes OUT/zipmoe-fig3.png and .pdf; prints a one-line summary."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402
import numpy as np  # noqa: E402

out = plotlib.out_dir()
rows = plotlib.read_csv(out, "ratios.csv")
codecs = list(dict.fromkeys(r["codec"] for r in rows))
sets = [("real", "REAL faceres-subset (CNN)", "tab:blue"),
        ("synth", "SYNTHETIC Gaussian N(0, 0.02$^2$), 4 MiB", "tab:orange")]
ratio = {(r["weights"], r["codec"]): float(r["ratio"]) for r in rows}
bound = {r["weights"]: float(r["bound_ratio"]) for r in rows}
entropy = {r["weights"]: float(r["entropy_bits"]) for r in rows}

fig, ax = plt.subplots(figsize=(9, 4.2))
x = np.arange(len(codecs))
width = 0.38
for i, (key, label, color) in enumerate(sets):
    vals = [100 * ratio[(key, c)] for c in codecs]
    bars = ax.bar(x + (i - 0.5) * width, vals, width, label=label, color=color)
    for b, v in zip(bars, vals):
        ax.text(b.get_x() + b.get_width() / 2, v + 0.5, f"{v:.1f}", ha="center", va="bottom", fontsize=7)
    ax.axhline(100 * bound[key], color=color, ls="--", lw=1,
               label=f"entropy bound (8+H)/16 = {100 * bound[key]:.1f}% (H = {entropy[key]:.3f} bits)")
ax.axhline(74, color="grey", ls=":", lw=1.2, label="paper: LZ4HC 74%, ZSTD 68%, bound 66.0-66.5% (MoE experts)")
ax.axhline(68, color="grey", ls=":", lw=1.2)
ax.set_xticks(x)
ax.set_xticklabels(codecs)
ax.set_ylabel("compressed size / BF16 size (%)")
ax.set_xlabel("E-chunk codec (K = 4 frames per tensor; SM bytes stored raw)")
ax.set_ylim(50, 100)
ax.legend(fontsize=7.5, loc="upper right")
ax.set_title("ZipMoE Fig. 3 in moesim: compression ratio per codec (moesim pack + store info)", fontsize=10)
plotlib.save(fig, out, "zipmoe-fig3")
best = {k: min(codecs, key=lambda c: ratio[(k, c)]) for k, _, _ in sets}
print("zipmoe-fig3: " + "; ".join(f"{k} best {best[k]} {100 * ratio[(k, best[k])]:.1f}% (bound {100 * bound[k]:.1f}%)"
                                  for k, _, _ in sets) + f" -> {out}/zipmoe-fig3.png")
