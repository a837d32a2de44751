#!/bin/bash
# Run one peer-benchmark case with talus and print one result line.
# usage: tools/bench/run.sh CASE N THREADS
#   CASE     settle (jittered lattice falls into the box) | dense (settled bed stays at rest) |
#            pdense (dense with x and y periodic and the floor only; 10k only, contacts not counted)
#   N        10k | 50k
#   THREADS  worker threads (the peers' MPI ranks)
# env: STEPS (default 10000), TALUS (binary; default target/release/talus, built if missing),
#      PEERS (the peers kit; default ../shared/peers relative to the repository root),
#      PYTHON (python3 with numpy + scipy for count_contacts.py),
#      ARROW_PYTHON (python3 with pyarrow for the final positions)
# Output line: case, N, threads, steps, loop_s (the stepping loop: the "wall time" of talus's run summary),
#   particle_steps_per_s = N * steps / loop_s, contacts in the final positions counted the peers' way
#   (count_contacts.py), peak RSS of the whole process (/usr/bin/time -v) and that RSS per ball and per stored
#   talus contact. The 10k configs are configs/bench/*10k.toml; the 50k ones are generated into tools/bench/out/
#   from the peers' data (not committed). Logs, output and final positions go to tools/bench/out/.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
[ $# -eq 3 ] || { sed -n "2,15p" "$0"; exit 2; }
CASE=$1 NL=$2 THREADS=$3
STEPS=${STEPS:-10000}
PEERS=${PEERS:-$ROOT/../shared/peers}
TALUS=${TALUS:-$ROOT/target/release/talus}
OUTB=$ROOT/tools/bench/out
PY=${PYTHON:-python3}
$PY -c 'import numpy, scipy' 2> /dev/null || PY=/usr/bin/python3
APY=${ARROW_PYTHON:-python3}
$APY -c 'import pyarrow' 2> /dev/null || APY=/usr/bin/python3
[ -x /usr/bin/time ] || { echo "/usr/bin/time not found: apt-get install -y time" >&2; exit 2; }
case $CASE in settle|dense|pdense) ;; *) echo "CASE must be settle, dense or pdense" >&2; exit 2;; esac
mkdir -p "$OUTB"
if [ ! -x "$TALUS" ]; then
  cargo build --release -p talus >&2
fi

case $NL in
  10k)
    CONFIG=configs/bench/${CASE}10k.toml
    [ $CASE = settle ] && XYZ=configs/bench/data/lat10k.xyz || XYZ=configs/bench/data/dense10k.xyz
    [ $CASE = pdense ] && CONFIG=configs/bench/dense10k_periodic.toml && XYZ=configs/bench/data/pdense10k.xyz;;
  50k)
    [ $CASE = pdense ] && { echo "pdense is a 10k case" >&2; exit 2; }
    [ -d "$PEERS" ] || { echo "the 50k cases need the peers kit: not found at $PEERS (set PEERS=DIR)" >&2; exit 2; }
    mkdir -p "$OUTB/data"
    if [ $CASE = settle ]; then
      XYZ=$OUTB/data/lat50k.xyz
      if [ ! -f "$XYZ" ]; then
        $PY "$PEERS/gen_lattice.py" 50 50 20 "$OUTB/data/lat50k" > /dev/null
        rm -f "$OUTB/data/lat50k.data"
      fi
    else
      XYZ=$OUTB/data/dense50k.xyz
      [ -f "$XYZ" ] || cp "$PEERS/data/dense50k.xyz" "$XYZ"
    fi
    # The 10k config with the 50k start file, box size (from the xyz header) and output folder.
    read -r LX LY LZ < <(head -1 "$XYZ" | awk '{print $3, $5, $7}')
    CONFIG=$OUTB/${CASE}50k.toml
    sed -e "s|^path = \"data/[a-z0-9]*\.xyz\"|path = \"$XYZ\"|" \
        -e "s|^max = \[.*\]|max = [$LX, $LY, $LZ]|" \
        -e "s|N = 10 000|N = 50 000|" \
        -e "s|out/bench/${CASE}10k|out/bench/${CASE}50k|" configs/bench/${CASE}10k.toml > "$CONFIG";;
  *) echo "N must be 10k or 50k" >&2; exit 2;;
esac

TAG=talus_${CASE}_${NL}_${STEPS}_t${THREADS}
RUN=$OUTB/$TAG
if ! /usr/bin/time -v -o "$RUN.time" "$TALUS" run "$CONFIG" --steps "$STEPS" --threads "$THREADS" --out "$RUN" \
    > "$RUN.log" 2>&1; then
  echo "talus run failed, see $RUN.log" >&2; exit 1
fi
[ -f "$PEERS/count_contacts.py" ] || echo "no peers kit at $PEERS (set PEERS=DIR): contacts not counted" >&2
LOOP=$(awk '/^wall time/ {print $3; exit}' "$RUN.log")
STORED=$(awk '/^contacts/ {print $2; exit}' "$RUN.log")
RSS_KB=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$RUN.time")
N=$(head -1 "$XYZ" | awk '{print $13}')
$APY tools/bench/final_positions.py "$RUN" "${RUN}_final.txt" > /dev/null
# count_contacts.py knows the five planes of the box, not a periodic cell.
[ $CASE = pdense ] && CONTACTS="" || CONTACTS=$($PY "$PEERS/count_contacts.py" "$XYZ" "${RUN}_final.txt" 2> /dev/null \
  | awk -v n=$N '{for (i = 1; i <= NF; i++) {split($i, a, "="); v[a[1]] = a[2]}}
      END {if (v["contacts_pp"] != "") printf "contacts_pp=%d contacts_pw=%d contacts_per_ball=%.3f coordination=%.3f", v["contacts_pp"], v["contacts_pw"], (v["contacts_pp"] + v["contacts_pw"]) / n, (2 * v["contacts_pp"] + v["contacts_pw"]) / n}') || true
awk -v k=$CASE -v n=$N -v r=$THREADS -v s=$STEPS -v t=$LOOP -v x="$CONTACTS" -v m=$RSS_KB -v c=${STORED:-0} \
  'BEGIN {printf "talus case=%s N=%d threads=%d steps=%d loop_s=%.3f particle_steps_per_s=%.3e %s peak_rss_mb=%.1f rss_kb_per_ball=%.2f stored_contacts=%d rss_b_per_stored_contact=%.0f\n",
          k, n, r, s, t, n * s / t, x, m / 1024, m / n, c, (c > 0 ? m * 1024 / c : 0)}'
