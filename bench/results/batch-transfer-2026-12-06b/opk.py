#!/usr/bin/env python3
# Per op kind, decode steps only: exec against cost. The script is ../batch-transfer-2026-12-06c/opk.py;
# this session's tables took a kind as the op name's first word: opk.py PREFIX_B1 PREFIX_B8.
import os, runpy, sys
sys.argv.insert(1, '--first-word')
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'batch-transfer-2026-12-06c', 'opk.py'),
               run_name='__main__')
