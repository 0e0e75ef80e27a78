#!/usr/bin/env python3
# One cell, the profile as calibrate wrote it (the GEMM lines anchored) and without the anchor (each line
# divided by its anchor: the probe's line as before), both simulated with `moesim run` against the same exec
# runs (the validate JSON's exec TPOT median). usage: cellsim.py MOESIM VAL.json PROF.json TRACE BATCH SYS
import json, re, subprocess, sys
M, val, prof, trace, batch, sysname = sys.argv[1:7]
here = '/tmp/batch8'
v = json.load(open(val)); ex = v['exec']['tpot_median_s']
p = json.load(open(prof)); q = json.loads(json.dumps(p))
anchors = {}
for k in ('dense', 'expert'):
    o = q['gpu'].get(k + '_gemm_overhead'); r = q['gpu'].get(k + '_gemm_flops')
    m = re.search(r'scaled by ([0-9.]+)', (o or {}).get('source', ''))
    if not (o and r and m): continue
    a = float(m.group(1)); anchors[k] = a
    o['value'] /= a; r['value'] *= a
json.dump(q, open(prof + '.unanchored.json', 'w'))
def tpot(path):
    out = subprocess.run(['python3', here + '/simv.py', M, path, trace, batch, sysname], capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])
new, old = tpot(prof), tpot(prof + '.unanchored.json')
print('exec %.4f s (%d runs)  validate cost %+6.1f%%  anchored %+6.1f%%  unanchored %+6.1f%%  anchors %s' % (
    ex, len(v['exec']['tpot_s']), 100 * v['errors']['cost']['tpot'], 100 * (new / ex - 1), 100 * (old / ex - 1),
    ' '.join('%s %.3f' % kv for kv in anchors.items())))
