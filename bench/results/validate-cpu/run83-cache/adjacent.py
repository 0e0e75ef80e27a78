import json, sys, statistics as st
T = {"gate_proj": 0, "up_proj": 1, "down_proj": 2}
for f in sys.argv[1:]:
    ev = [e for e in json.load(open(f)) if e.get("pid") == 4 and e.get("ph") == "X"]
    ev.sort(key=lambda e: e["ts"])
    cls = {}
    prev = None; prev_end = None
    for e in ev:
        a = e["args"]; key = (a["layer"], a["expert"], T.get(a["tensor"], 9))
        dev = e["dur"] - a.get("cpu", 0)
        gap = (e["ts"] - prev_end) if prev_end is not None else 1e9
        if prev is None: c = "first"
        elif key[0] == prev[0] and key[1] == prev[1] and key[2] == prev[2] + 1: c = "next tensor, same expert"
        elif key[0] == prev[0] and key[1] == prev[1] + 1 and key[2] == 0 and prev[2] == 2: c = "next expert, adjacent"
        elif key[0] == prev[0]: c = "same layer, not adjacent"
        else: c = "other layer"
        c += " (back to back)" if gap < 50 else " (after a gap)"
        cls.setdefault(c, []).append(dev)
        prev = key; prev_end = e["ts"] + e["dur"]
    print(f)
    for c in sorted(cls):
        xs = cls[c]
        print(f"   {c:45s} {len(xs):6d} {100*len(xs)/len(ev):5.1f}%  device median {st.median(xs):5.0f} us  mean {st.mean(xs):5.0f}")
