#!/usr/bin/env python3
# TPOT (mean, s) of `moesim run` under a profile with fields overridden: simv.py MOESIM PROF TRACE BATCH SYS [sec.key=value ...]
import json, os, subprocess, sys, tempfile
M, prof, trace, batch, sysname = sys.argv[1:6]
p = json.load(open(prof))
for kv in sys.argv[6:]:
    k, v = kv.split('=')
    sec, key = k.split('.', 1)
    if v == 'DEL': p[sec].pop(key, None); continue
    if isinstance(p[sec].get(key), dict): p[sec][key]['value'] = json.loads(v)
    else: p[sec][key] = {'value': json.loads(v), 'source': 'variant'}
W = '/tmp/batch8/ds' if 'ds' in trace or '/ds/' in trace else '/tmp/batch8/sm'
model = '/tmp/batch8/ds.json' if W.endswith('ds') else '/work/wt/batch8/tests/data/models/small-moe.json'
budget = '256MiB' if W.endswith('ds') else '64MiB'
opts = ['--system', 'offload', '--store', W + '/r.store'] if sysname == 'offload' else ['--system', 'zipmoe', '--store', W + '/z.store', '--recover-on', 'cpu']
with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as f: json.dump(p, f)
out = subprocess.run(['nice', '-n', '19', M, 'run', trace] + opts + ['--model', model, '--budget', budget, '--workers', '2', '--batch', batch, '--hw', f.name, '--json'], capture_output=True, text=True)
os.unlink(f.name)
if out.returncode: print(out.stderr); sys.exit(1)
print(json.loads(out.stdout)['metrics']['tpot']['mean_s'])
