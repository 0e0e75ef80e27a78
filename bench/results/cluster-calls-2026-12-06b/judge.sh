#!/usr/bin/env bash
# judge.sh OUTDIR CELL... : per cell, main's binary and h-calls2's back to back (order alternating by cell);
# the script is ../cluster-calls-2026-12-06c/judge.sh with this session's binaries and cells.
MAIN=/tmp/main-8feb9a2/moesim MINE=/tmp/calls2/bin3/moesim CELLS=/tmp/calls2/w \
  exec bash "$(dirname "$0")/../cluster-calls-2026-12-06c/judge.sh" "$@"
