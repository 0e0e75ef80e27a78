#!/usr/bin/env python3
# One cell: the profile as this branch's calibrate wrote it (the SSD read line through the I/O thread's reads
# and the CPU workers' fused E-chunk reads) and as main's would have (the line through the I/O thread's reads
# alone: calibration.fits.ssd_read_io_thread / ssd_read_prefill_io_thread, refitted over the same runs' ops),
# both simulated with `moesim run` against the same exec runs (the validate JSON's exec TPOT median).
#   usage: cellsim.py MOESIM VAL.json PROF.json TRACE BATCH SYS
import json, os, subprocess, sys
M, val, prof, trace, batch, sysname = sys.argv[1:7]
here = os.path.dirname(os.path.abspath(__file__))
v = json.load(open(val)); ex = v['exec']['tpot_median_s']
p = json.load(open(prof)); fits = p['calibration'].get('fits') or {}
def line(k, lat, bw):
    f = fits.get(k)
    return ['ssd.%s=%r' % (lat, max(f['intercept_s'], 0.0)), 'ssd.%s=%r' % (bw, 1 / f['slope'])] if f else []
old = line('ssd_read_io_thread', 'read_latency', 'read_bandwidth') + \
      line('ssd_read_prefill_io_thread', 'prefill_read_latency', 'prefill_read_bandwidth')
def tpot(over):
    out = subprocess.run(['python3', here + '/simv.py', M, prof, trace, batch, sysname] + over, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])
new = tpot([]); was = tpot(old) if old else new
print('exec %.4f s (%d runs)  validate cost %+6.1f%%  with fused reads on the line %+6.1f%%  I/O thread alone %+6.1f%%  [%s]' % (
    ex, len(v['exec']['tpot_s']), 100 * v['errors']['cost']['tpot'], 100 * (new / ex - 1), 100 * (was / ex - 1), ' '.join(old)))
