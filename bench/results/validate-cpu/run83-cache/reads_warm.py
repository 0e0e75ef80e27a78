import json, sys, statistics as st
seen_any = set()  # chunks read by any earlier run (in the order given)
for f in sys.argv[1:]:
    ev = [e for e in json.load(open(f)) if e.get("pid") == 4 and e.get("ph") == "X"]
    ev.sort(key=lambda e: e["ts"])
    seen_run = set()
    groups = {"first in run, read by an earlier run": [], "first in run, never read before": [], "again in this run": []}
    for e in ev:
        a = e["args"]; k = (a["layer"], a["expert"], a["tensor"])
        dev = e["dur"] - a.get("cpu", 0)
        if k in seen_run: groups["again in this run"].append(dev)
        elif k in seen_any: groups["first in run, read by an earlier run"].append(dev)
        else: groups["first in run, never read before"].append(dev)
        seen_run.add(k)
    seen_any |= seen_run
    print(f, len(ev), "reads")
    for g, xs in groups.items():
        if xs: print(f"   {g:40s} {len(xs):6d}  device median {st.median(xs):6.0f} us  mean {st.mean(xs):6.0f} us")
