#!/bin/bash
# Run the dense 10k case in a periodic cell (x and y periodic, the floor only) with LIGGGHTS and print one result
# line in the form of the peers kit's run_peer.sh.
# usage: tools/bench/peers/run_periodic.sh RANKS
# env: STEPS (default 10000), DT (default 2e-6), PEERS (the peers kit, for xyz_to_data.py; default
#      ../shared/peers relative to the repository root), MPIRUN (default "mpirun --allow-run-as-root --oversubscribe -np")
# Logs go to tools/bench/out/.
set -eu
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
[ $# -eq 1 ] || { sed -n "2,8p" "$0"; exit 2; }
RANKS=$1
STEPS=${STEPS:-10000}
DT=${DT:-2e-6}
PEERS=${PEERS:-$ROOT/../shared/peers}
MPIRUN=${MPIRUN:-"mpirun --allow-run-as-root --oversubscribe -np"}
OUTB=$ROOT/tools/bench/out
mkdir -p "$OUTB"
# The start state: the peers' dense bed settled again in the cell (configs/bench/data/pdense10k.xyz), converted
# with the peers kit's xyz_to_data.py.
XYZ=$ROOT/configs/bench/data/pdense10k.xyz
DATA=$OUTB/pdense10k.data
if [ ! -f "$DATA" ] || [ "$XYZ" -nt "$DATA" ]; then
  python3 "$PEERS/xyz_to_data.py" "$XYZ" "$DATA" "dense 10k bed settled in a cell periodic along x and y" > /dev/null
fi
TAG=liggghts_pdense_10k_${STEPS}_np${RANKS}
if ! ( cd "$OUTB" && $MPIRUN "$RANKS" liggghts -in "$ROOT/tools/bench/peers/liggghts_periodic.in" -log none \
        -var DATA "$DATA" -var STEPS "$STEPS" -var DT "$DT" -var TAG "$TAG" > "$TAG.log" 2>&1 ); then
  echo "liggghts run failed, see $OUTB/$TAG.log" >&2; exit 1
fi
LOOP=$(awk '/^Loop time/ {print $4; exit}' "$OUTB/$TAG.log")
awk -v r="$RANKS" -v s="$STEPS" -v t="$LOOP" \
  'BEGIN {printf "liggghts case=pdense N=10000 ranks=%d steps=%d loop_s=%.3f particle_steps_per_s=%.3e\n", r, s, t, 10000 * s / t}'
