#!/usr/bin/env python3
# The house rule on the same exec runs: each cell's validate JSON (exec TPOT median) against `moesim run`
# (simv.py) of main's binary under main's read line (the profile's calibration.fits.ssd_read_io_thread and
# ssd_read_prefill_io_thread: the line main's calibrate fits over the same runs' ops; where the profile has
# them, also main's read CPU line, ssd_read_cpu_io_thread / ssd_read_cpu_prefill_io_thread, and main's
# decompression line, decompress_with_read_tail) and of this branch's binary under the profile as this
# branch's calibrate wrote it (the fused reads on the read line and on the read CPU line, their decompression
# points without their read's CPU tail). cpu.prefill_slowdown stays this branch's (a prefill's: not TPOT).
#   usage: cellsim2.py MAIN_MOESIM NEW_MOESIM Q   (Q: a pair.sh output folder: prof-*.json, val-*-bN.json)
# Traces and models as simv.py finds them (SIMV_WORK, SIMV_DS_MODEL, SIMV_SM_MODEL).
import glob, json, os, re, subprocess, sys
MAIN, NEW, Q = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))
W = os.environ.get('SIMV_WORK', '/tmp/btc')
def trace(mod, b):
    t = '%s/%s/seq%s.mtr' % (W, mod, b)
    return t if os.path.exists(t) else '%s/%s%s.mtr' % (W, mod, b)
def tpot(M, prof, tr, batch, sysname, over):
    out = subprocess.run(['python3', here + '/simv.py', M, prof, tr, batch, sysname] + over, capture_output=True, text=True)
    if out.returncode: sys.exit(out.stdout + out.stderr)
    return float(out.stdout.strip().splitlines()[-1])
for val in sorted(glob.glob(Q + '/val-*-b[0-9]*.json')):
    mod, sysname, A, B, batch = re.match(r'val-(\w+)-(\w+)-(\d+)-(\d+)-b(\d+)\.json', os.path.basename(val)).groups()
    prof = '%s/prof-%s-%s-%s-%s.json' % (Q, mod, sysname, A, B)
    v = json.load(open(val)); ex = v['exec']['tpot_median_s']
    fits = json.load(open(prof))['calibration'].get('fits') or {}
    def line(k, lat, bw):
        f = fits.get(k)
        return ['ssd.%s=%r' % (lat, max(f['intercept_s'], 0.0)), 'ssd.%s=%r' % (bw, 1 / f['slope'])] if f else []
    old = line('ssd_read_io_thread', 'read_latency', 'read_bandwidth') + \
          line('ssd_read_prefill_io_thread', 'prefill_read_latency', 'prefill_read_bandwidth')
    def cpu_line(k, pre):
        f = fits.get(k)
        if not f: return []
        o = ['ssd.%sread_cpu_overhead=%r' % (pre, max(f['intercept_s'], 0.0))]
        return o + ['ssd.%sread_cpu_bandwidth=%s' % (pre, repr(1 / f['slope']) if f['slope'] > 0 else 'DEL')]
    old += cpu_line('ssd_read_cpu_io_thread', '') + cpu_line('ssd_read_cpu_prefill_io_thread', 'prefill_')
    if 'decompress_with_read_tail' in fits:
        old += ['cpu.decompress_bandwidth_per_core=%r' % (1 / fits['decompress_with_read_tail']['slope'])]
    tr = trace(mod, B)
    m = tpot(MAIN, prof, tr, batch, sysname, old)
    n = tpot(NEW, prof, tr, batch, sysname, [])
    print('%s %s %s->%s b%s: exec %.4f s (%d runs)  main %+6.1f%%  branch %+6.1f%%' % (
        mod, sysname, A, B, batch, ex, len(v['exec']['tpot_s']), 100 * (m / ex - 1), 100 * (n / ex - 1)), flush=True)
