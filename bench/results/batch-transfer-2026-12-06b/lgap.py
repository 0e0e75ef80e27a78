#!/usr/bin/env python3
# The disk's long idle gaps (>= 1 ms, between two layers' reads) in decode steps: what the compute stream does
# in them. Per gap: its length, the compute ops' busy time inside it, the count of compute ops, and the compute
# stream's idle time inside it; means per gap, exec against cost. usage: lgap.py PREFIX...
import json, sys, statistics as st
def load(path):
    d = json.load(open(path)); ev = d['traceEvents'] if isinstance(d, dict) else d
    dec = {e['args']['step'] for e in ev if e.get('ph') == 'X' and e.get('tid') == 1001 and e['args'].get('phase') == 'decode'}
    X = [e for e in ev if e.get('ph') == 'X' and (e.get('args') or {}).get('step') in dec and e.get('tid') not in (1001, 1002)]
    rs = sorted((e['ts'], e['ts'] + e['dur'], e['args']['step']) for e in X if e['name'].startswith('ssd_read'))
    cp = sorted((e['ts'], e['ts'] + e['dur'], e['name'].split()[0], e['args'].get('tokens')) for e in X if e['name'].split()[0] in ('expert_compute', 'dense_compute', 'decompress', 'recover'))
    return rs, cp
for pre in sys.argv[1:]:
    print(pre)
    for w in ('exec', 'cost'):
        rs, cp = load('%s-%s.json' % (pre, w))
        gaps = [(p[1], n[0]) for p, n in zip(rs, rs[1:]) if p[2] == n[2] and n[0] - p[1] >= 1000]
        import bisect
        starts = [c[0] for c in cp]
        G, busy, nex, nde, dbusy = [], [], [], [], []
        for a, b in gaps:
            i = bisect.bisect_left(starts, a - 50000)
            bz = 0; ne = 0; nd = 0; db = 0
            for c in cp[i:]:
                if c[0] >= b: break
                o = min(c[1], b) - max(c[0], a)
                if o <= 0: continue
                if c[2] == 'dense_compute': nd += 1; db += o
                elif c[2] == 'expert_compute': ne += 1
                bz += o
            G.append(b - a); busy.append(bz); nex.append(ne); nde.append(nd); dbusy.append(db)
        m = lambda x: st.mean(x) if x else 0
        print('  %-4s gaps %5d  mean gap %7.1f us  compute busy in it %7.1f (dense %6.1f)  idle %7.1f  experts %.1f dense %.2f' % (
            w, len(G), m(G), m(busy), m(dbusy), m(G) - m(busy), m(nex), m(nde)))
