#!/bin/bash
# Run the rigid-block benchmark case with talus from the Yade peer's start state and print one result line.
# usage: tools/bench/talus_blocks.sh [N [STEPS]]     N default 1000, STEPS default 200 (a smoke run)
# env: WARMUP (the state's warm-up steps; default 0), SEED (default 1), LAW (volume | linear; default volume),
#      RESOLUTION (full | reduced | potential: [run] block_resolution; default full), THREADS (default 1),
#      TOL ([run] cell_tolerance in m; default: the engine's, a tenth of the smallest bounding radius),
#      TALUS (binary; default target/release/talus, built if missing),
#      STATE (the state files without extension; default tools/bench/out/blocks_N<N>_seed<SEED>_w<WARMUP>),
#      STATE_LAW (the law Yade warms up with when it has to make a missing state; default volume),
#      ARROW_PYTHON (python3 with pyarrow for the end-of-run counts; default python3),
#      HANDOVER (tools/benches' `handover` probe binary: when set, run after a run with THREADS > 1 and its
#      handover_us, handover_ratio, together_ratio appended, as compare.sh does).
# The start state is the Yade script's (tools/bench/peers/yade_blocks.py): the same blocks, poses and velocities
# after WARMUP steps of Yade. If the default files are missing, the script runs tools/bench/yade_blocks.sh N 1 with
# WARMUP, SEED and LAW=STATE_LAW to make them. The talus config is configs/bench/blocks.toml.in filled in by
# tools/bench/talus_blocks.py (the state's OBJ as mesh shapes, one list row per block with its velocity and
# spin, the box from the state, LAW's model, RESOLUTION) and written to tools/bench/out/.
# Output line: loop_s (the "wall time" of talus's run summary: the stepping loop only, recording of the last
# step included; reading the config, the meshes and setting up are not in it), s_per_step, the stage shares of
# the summary, stored and active contacts (summary), contacts at the end split block-block / block-facet
# (stored, touching = f_n > 0, as Yade's count of non-zero normal forces), the blocks' mean and least height
# and kinetic energy, peak RSS (/usr/bin/time -v) and other_cpu_s (CPU time of other processes during the
# whole run, as in yade_blocks.sh). Logs and output go to tools/bench/out/.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N=${1:-1000}
STEPS=${2:-200}
LAW=${LAW:-volume} SEED=${SEED:-1} WARMUP=${WARMUP:-0} RESOLUTION=${RESOLUTION:-full} THREADS=${THREADS:-1}
TALUS=${TALUS:-$ROOT/target/release/talus}
OUTB=$ROOT/tools/bench/out
STATE=${STATE:-$OUTB/blocks_N${N}_seed${SEED}_w${WARMUP}}
APY=${ARROW_PYTHON:-python3}
$APY -c 'import pyarrow' 2> /dev/null || APY=/usr/bin/python3
[ -x /usr/bin/time ] || { echo "/usr/bin/time not found: apt-get install -y time" >&2; exit 2; }
case $LAW in volume|linear) ;; *) echo "LAW must be volume or linear" >&2; exit 2;; esac
case $RESOLUTION in full|reduced|potential) ;; *) echo "RESOLUTION must be full, reduced or potential" >&2; exit 2;; esac
mkdir -p "$OUTB"
if [ ! -x "$TALUS" ]; then
  (cd "$ROOT" && cargo build --release -p talus >&2)
fi
if [ ! -f "$STATE.json" ] || [ ! -f "$STATE.obj" ]; then
  [ "$STATE" = "$OUTB/blocks_N${N}_seed${SEED}_w${WARMUP}" ] || { echo "no start state $STATE.{json,obj}" >&2; exit 2; }
  echo "no start state $STATE.{json,obj}: making it with Yade (WARMUP=$WARMUP)" >&2
  LAW=${STATE_LAW:-volume} SEED=$SEED WARMUP=$WARMUP "$ROOT/tools/bench/yade_blocks.sh" "$N" 1 >&2
  [ -f "$STATE.json" ] || { echo "Yade did not write $STATE.json" >&2; exit 1; }
fi

TAG=talus_blocks_${LAW}_${RESOLUTION}_N${N}_seed${SEED}_w${WARMUP}_s${STEPS}_t${THREADS}${TOL:+_tol$TOL}
RUN=$OUTB/$TAG
INFO=$(/usr/bin/python3 "$ROOT/tools/bench/talus_blocks.py" config "$ROOT/configs/bench/blocks.toml.in" \
  "$STATE.json" "$STATE.obj" "$LAW" "$RESOLUTION" "$STEPS" "$RUN.toml" ${TOL:+"$TOL"})
NB=$(echo "$INFO" | sed 's/.*n=\([0-9]*\).*/\1/')
[ "$NB" = "$N" ] || { echo "the state has $NB blocks, not $N" >&2; exit 1; }
STATE_LAW_USED=$(echo "$INFO" | sed 's/.* law=\([a-z]*\).*/\1/')

busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
B0=$(busy)
if ! /usr/bin/time -v -o "$RUN.time" "$TALUS" run "$RUN.toml" --steps "$STEPS" --threads "$THREADS" --out "$RUN" \
    > "$RUN.log" 2>&1; then
  echo "talus run failed, see $RUN.log" >&2; exit 1
fi
B1=$(busy)
OWN=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {print u + s}' "$RUN.time")
OTHER=$(awk -v b=$((B1 - B0)) -v t="$(getconf CLK_TCK)" -v o="$OWN" 'BEGIN {printf "%.1f", b / t - o}')
LOOP=$(awk '/^wall time/ {print $3; exit}' "$RUN.log")
STORED=$(awk '/^contacts/ {print $2; exit}' "$RUN.log")
ACTIVE=$(awk '/^contacts/ {gsub(/\(/, "", $3); print $3; exit}' "$RUN.log")
STAGES=$(awk '/^time by stage/ {sub(/^time by stage +/, ""); gsub(/ %/, ""); gsub(/, /, " stage_"); print "stage_" $0; exit}' \
  "$RUN.log" | sed 's/stage_\([a-z]*\) /stage_\1=/g')
RSS_KB=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$RUN.time")
COUNTS=$($APY "$ROOT/tools/bench/talus_blocks.py" count "$RUN" 2> /dev/null | sed 's/^step=[^ ]* //') || COUNTS=""
VERSION=$("$TALUS" --version | awk '{print $2}')
awk -v law=$LAW -v res=$RESOLUTION -v tol="${TOL:-auto}" -v n=$N -v seed=$SEED -v r=$THREADS -v w=$WARMUP -v s=$STEPS -v t=$LOOP \
    -v v="$VERSION" -v sl="$STATE_LAW_USED" -v st="$STAGES" -v c=${STORED:-0} -v a=${ACTIVE:-0} -v x="$COUNTS" \
    -v m=$RSS_KB -v o=$OTHER \
  'BEGIN {if (t > 0) {sps = sprintf("%.4g", t / s); rate = sprintf("%.4g", s / t); bs = sprintf("%.4g", n * s / t)}
         else {sps = rate = bs = "n/a"}   # a loop under 5 ms prints as 0.00 s
         printf "talus_blocks code=talus version=%s law=%s resolution=%s tol=%s N=%d seed=%d threads=%d warmup=%d state_law=%s steps=%d dt=1e-05 loop_s=%.3f s_per_step=%s steps_per_s=%s block_steps_per_s=%s %s stored_contacts=%d active_contacts=%d %s peak_rss_mb=%.1f other_cpu_s=%s",
          v, law, res, tol, n, seed, r, w, sl, s, t, sps, rate, bs, st, c, a, x, m / 1024, o}'
# Where the CPUs sat right after a multi-threaded run (see docs/benchmarks.md, "The CPU-placement probe").
if [ -n "${HANDOVER:-}" ] && [ "$THREADS" -gt 1 ]; then
  printf ' %s' "$("$HANDOVER" 2> /dev/null | sed 's/alone_us=[^ ]* //')"
fi
echo
