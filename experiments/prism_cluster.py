"""Writes a SERVERS.json for `moesim cluster` (docs/cluster.md), shared by the Prism experiments.

    python3 experiments/prism_cluster.py OUT.json --model M --hw H --gpus 1,1,2 --gpu-memory 12GiB \
        --traces a.mtr,b.mtr,c.mtr --arrival poisson:10s [--bandwidth 500Mbit/s] [--latency 1ms]

One server per entry of --gpus; server i reads the i-th entry of --traces (a '+'-joined list gives it several
traces, read in order: a data shift). Paths are written relative to OUT.json's folder.
"""
import argparse
import json
import os

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--model", required=True)
ap.add_argument("--hw", required=True)
ap.add_argument("--gpus", required=True, help="comma-separated GPU counts, one per server")
ap.add_argument("--gpu-memory", required=True)
ap.add_argument("--traces", required=True, help="comma-separated, one per server; '+' joins a server's traces")
ap.add_argument("--arrival", required=True)
ap.add_argument("--bandwidth", default="500Mbit/s")
ap.add_argument("--latency", default="1ms")
a = ap.parse_args()
gpus = [int(g) for g in a.gpus.split(",")]
traces = a.traces.split(",")
if len(traces) != len(gpus):
    raise SystemExit("prism_cluster.py: %d servers (--gpus) but %d trace entries" % (len(gpus), len(traces)))
base = os.path.dirname(os.path.abspath(a.out))
servers = [{"name": "server%d" % (i + 1), "hw": a.hw, "gpus": g, "gpu_memory": a.gpu_memory,
            "traces": [os.path.relpath(os.path.abspath(t), base) for t in traces[i].split("+")],
            "arrival": a.arrival} for i, g in enumerate(gpus)]
spec = {"model": a.model, "network": {"bandwidth": a.bandwidth, "latency": a.latency}, "servers": servers}
with open(a.out, "w") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")
