#!/usr/bin/python3
"""Op times of one exec timeline, split the ways bench/results/validate.md (runs 13-25) reports them:

    bench/timeline_ops.py PREFIX-exec.json       (`moesim validate --timeline PREFIX` or `moesim exec --timeline`)

  1. per op kind (reads by part), prefill (step 0) against decode: ops, mean and median duration (us);
  2. SSD reads in decode, first read of that chunk in the run against a read of a chunk read before;
  3. expert compute, fresh (its weights read, recovered or copied in the same layer) against resident;
  4. decompression's time per MB against how many CPU-bound ops (decompress, recover, expert and dense
     compute) ran beside it on average (1 = alone): what equal sharing of the cores would stretch.
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


if __name__ == "__main__":
    main()
