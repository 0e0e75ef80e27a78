#!/usr/bin/env python3
# bench/results/validate-cpu/run77-cpu-work.txt: its output on two exec timelines of the real trace.
"""Per op kind of one exec timeline (`moesim exec ... --timeline T`): wall time, the thread CPU time exec
recorded (the `cpu` arg), and the work op_work() gives the CPU-bound ops (the fluid model's inverse on
CORES cores) without and with the reads' CPU phases among them (cli/exec_run.cpp).
usage: run77-cpu-work.py TIMELINE.json [CORES]"""
import bisect, json, sys

def fluid(spans, cores):
    ed = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    T, F, o, f, i = [], [], 0, 0.0, 0
    while i < len(ed):
        t = ed[i][0]
        if T: f += (t - T[-1]) * (1.0 if o <= cores else cores / o)
        T.append(t); F.append(f)
        while i < len(ed) and ed[i][0] == t: o += ed[i][1]; i += 1
    at = lambda t: F[bisect.bisect_left(T, t)]
    return [at(e) - at(s) for s, e in spans]

ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
cores = int(sys.argv[2]) if len(sys.argv) > 2 else 2
ops = [e for e in ev if e.get("ph") == "X" and "cpu" in e.get("args", {})]
kind = lambda e: e["name"].split(" ")[0]
bound = lambda e: kind(e) in ("decompress", "recover", "expert_compute", "dense_compute")
old = fluid([(e["ts"], e["ts"] + e["dur"]) for e in ops if bound(e)], cores)
spans, who = [], []
for e in ops:
    if bound(e): spans.append((e["ts"], e["ts"] + e["dur"])); who.append("op")
    elif kind(e) == "ssd_read":
        c = min(e["args"]["cpu"], e["dur"]); spans.append((e["ts"] + e["dur"] - c, e["ts"] + e["dur"])); who.append("read")
new = fluid(spans, cores)
new_ops = [w for w, k in zip(new, who) if k == "op"]
agg = {}
for e in ops:
    a = agg.setdefault(kind(e), [0, 0.0, 0.0, 0.0, 0.0]); a[0] += 1; a[1] += e["dur"]; a[2] += e["args"]["cpu"]
for e, w0, w1 in zip([e for e in ops if bound(e)], old, new_ops):
    a = agg[kind(e)]; a[3] += w0; a[4] += w1
print(f"{'op kind':16} {'ops':>7} {'wall s':>8} {'cpu s':>8} {'work s':>8} {'work s':>8}   work/cpu")
print(f"{'':16} {'':>7} {'':>8} {'':>8} {'(old)':>8} {'(reads)':>8}   old / with reads")
for k, (n, w, c, w0, w1) in sorted(agg.items()):
    r = f"{w0 / c:.3f} / {w1 / c:.3f}" if w0 > 0 and c > 0 else "-"
    print(f"{k:16} {n:7d} {w / 1e6:8.2f} {c / 1e6:8.2f} {w0 / 1e6 if w0 else float('nan'):8.2f} {w1 / 1e6 if w1 else float('nan'):8.2f}   {r}")
