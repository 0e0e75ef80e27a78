"""Tornado plot of `moesim sensitivity --json` (OUT/sensitivity.json): per system of the first point, one bar per
scaled profile field from the metric's change at the smallest factor to its change at the largest, fields with
the widest swing on top; a field whose scaling flips the systems' ranking is marked. Writes
OUT/sensitivity.png and .pdf; prints one line per field."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir()
with open(os.path.join(out, "sensitivity.json")) as f:
    report = json.load(f)
point = report["points"][0]
systems = point["systems"]
rows = [r for r in report["fields"] if r["point"] == 0]
fields = list(dict.fromkeys(r["field"] for r in rows))
lo_factor = min(r["factor"] for r in rows)
hi_factor = max(r["factor"] for r in rows)


def change(field, factor, system):
    for r in rows:
        if r["field"] == field and r["factor"] == factor:
            c = r["systems"][system]["change"]
            return 100 * c if c is not None else 0.0
    return 0.0


def flips(field):
    return [r["factor"] for r in rows if r["field"] == field and r["flips"]]


swing = {f: max(abs(change(f, lo_factor, s)) + abs(change(f, hi_factor, s)) for s in systems) for f in fields}
order = sorted(fields, key=lambda f: swing[f])  # widest on top (barh draws from the bottom)
fig, axes = plt.subplots(1, len(systems), figsize=(5.2 * len(systems), 0.55 * len(fields) + 1.6), sharey=True)
axes = axes if len(systems) > 1 else [axes]
for ax, system in zip(axes, systems):
    y = range(len(order))
    lo = [change(f, lo_factor, system) for f in order]
    hi = [change(f, hi_factor, system) for f in order]
    # Side by side, not overlaid: both factors may move the metric the same way (a planner re-plans).
    ax.barh([i - 0.2 for i in y], lo, height=0.4, color="#4c72b0", label=f"x{lo_factor:g}")
    ax.barh([i + 0.2 for i in y], hi, height=0.4, color="#dd8452", label=f"x{hi_factor:g}")
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(list(y))
    ax.set_yticklabels([f + ("  (ranking flips)" if flips(f) else "") for f in order])
    base = point["baseline"][system]
    shown = f"{base:.2f} tok/s" if point["metric"] == "decode_tokens_per_s" else f"{1e3 * base:.0f} ms"
    ax.set_title(f"{system}: {point['metric']} {shown} at the profile's values")
    ax.set_xlabel(f"change of {point['metric']} (%)")
axes[0].legend(loc="lower right")
fig.suptitle(f"What the comparison rests on: {os.path.basename(point['trace'])}, {point['hw']}, {point['budget']}"
             f" (simulated); ranking {' < '.join(point['ranking'])}", fontsize=10)
fig.tight_layout()
png = plotlib.save(fig, out, "sensitivity")
for f in reversed(order):
    print(f"{f}: " + ", ".join(f"{s} {change(f, lo_factor, s):+.1f}% / {change(f, hi_factor, s):+.1f}%"
                               for s in systems) + (f"; flips at x{flips(f)}" if flips(f) else ""))
print(png)
