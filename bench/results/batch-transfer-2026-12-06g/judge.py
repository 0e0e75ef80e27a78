#!/usr/bin/env python3
# The pre-registered judgement of the 1-token compute cost (batch-transfer-2026-12-06g.md) on the same exec
# runs: each held-out cell's validate JSON (its exec TPOT median and interval) against `moesim run` (06c's
# simv.py) under the cell's profile, with main's binary and with the candidate's. Both lines carry
# gpu.fresh_expert_overhead as main's calibrate now writes it (06e's cellsim3.py's value) where the profile
# lacks it. Verdict at 10% over the exec median's interval: met, missed, undecided.
#   usage: judge.py MAIN_MOESIM CANDIDATE_MOESIM Q...   (Q: 06e's pair3.sh output folders)
import importlib.util, json, os, subprocess, sys
MAIN, CAND = sys.argv[1:3]
here = os.path.dirname(os.path.abspath(__file__))
simv = os.path.join(here, '..', 'batch-transfer-2026-12-06c', 'simv.py')
spec = importlib.util.spec_from_file_location('c3', os.path.join(here, '..', 'batch-transfer-2026-12-06e', 'cellsim3.py'))
def tpot(M, prof, tr, batch, sysname, over):
    out = subprocess.run(['python3', simv, M, prof, tr, batch, sysname] + over, capture_output=True, text=True)
    if out.returncode: sys.exit(out.stdout + out.stderr)
    return float(out.stdout.strip().splitlines()[-1])
c3 = importlib.util.module_from_spec(spec)
spec.loader.exec_module(c3)  # 06e's cellsim3.py: fresh_value (the overhead main's calibrate writes) and verdict
def verdict(sim, lo, hi):
    return c3.verdict(sim, lo, hi)[0]
rows = []
for mod, sysname, A, B, batch, prof, v, ex, lo, hi in c3.cells(sys.argv[3:]):
    over = [] if 'fresh_expert_overhead' in json.load(open(prof))['gpu'] else ['gpu.fresh_expert_overhead=%r' % c3.fresh_value(prof)[0]]
    tr = '/tmp/btc/%s%s.mtr' % (mod, B)
    m, n = tpot(MAIN, prof, tr, batch, sysname, over), tpot(CAND, prof, tr, batch, sysname, over)
    vm, vn = verdict(m, lo, hi), verdict(n, lo, hi)
    rows.append((abs(m / ex - 1), abs(n / ex - 1), vm, vn))
    print('%s %-7s %s->%s b%s: exec %.5f s [%.5f, %.5f] (%d runs)  main %+6.1f%% %-9s  candidate %+6.1f%% %s' % (
        mod, sysname, A, B, batch, ex, lo, hi, len(v['exec']['tpot_s']), 100 * (m / ex - 1), vm,
        100 * (n / ex - 1), vn), flush=True)
c3.summary(rows, 'candidate')
