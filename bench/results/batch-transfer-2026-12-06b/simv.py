#!/usr/bin/env python3
# TPOT (mean, s) of `moesim run` under a profile with fields overridden: simv.py MOESIM PROF TRACE BATCH SYS
# [sec.key=value ...]. The script is ../batch-transfer-2026-12-06c/simv.py, with this session's paths.
import os, runpy
os.environ.setdefault('SIMV_WORK', '/tmp/batch8')
os.environ.setdefault('SIMV_DS_MODEL', '/tmp/batch8/ds.json')
os.environ.setdefault('SIMV_SM_MODEL', '/work/wt/batch8/tests/data/models/small-moe.json')
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'batch-transfer-2026-12-06c', 'simv.py'),
               run_name='__main__')
