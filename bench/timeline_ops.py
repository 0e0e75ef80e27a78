#!/usr/bin/python3
"""Op times of one exec timeline, split the ways bench/results/validate.md (runs 13-33) reports them:

    bench/timeline_ops.py PREFIX-exec.json       (`moesim validate --timeline PREFIX` or `moesim exec --timeline`)

  1. per op kind (reads by part), prefill (step 0) against decode: ops, mean and median duration (us);
  2. SSD reads in decode, first read of that chunk in the run against a read of a chunk read before;
  3. expert compute, fresh (its weights read, recovered or copied in the same layer) against resident;
  4. decompression's time per MB against how many CPU-bound ops (decompress, recover, expert and dense
     compute) ran beside it on average (1 = alone): what equal sharing of the cores would stretch;
  5. decode layers that read: the head (layer start to its first read's start), the reads' busy time and the
     I/O thread's gaps between them, and the tail (the last read's end to the layer's end);
  6. hand-offs (start - submitted, decode ops that found their thread idle; exec timelines only) by op kind
     and by how many other threads were handed an op within 20 us of it (0-3+): threads woken together race
     for the cores.
Any timeline of `moesim validate --timeline` (exec, structure, cost) or `moesim run --timeline` works for 1-5.
Needs only Python 3's standard library.
"""
import bisect
import json
import statistics as st
import sys
from collections import defaultdict


def kind(e):
    k = e["name"].split(" ")[0]
    if k == "ssd_read":
        k += " " + e["args"].get("part", "whole")
    return k


def row(label, v):
    print(f"  {label:34s} {len(v):8d} {st.mean(v):10.1f} {st.median(v):10.1f}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        with open(sys.argv[1]) as f:
            ev = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"timeline_ops: {sys.argv[1]}: {e}")
    ops = [e for e in ev if e.get("ph") == "X" and "step" in e.get("args", {}) and "layer" in e["args"]
           and not e["name"].startswith("L")]
    ops.sort(key=lambda e: e["ts"])
    print(f"{'':36s} {'ops':>8s} {'mean us':>10s} {'median us':>10s}")

    print("1. prefill (step 0) against decode")
    by = defaultdict(list)
    for e in ops:
        by[(kind(e), "prefill" if e["args"]["step"] == 0 else "decode")].append(e["dur"])
    for k in sorted(by):
        row(f"{k[0]} {k[1]}", by[k])

    print("2. decode SSD reads: a chunk's first read in the run, or a later one")
    seen, reads = set(), defaultdict(list)
    for e in ops:
        if not e["name"].startswith("ssd_read"):
            continue
        a = e["args"]
        key = (a["layer"], a.get("expert"), a.get("tensor"), a.get("part"), a.get("shard"))
        if a["step"] > 0:
            reads[(kind(e), "again" if key in seen else "first")].append(e["dur"])
        seen.add(key)
    for k in sorted(reads):
        row(f"{k[0]} {k[1]}", reads[k])

    print("3. expert compute on fresh weights, or resident ones")
    fresh = defaultdict(list)
    for e in ops:
        if e["name"].startswith("expert_compute"):
            phase = "prefill" if e["args"]["step"] == 0 else "decode"
            fresh[(phase, "fresh" if e["args"].get("fresh") else "resident")].append(e["dur"])
    for k in sorted(fresh):
        row(f"{k[0]} {k[1]}", fresh[k])

    print("4. decode decompression, us per MB, by the CPU-bound ops running on average (itself included)")
    cpu = [e for e in ops if kind(e) in ("decompress", "recover", "expert_compute", "dense_compute")]
    edges = sorted([(e["ts"], 1) for e in cpu] + [(e["ts"] + e["dur"], -1) for e in cpu])
    times, level, n = [], [], 0
    for t, d in edges:
        n += d
        times.append(t)
        level.append(n)

    def concurrency(t0, t1):
        i = bisect.bisect_right(times, t0) - 1
        cur, c, area = t0, level[i] if i >= 0 else 0, 0.0
        for j in range(i + 1, len(times)):
            if times[j] >= t1:
                break
            area += c * (times[j] - cur)
            cur, c = times[j], level[j]
        area += c * (t1 - cur)
        return area / (t1 - t0) if t1 > t0 else c

    per_mb = defaultdict(list)
    for e in cpu:
        if kind(e) != "decompress" or e["args"]["step"] == 0 or e["dur"] <= 0:
            continue
        c = concurrency(e["ts"], e["ts"] + e["dur"])
        band = "~1" if c < 1.3 else "~2" if c < 2.3 else "~3" if c < 3.3 else "4+"
        per_mb[band].append(e["dur"] / max(e["args"].get("bytes", 1), 1) * 1e6)
    for k in sorted(per_mb):
        row(f"decompress, {k} running", per_mb[k])

    print("5. decode layers with reads: head, reads, I/O gaps, tail")
    layers, by_layer = {}, defaultdict(list)
    for e in ev:
        a = e.get("args", {})
        if e.get("ph") == "X" and e["name"].startswith("L") and "step" in a and "layer" in a and a["step"] > 0:
            layers[(a["step"], a["layer"])] = (e["ts"], e["ts"] + e["dur"])
    for e in ops:
        if e["name"].startswith("ssd_read") and e["args"]["step"] > 0:
            by_layer[(e["args"]["step"], e["args"]["layer"])].append(e)
    parts = defaultdict(list)
    for key, (t0, t1) in layers.items():
        reads = by_layer.get(key)
        if not reads:
            continue
        parts["layer"].append(t1 - t0)
        parts["head"].append(reads[0]["ts"] - t0)
        parts["reads busy"].append(sum(r["dur"] for r in reads))
        parts["I/O gaps"].append(sum(max(0.0, b["ts"] - a["ts"] - a["dur"]) for a, b in zip(reads, reads[1:])))
        parts["tail"].append(t1 - max(r["ts"] + r["dur"] for r in reads))
    for k in ("layer", "head", "reads busy", "I/O gaps", "tail"):
        if parts[k]:
            row(k, parts[k])

    if any("submitted" in e["args"] for e in ops):
        print("6. decode hand-offs (us) of ops that found their thread idle, by other threads woken within 20 us")
        last_end, idle = {}, []
        for e in ops:  # in start order: the ops before on the same thread have started earlier
            sub, thread = e["args"].get("submitted"), (e["pid"], e["tid"])
            if sub is not None and last_end.get(thread, -1e300) <= sub and e["args"]["step"] > 0:
                idle.append(e)
            last_end[thread] = max(last_end.get(thread, -1e300), e["ts"] + e["dur"])
        idle.sort(key=lambda e: e["args"]["submitted"])
        subs = [e["args"]["submitted"] for e in idle]
        hand = defaultdict(list)
        for e in idle:
            s = e["args"]["submitted"]
            near = idle[bisect.bisect_left(subs, s - 20):bisect.bisect_right(subs, s + 20)]
            others = len({(x["pid"], x["tid"]) for x in near}) - 1
            hand[(kind(e).split(" ")[0], min(others, 3))].append(e["ts"] - s)
        for k in sorted(hand):
            row(f"{k[0]}, {k[1]}{'+' if k[1] == 3 else ''} woken with it", hand[k])


if __name__ == "__main__":
    main()
