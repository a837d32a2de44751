#!/bin/bash
# A/B CPU time of talus builds on one 10k case: runs the binaries alternately, ROUNDS times, and prints the
# task-clock (perf stat) and the stepping loop's wall time of each run. Keep copies of the binaries you compare
# (cp target/release/talus ../talus-old) so that a rebuild cannot change them during the session.
# usage: tools/bench/ab.sh CASE STEPS THREADS ROUNDS BIN...     e.g. tools/bench/ab.sh dense 3000 1 4 old/talus new/talus
#   CASE settle|dense (configs/bench/CASE10k.toml) or pdense (configs/bench/dense10k_periodic.toml); output goes to a scratch folder (OUT, default
#   tools/bench/out/ab, ignored by git).
#   With THREADS > 1 each line also gets the `handover` probe's ratios right after the run (see compare.sh).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 5 ] || { sed -n "2,8p" "$0"; exit 2; }
C=$1 S=$2 T=$3 R=$4; shift 4
OUT=${OUT:-$ROOT/tools/bench/out/ab}
probe() { :; }
if [ "$T" -gt 1 ]; then
  (cd "$ROOT" && cargo build --release -q -p talus-benches --bin handover >&2)
  H=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/handover
  probe() { "$H" | sed 's/handover_us=[^ ]* alone_us=[^ ]* //'; }
fi
CFG=$ROOT/configs/bench/${C}10k.toml
[ "$C" = pdense ] && CFG=$ROOT/configs/bench/dense10k_periodic.toml
for r in $(seq "$R"); do
  for b in "$@"; do
    o=$(perf stat -x, -e task-clock "$b" run "$CFG" --threads "$T" --out "$OUT" --steps "$S" 2>&1)
    tc=$(echo "$o" | grep task-clock | cut -d, -f1)
    w=$(echo "$o" | grep "wall time" | awk '{print $3}')
    echo "$b round=$r cpu_ms=${tc%.*} wall_s=$w $(probe)"
  done
done
