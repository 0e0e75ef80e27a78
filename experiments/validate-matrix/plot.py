#!/usr/bin/env python3
"""The held-out validation matrix as a heat map: one row per cell, one column per judged error (structure TPOT,
structure median layer, cost TPOT), coloured by |error| / limit (white within the target, red beyond it), each
square labelled with the signed error and its verdict (met, MISSED, undec.: the interval straddles the limit).

Usage: plot.py OUT_DIR   (reads OUT_DIR/matrix.csv from `moesim validate --matrix ... --csv`; writes
validate-matrix.png/.pdf)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir()
rows = plotlib.read_csv(out, "matrix.csv")
COLUMNS = [("structure_tpot", "structure TPOT", 0.02), ("structure_layer_median", "structure median layer", 0.05),
           ("cost_tpot", "cost TPOT", 0.05)]
MARK = {"met": "met", "missed": "MISSED", "undecided": "undec.", "failed": "failed"}



def batch_label(r):
    """b4, or b1->4 for a cell validated at another batch than its profile was calibrated at."""
    cal = r.get("calibrate_batch") or r["batch"]
    return f"b{r['batch']}" if cal == r["batch"] else f"b{cal}->{r['batch']}"


fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(rows) + 1.4))
grid = []
for r in rows:
    line = []
    for col, _, limit in COLUMNS:
        v = r[col]
        line.append(min(abs(float(v)) / limit, 3.0) if v else float("nan"))
    grid.append(line)
im = ax.imshow(grid, cmap="Reds", vmin=0, vmax=3, aspect="auto")
for i, r in enumerate(rows):
    for j, (col, _, _) in enumerate(COLUMNS):
        v = r[col]
        text = (f"{100 * float(v):+.1f}%\n" if v else "") + MARK.get(r[f"{col}_verdict"], r[f"{col}_verdict"])
        ax.text(j, i, text, ha="center", va="center", fontsize=7,
                color="white" if v and abs(float(v)) / COLUMNS[j][2] > 2 else "black")
ax.set_xticks(range(len(COLUMNS)), [f"{name}\n(limit {100 * limit:g}%)" for _, name, limit in COLUMNS])
ax.set_yticks(range(len(rows)), [f"{r['system']} {r['budget']} {batch_label(r)} {r['io']}" for r in rows])
ax.grid(False)
ax.set_title(f"Held-out validation matrix ({rows[0]['model']}, {rows[0]['trace']}): error / limit" if rows else "")
fig.colorbar(im, ax=ax, label="|error| / limit (capped at 3)")
print(plotlib.save(fig, out, "validate-matrix"))
