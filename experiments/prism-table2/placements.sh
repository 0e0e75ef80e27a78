# Sourced by experiments/prism-table2/run.sh and experiments/prism-table2-mixtral/run.sh (after lib.sh and their
# `q`): `placement_runs WORKLOAD...` runs `moesim cluster` on OUT/WORKLOAD.servers.json for the five placements
# of Table II, 30 simulated minutes, seed 1, into OUT/WORKLOAD.PLACEMENT.json. As in the paper, smartmoe, eplb
# and prism re-plan every 5 minutes (Eq. 4 decides), uniform and redundance never; smartmoe, eplb and prism also
# run never migrated, into OUT/WORKLOAD.PLACEMENT-static.json.
placement_runs() {
  local w p mig
  for w in "$@"; do
    for p in uniform redundance smartmoe eplb prism; do
      mig=(); case $p in smartmoe|eplb|prism) mig=(--migrate-every 5m) ;; esac
      q "$M" -q cluster "$out/$w.servers.json" --placement $p "${mig[@]}" --duration 30m --seed 1 --json \
        -o "$out/$w.$p.json"
      # The same placement never migrated: what the placement gives apart from what migrating costs.
      [ ${#mig[@]} -eq 0 ] || q "$M" -q cluster "$out/$w.servers.json" --placement $p --duration 30m --seed 1 \
        --json -o "$out/$w.$p-static.json"
    done
  done
}
