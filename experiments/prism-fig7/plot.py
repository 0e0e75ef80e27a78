"""Prism Fig. 7 from OUT/with-migration.json and OUT/without-migration.json (moesim cluster --json): (a) the local
compute ratio over time, (b) the mean latency of the requests arriving in each minute, migrations marked.
Writes OUT/prism-fig7.png/.pdf and OUT/fig7.csv; prints a one-line summary."""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402

out = plotlib.out_dir()
runs = {}
for name, label in (("with-migration", "w: migration every 5 min"), ("without-migration", "w/o: never migrated")):
    with open(os.path.join(out, name + ".json")) as f:
        runs[label] = json.load(f)

fig, (a, b) = plt.subplots(1, 2, figsize=(12, 3.8))
rows = []
for k, (label, j) in enumerate(runs.items()):
    lot = j["local_compute_ratio"]["over_time"]
    lat = j["latency"]["over_time"]
    a.plot([(i + 0.5) * lot["bucket_s"] / 60 for i in range(len(lot["overall"]))], lot["overall"],
           **plotlib.series_style(k), label=label)
    b.plot([(i + 0.5) * lat["bucket_s"] / 60 for i in range(len(lat["mean_s"]))], lat["mean_s"],
           **plotlib.series_style(k), label=label)
    for m in j["migrations"]:
        for ax in (a, b):
            ax.axvline(m["time_s"] / 60, color="grey", alpha=0.4, lw=0.8)
    rows.append([label, j["latency"]["mean_s"], j["local_compute_ratio"]["overall"], len(j["migrations"]),
                 " ".join("%.0f" % (m["time_s"] / 60) for m in j["migrations"])])
a.set_title("(a) local compute ratio", fontsize=9)
b.set_title("(b) mean latency of the requests arriving each minute (s)", fontsize=9)
for ax in (a, b):
    ax.set_xlabel("simulated time (min); grey: migrations")
a.legend()
fig.suptitle("Prism Fig. 7 in moesim (simulated): a data shift after 200 requests per server, prism with and "
             "without migration", fontsize=10)
fig.tight_layout()
plotlib.save(fig, out, "prism-fig7")
with open(os.path.join(out, "fig7.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["run", "latency_mean_s", "local_compute_ratio", "migrations", "migration_minutes"])
    w.writerows(rows)
print("prism-fig7: " + "; ".join("%s: mean %.2f s, local %.3f, %d migrations at min %s" % tuple(r) for r in rows))
