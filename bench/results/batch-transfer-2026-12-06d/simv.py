#!/usr/bin/env python3
# The script is ../batch-transfer-2026-12-06c/simv.py (the same arguments).
import os, runpy
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'batch-transfer-2026-12-06c', 'simv.py'),
               run_name='__main__')
