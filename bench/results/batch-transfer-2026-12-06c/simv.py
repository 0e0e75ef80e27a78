#!/usr/bin/env python3
# TPOT (mean, s) of `moesim run` under a profile with fields overridden (paths: this session's /tmp/btc, or the
# environment's SIMV_WORK, SIMV_DS_MODEL, SIMV_SM_MODEL, as ../batch-transfer-2026-12-06b/simv.py gives them):
#   simv.py MOESIM PROF TRACE BATCH SYS [sec.key=value|sec.key*=factor|sec.key=DEL ...]
import json, os, subprocess, sys, tempfile
M, prof, trace, batch, sysname = sys.argv[1:6]
p = json.load(open(prof))
for kv in sys.argv[6:]:
    k, v = kv.split('=')
    mul = k.endswith('*')
    sec, key = k.rstrip('*').split('.', 1)
    if v == 'DEL': p[sec].pop(key, None); continue
    cur = p[sec].get(key)
    val = json.loads(v)
    if mul: val = (cur['value'] if isinstance(cur, dict) else cur) * val
    if isinstance(cur, dict): cur['value'] = val
    else: p[sec][key] = {'value': val, 'source': 'variant'}
mod = 'ds' if '/ds' in trace else 'sm'
W = os.environ.get('SIMV_WORK', '/tmp/btc') + '/' + mod
model = (os.environ.get('SIMV_DS_MODEL', '/tmp/batch-transfer-cells/ds.json') if mod == 'ds' else
         os.environ.get('SIMV_SM_MODEL', os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tests/data/models/small-moe.json')))
budget = '256MiB' if mod == 'ds' else '64MiB'
opts = ['--system', 'offload', '--store', W + '/r.store'] if sysname == 'offload' else ['--system', 'zipmoe', '--store', W + '/z.store', '--recover-on', 'cpu']
with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as f: json.dump(p, f)
out = subprocess.run(['nice', '-n', '19', M, 'run', trace] + opts + ['--model', model, '--budget', budget, '--workers', '2', '--batch', batch, '--hw', f.name, '--json'], capture_output=True, text=True)
os.unlink(f.name)
if out.returncode: print(out.stderr); sys.exit(1)
print(json.loads(out.stdout)['metrics']['tpot']['mean_s'])
