# Sourced by every experiments/NAME/run.sh [BUILD_DIR] [OUT_DIR] (after `set -euo pipefail`), with the script's
# own arguments: sets `here` (the experiment's folder), `root` (the repository), `M` (the moesim binary of
# BUILD_DIR, default build/), `out` (OUT_DIR, default out/figures/NAME) and `py` (a Python with matplotlib:
# MOESIM_PYTHON, else python3 when it has matplotlib, else Debian's /usr/bin/python3).
here=$(cd "$(dirname "$0")" && pwd) && root=$(cd "$here/../.." && pwd)
M=$(realpath -m "${1:-$root/build}")/moesim && out=$(realpath -m "${2:-$root/out/figures/$(basename "$here")}")
py=${MOESIM_PYTHON:-python3}
[ -n "${MOESIM_PYTHON:-}" ] || "$py" -c 'import matplotlib' 2>/dev/null || py=/usr/bin/python3
