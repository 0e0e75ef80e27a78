#!/usr/bin/env bash
# Replay results of two moesim binaries, field by field: `replay --json` of the bundled real traces, from a
# version-2 `.mtr` (the lookup index) and a version-1 one (the stream built at load), both scopes, several
# capacities (experts per layer, a share, bytes), batch 1 and 4. Only the timing fields (replay_s,
# lookups_per_s, and the header: the binary's version and commit) may differ; every other field must be equal.
#
#   bench/replay_identity.sh BEFORE_MOESIM AFTER_MOESIM [POLICIES]
#
# POLICIES: a comma-separated list (default belady). Work files go to $WORK (default: a temporary folder).
# Prints one line per configuration and "identical: N of N"; exits 1 on the first difference.
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=${1:?usage: $0 BEFORE_MOESIM AFTER_MOESIM [POLICIES]}
AFTER=${2:?usage: $0 BEFORE_MOESIM AFTER_MOESIM [POLICIES]}
POLICIES=${3:-belady}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"

# Drops what measures time rather than the result.
strip_timing() {
  python3 -c '
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("header", "replay_s", "lookups_per_s")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
print(json.dumps(strip(json.load(sys.stdin)), sort_keys=True, indent=1))'
}

n=0
for csv in data/traces/*.route.csv; do
  name=$(basename "$csv" .route.csv)
  [ -s "$WORK/$name-v2.mtr" ] || "$BEFORE" trace import "$csv" -o "$WORK/$name-v2.mtr" 2>/dev/null
  [ -s "$WORK/$name-v1.mtr" ] || "$BEFORE" trace import "$csv" --no-lookup-index -o "$WORK/$name-v1.mtr" 2>/dev/null
  for file in "$WORK/$name-v2.mtr" "$WORK/$name-v1.mtr"; do
    for scope in global layer; do
      for batch in 1 4; do
        for budget in 1xtopk 8 16 32 64 25% 1GiB; do
          for policy in ${POLICIES//,/ }; do
            args=(replay "$file" --policy "$policy" --scope "$scope" --budget "$budget" --batch "$batch" --json)
            # Standard output (the JSON, timing fields dropped) and standard error (warnings, an error) both.
            a=$({ "$BEFORE" "${args[@]}" 2>"$WORK/err-a" || true; } | { strip_timing 2>/dev/null || echo "no JSON"; })
            b=$({ "$AFTER" "${args[@]}" 2>"$WORK/err-b" || true; } | { strip_timing 2>/dev/null || echo "no JSON"; })
            a+=$'\n'$(cat "$WORK/err-a")
            b+=$'\n'$(cat "$WORK/err-b")
            n=$((n + 1))
            if [ "$a" != "$b" ]; then
              echo "DIFFERENT: ${args[*]}"
              diff <(echo "$a") <(echo "$b") | head -20
              exit 1
            fi
            hits=$("$AFTER" "${args[@]}" 2>/dev/null | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r["hits"], r["evictions"])' 2>/dev/null || echo "(no result: $(head -c 100 "$WORK/err-b"))")
            echo "same: $(basename "$file") $policy $scope batch=$batch budget=$budget hits/evictions $hits"
          done
        done
      done
    done
  done
done
echo "identical: $n of $n"
