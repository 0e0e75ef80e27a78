#!/usr/bin/env bash
# run.sh BIN OUTDIR CELL... : one `validate --cluster` run (3 exec runs of 20 s) per cell with one binary, whose
# JSON holds main's cost (errors.cost) and the cost with the machine's drift taken out (errors.cost_drift,
# exec.probe_ratio) on the same runs. Run it under /tmp/quiet-run.sh. CELLS: the cells' folder
# (../cluster-calls-2026-12-06/cells.sh makes it; only read). The runner is 06d's, unchanged.
exec "$(dirname "$0")/../cluster-calls-2026-12-06d/run.sh" "$@"
