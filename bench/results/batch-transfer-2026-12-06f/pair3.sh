#!/bin/bash
# 06e's pair3.sh, unchanged (one cell: a b8 pair calibrated at b1, then the MORE batches under its profile).
exec "$(dirname "$0")/../batch-transfer-2026-12-06e/pair3.sh" "$@"
