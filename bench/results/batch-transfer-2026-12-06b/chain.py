#!/usr/bin/env python3
# The disk's long gaps (>= 1 ms) in decode steps, split at the next layer's dense op: last read's end -> dense
# start (the layer's compute tail and the hand-off), the dense op, dense end -> next read start (routing, the
# I/O thread's hand-off). exec: the dense op's and the next read's submissions split those further.
import json, sys, statistics as st, bisect
def load(path):
    d = json.load(open(path)); ev = d['traceEvents'] if isinstance(d, dict) else d
    dec = {e['args']['step'] for e in ev if e.get('ph') == 'X' and e.get('tid') == 1001 and e['args'].get('phase') == 'decode'}
    X = [e for e in ev if e.get('ph') == 'X' and (e.get('args') or {}).get('step') in dec and e.get('tid') not in (1001, 1002)]
    rs = sorted((e['ts'], e['ts'] + e['dur'], e['args']['step'], e['args'].get('submitted')) for e in X if e['name'].startswith('ssd_read'))
    ds = sorted((e['ts'], e['ts'] + e['dur'], e['args'].get('submitted')) for e in X if e['name'].startswith('dense_compute'))
    return rs, ds
m = lambda x: st.mean(x) if x else float('nan')
for pre in sys.argv[1:]:
    print(pre)
    for w in ('exec', 'cost'):
        rs, ds = load('%s-%s.json' % (pre, w))
        starts = [d[0] for d in ds]
        A, B, C, D, E, F = [], [], [], [], [], []
        for p, n in zip(rs, rs[1:]):
            if p[2] != n[2] or n[0] - p[1] < 1000: continue
            i = bisect.bisect_left(starts, p[1])
            if i >= len(ds) or ds[i][1] > n[0]: continue
            d = ds[i]
            A.append(d[0] - p[1]); B.append(d[1] - d[0]); C.append(n[0] - d[1])
            if d[2] is not None: D.append(d[2] - p[1]); E.append(n[3] - d[1]); F.append(n[0] - n[3])
        print('  %-4s n %5d  read end->dense start %7.1f  dense %7.1f  dense end->next read start %7.1f' % (w, len(A), m(A), m(B), m(C)), end='')
        print('  | read end->dense submitted %7.1f, dense end->read submitted %7.1f, read submitted->start %7.1f' % (m(D), m(E), m(F)) if D else '')
