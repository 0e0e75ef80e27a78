#!/usr/bin/env python3
# Per op kind, decode steps only: exec against cost (validate --timeline PREFIX-{exec,cost}.json).
# usage: opk.py [--first-word] PREFIX_B1 PREFIX_B8   prints, per kind (and token class), n, mean us exec/cost, and cost/exec - 1
# at each batch, plus the change of that error between the two batches. A kind is the op's name before its
# layer ('decompress + read e' its own kind); --first-word takes the name's first word (06b's rule).
import json, re, sys, statistics as st
FIRST_WORD = '--first-word' in sys.argv
if FIRST_WORD: sys.argv.remove('--first-word')
from collections import defaultdict

def load(path):
    d = json.load(open(path))
    ev = d['traceEvents'] if isinstance(d, dict) else d
    decode = {e['args']['step'] for e in ev if e.get('ph') == 'X' and e.get('tid') == 1001
              and e.get('args', {}).get('phase') == 'decode'}
    g = defaultdict(list)
    steps = [e['dur'] for e in ev if e.get('ph') == 'X' and e.get('tid') == 1001 and e['args'].get('phase') == 'decode']
    for e in ev:
        if e.get('ph') != 'X' or e.get('tid') in (1001, 1002): continue
        a = e.get('args') or {}
        if a.get('step') not in decode: continue
        kind = e['name'].split()[0] if FIRST_WORD else re.split(r' L\d', e['name'])[0].replace(' ', '_')
        tok = a.get('tokens')
        if kind in ('expert_compute', 'dense_compute'):
            cls = '%s t=%s%s' % (kind, tok if tok in (1, 2, 3, 4) else ('5-8' if tok and tok <= 8 else '9+'),
                                 ' fresh' if a.get('fresh') and kind == 'expert_compute' and tok == 1 else '')
        else:
            cls = kind
        g[cls].append(e['dur'])
        g['ALL ' + kind].append(e['dur'])
    g['STEP (decode)'] = steps
    return g, len(steps)

def row(ex, co):
    if not ex or not co: return None
    return len(ex), st.mean(ex), st.mean(co), st.mean(co) / st.mean(ex) - 1, sum(co) / sum(ex) - 1, st.median(ex), st.median(co)

res = {}
for pre in sys.argv[1:]:
    (ex, n1), (co, n2) = load(pre + '-exec.json'), load(pre + '-cost.json')
    res[pre] = {k: row(ex.get(k), co.get(k)) for k in set(ex) | set(co)}
    res[pre]['_n'] = (n1, n2)
keys = sorted({k for r in res.values() for k in r if not k.startswith('_')})
pres = sys.argv[1:]
print('decode steps:', {p: res[p]['_n'] for p in pres})
hdr = '%-32s' % 'op kind' + ''.join('| %6s %9s %9s %7s %7s ' % ('n', 'exec mean', 'cost mean', 'mean err', 'p50 err') for p in pres)
print(hdr)
for k in keys:
    s = '%-32s' % k
    for p in pres:
        r = res[p].get(k)
        s += '| %6d %9.1f %9.1f %+6.1f%% %+6.1f%% ' % (r[0], r[1], r[2], 100 * r[3], 100 * (r[6] / r[5] - 1) if r[5] else 0) if r else '| %44s ' % '-'
    print(s)
