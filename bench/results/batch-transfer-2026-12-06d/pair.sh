#!/bin/bash
# The script is ../batch-transfer-2026-12-06c/pair.sh (the same arguments and environment).
exec bash "$(dirname "$0")/../batch-transfer-2026-12-06c/pair.sh" "$@"
