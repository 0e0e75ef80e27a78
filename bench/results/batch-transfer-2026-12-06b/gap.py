#!/usr/bin/env python3
# The disk's idle gaps inside decode steps: between one read's end and the next read's start, split by size:
# under 1 ms (the I/O thread's turnaround between reads of one layer) or not (waiting for the next layer's work).
import json, sys, statistics as st
def load(path):
    d = json.load(open(path)); ev = d['traceEvents'] if isinstance(d, dict) else d
    dec = {e['args']['step'] for e in ev if e.get('ph') == 'X' and e.get('tid') == 1001 and e['args'].get('phase') == 'decode'}
    rs = sorted((e['ts'], e['ts'] + e['dur'], e['args'].get('submitted'), e['args']['step']) for e in ev
                if e.get('ph') == 'X' and e['name'].startswith('ssd_read') and e['args'].get('step') in dec)
    return rs
for pre in sys.argv[1:]:
    print(pre)
    for w in ('exec', 'cost'):
        rs = load('%s-%s.json' % (pre, w))
        b2b, wait = [], []
        for p, n in zip(rs, rs[1:]):
            if p[3] != n[3]: continue
            g = n[0] - p[1]
            (b2b if g < 1000 else wait).append(g)
        steps = len({r[3] for r in rs})
        f = lambda x: (len(x) / steps, st.mean(x) if x else 0, st.median(x) if x else 0, sum(x) / steps)
        print('  %-5s gap<1ms: %.0f/step mean %.1f us p50 %.1f sum %.0f us/step | gap>=1ms: %.0f/step mean %.1f p50 %.1f sum %.0f us/step' % ((w,) + f(b2b) + f(wait)))
