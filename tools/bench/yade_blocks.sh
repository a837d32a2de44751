#!/bin/bash
# Run the rigid-block benchmark case with Yade (Polyhedra) on one thread and print one result line.
# usage: tools/bench/yade_blocks.sh [N [STEPS]]     N default 1000, STEPS default 200 (a smoke run: a few seconds)
# env: LAW (volume | linear; default volume), SEED (default 1), WARMUP (untimed steps before the timed ones,
#      default 0), DT (s or "auto"; default 1e-5), VERLET (collider sweep distance, m; default 1e-4),
#      LATTICE (e.g. 10x10x10; default from N), YADE (default yade, i.e. yade-double),
#      STATE=0 skips writing the start state files.
# The case and the options are described at the top of tools/bench/peers/yade_blocks.py and in
# docs/benchmarks.md ("Blocks"). Output line: the script's `yade_blocks ...` line (loop_s = wall-clock seconds of
# the timed O.run(STEPS) only, s_per_step, steps_per_s, contacts at the end) with the machine's load around the
# run appended. Written to tools/bench/out/ (ignored by git): the log, the result as a JSON line
# (yade_blocks.jsonl) and the start state (blocks_N<N>_seed<SEED>_w<WARMUP>.json and .obj).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N=${1:-1000}
STEPS=${2:-200}
LAW=${LAW:-volume} SEED=${SEED:-1} WARMUP=${WARMUP:-0} DT=${DT:-1e-5} VERLET=${VERLET:-1e-4}
YADE=${YADE:-yade}
command -v "$YADE" > /dev/null || { echo "$YADE not found: apt-get install -y yade" >&2; exit 2; }
/usr/bin/python3 -c 'import scipy' 2> /dev/null || { echo "scipy missing: apt-get install -y python3-scipy" >&2; exit 2; }
OUTB=$ROOT/tools/bench/out
mkdir -p "$OUTB"
TAG=yade_blocks_${LAW}_N${N}_seed${SEED}_w${WARMUP}_s${STEPS}
ARGS=(--n "$N" --steps "$STEPS" --seed "$SEED" --warmup "$WARMUP" --dt "$DT" --law "$LAW" --verlet "$VERLET"
      --result "$OUTB/yade_blocks.jsonl")
[ -n "${LATTICE:-}" ] && ARGS+=(--lattice "$LATTICE")
if [ "${STATE:-1}" != 0 ]; then
  BASE=$OUTB/blocks_N${N}_seed${SEED}_w${WARMUP}
  ARGS+=(--state "$BASE.json" --obj "$BASE.obj")
fi
busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
B0=$(busy)
# -j1: one OpenMP thread; -n: no GUI; -x: exit at the end; -f2: errors only (Yade's Polyhedra code logs a warning
# from its separating-plane test for many new pairs, which would otherwise flood the log and the timing).
if ! /usr/bin/time -f "%U %S" -o "$OUTB/$TAG.cpu" "$YADE" -j1 -n -x -f2 \
    "$ROOT/tools/bench/peers/yade_blocks.py" "${ARGS[@]}" > "$OUTB/$TAG.log" 2>&1; then
  echo "yade run failed, see $OUTB/$TAG.log" >&2; exit 1
fi
B1=$(busy)
LINE=$(grep '^yade_blocks ' "$OUTB/$TAG.log" | tail -1)
[ -n "$LINE" ] || { echo "no result line in $OUTB/$TAG.log" >&2; exit 1; }
# CPU time taken by other processes during the run (whole run, setup included), as in compare.sh.
OTHER=$(awk -v b=$((B1 - B0)) -v t="$(getconf CLK_TCK)" '{printf "%.1f", b / t - $1 - $2}' "$OUTB/$TAG.cpu")
echo "$LINE other_cpu_s=$OTHER"
