#!/usr/bin/env python3
# Decode reads of an exec (or cost) timeline split by the disk's idle time before each (the gap from the previous
# read's end): mean/median duration per class, and the share of reads in each. usage: rgap.py TIMELINE.json...
import json, sys, statistics as st
edges = [0, 5e-6, 20e-6, 100e-6, 1e-3, 1e9]
for path in sys.argv[1:]:
    d = json.load(open(path)); ev = d['traceEvents'] if isinstance(d, dict) else d
    dec = {e['args']['step'] for e in ev if e.get('ph') == 'X' and e.get('tid') == 1001 and e['args'].get('phase') == 'decode'}
    r = sorted((e for e in ev if e.get('ph') == 'X' and e['name'].startswith('ssd_read')), key=lambda e: e['ts'])
    cls = [[] for _ in edges[:-1]]; prev = None
    for e in r:
        if prev is not None and e['args'].get('step') in dec:
            g = (e['ts'] - prev) * 1e-6
            for i in range(len(edges) - 1):
                if edges[i] <= g < edges[i + 1]: cls[i].append(e['dur']); break
        prev = e['ts'] + e['dur']
    n = sum(len(c) for c in cls)
    print(path.split('/')[-1], 'decode reads', n)
    for i, c in enumerate(cls):
        if c: print('  gap %8.0f-%-8.0f us: %5.1f%%  mean %6.1f  median %6.1f us' % (edges[i] * 1e6, edges[i + 1] * 1e6, 100 * len(c) / n, st.mean(c), st.median(c)))
