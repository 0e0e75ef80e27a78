#!/usr/bin/env python3
# zipmoe's CPU-worker ops in decode steps, split by kind and by fused read (read_bytes set: the worker reads the
# E chunk itself, then decompresses it): n, mean wall us, mean CPU us (exec only). usage: dek.py PREFIX...
import json, sys, statistics as st
from collections import defaultdict
for pre in sys.argv[1:]:
    for side in ('exec', 'cost'):
        ev = json.load(open('%s-%s.json' % (pre, side))); ev = ev['traceEvents'] if isinstance(ev, dict) else ev
        dec = {e['args']['step'] for e in ev if e.get('ph') == 'X' and e.get('tid') == 1001 and e['args'].get('phase') == 'decode'}
        g = defaultdict(lambda: ([], []))
        for e in ev:
            a = e.get('args') or {}
            if e.get('ph') != 'X' or a.get('step') not in dec or e.get('pid') != 5: continue
            k = e['name'].split(' L')[0] + (' fused' if a.get('read_bytes') else '') + (' part=%s' % a.get('part') if a.get('part') else '')
            g[k][0].append(e['dur']); 
            if 'cpu' in a: g[k][1].append(a['cpu'])
        for k in sorted(g):
            w, c = g[k]
            print('%-40s %-4s n %6d  wall %7.1f  cpu %7s  sum wall %.2f s' % (pre.split('/')[-1] + ' ' + k, side, len(w), st.mean(w), '%.1f' % st.mean(c) if c else '-', sum(w) * 1e-6))
