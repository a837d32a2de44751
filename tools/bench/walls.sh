#!/bin/bash
# Cost of the wall logic, reduced vs full, in the settle case on a floor of
# 20 000 facets (configs/bench/settle10k_floor20k.toml), alternating the two
# modes PASSES times with the same binary, and the criterion bench of the
# wall stage alone.
# usage: tools/bench/walls.sh [THREADS]
# env: TALUS (binary; default target/release/talus, built if missing), PASSES (default 2),
#      STEPS (default 10000), BENCH=0 skips the criterion bench.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
THREADS=${1:-1}
PASSES=${PASSES:-2}
STEPS=${STEPS:-10000}
TALUS=${TALUS:-$ROOT/target/release/talus}
[ -x "$TALUS" ] || cargo build --release -p talus >&2
OUTB=$ROOT/tools/bench/out
mkdir -p "$OUTB"
CFG=configs/bench/settle10k_floor20k.toml
FULL=configs/bench/settle10k_floor20k.full.tmp.toml
sed 's/^resolution = "reduced"/resolution = "full"/' "$CFG" > "$FULL"
trap 'rm -f "$FULL"' EXIT
loop_time() { # config -> seconds of the stepping loop from the run summary
  "$TALUS" run "$1" --threads "$THREADS" --steps "$STEPS" --out "$OUTB/walls-run" 2>&1 \
    | sed -n "s/.*wall time *\([0-9.]*\) s.*/\1/p" | tail -1
}
echo "mode threads steps loop_s"
for p in $(seq "$PASSES"); do
  for mode in reduced full; do
    cfg=$CFG; [ $mode = full ] && cfg=$FULL
    echo "$mode $THREADS $STEPS $(loop_time $cfg)"
  done
done
if [ "${BENCH:-1}" != 0 ]; then
  cargo bench -p talus-benches --bench wall_logic -- --warm-up-time 1 --measurement-time 5 2>&1 \
    | grep -E "^wall_stage|time:|thrpt:"
fi
