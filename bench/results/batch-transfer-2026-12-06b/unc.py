#!/usr/bin/env python3
# Per decode step: step time, the reads' busy time (union of ssd_read spans), and the rest (step - busy):
# exec against cost, means over decode steps. usage: unc.py PREFIX...
import json, sys, statistics as st
from collections import defaultdict
def load(path):
    d = json.load(open(path)); ev = d['traceEvents'] if isinstance(d, dict) else d
    steps = {e['args']['step']: (e['ts'], e['ts'] + e['dur']) for e in ev if e.get('ph') == 'X' and e.get('tid') == 1001 and e['args'].get('phase') == 'decode'}
    rd = defaultdict(list); dec = defaultdict(list); n = defaultdict(int)
    for e in ev:
        if e.get('ph') != 'X' or e.get('tid') in (1001, 1002): continue
        s = (e.get('args') or {}).get('step')
        if s not in steps: continue
        k = e['name'].split()[0]
        if k == 'ssd_read': rd[s].append((e['ts'], e['ts'] + e['dur'])); n[s] += 1
        if k == 'decompress': dec[s].append((e['ts'], e['ts'] + e['dur']))
    def union(iv, lo, hi):
        t = 0; cur = None
        for a, b in sorted(iv):
            a, b = max(a, lo), min(b, hi)
            if b <= a: continue
            if cur and a <= cur[1]: cur[1] = max(cur[1], b)
            else:
                if cur: t += cur[1] - cur[0]
                cur = [a, b]
        if cur: t += cur[1] - cur[0]
        return t
    out = []
    for s, (lo, hi) in steps.items():
        busy = union(rd[s], lo, hi); db = union(dec[s], lo, hi)
        out.append((hi - lo, busy, hi - lo - busy, n[s], db))
    return out
for pre in sys.argv[1:]:
    r = {w: load('%s-%s.json' % (pre, w)) for w in ('exec', 'cost')}
    print(pre)
    for i, name in enumerate(['step', 'reads busy', 'step - reads busy', 'reads', 'decompress busy']):
        a, b = st.mean(x[i] for x in r['exec']), st.mean(x[i] for x in r['cost'])
        print('  %-20s exec %10.1f  cost %10.1f  %+6.1f%%' % (name, a, b, 100 * (b / a - 1) if a else 0))
