#!/bin/bash
# Run talus and LIGGGHTS alternately on peer-benchmark cases and print a table of the loop times with the ratio
# talus / LIGGGHTS per case (above 1: talus is slower).
# usage: tools/bench/compare.sh [CASE:N:THREADS ...]     default: settle:10k:1 settle:10k:2 dense:10k:1 dense:10k:2
#   CASE settle, dense, or pdense (dense in a cell periodic along x and y, LIGGGHTS only: tools/bench/peers/)
# env: PASSES (default 2): passes over all cases, each running LIGGGHTS then talus per case (peer, talus, peer, ...)
#      IDLE_PCT (default 10), IDLE_WAIT (default 60): before each run wait until total CPU use over 3 s is below
#        IDLE_PCT %, for at most IDLE_WAIT s (the run then starts anyway; the CPU other processes took during it is
#        recorded as other_cpu_s)
#      STEPS (default 10000), PEERS (the peers kit; default ../shared/peers relative to the repository root),
#      PEER (default liggghts; or lammps),
#      TALUS (binary to copy; default target/release/talus)
# After every multi-threaded run the line also gets handover_us, handover_ratio and together_ratio from tools/benches'
# `handover` (whether the CPUs shared a cache at that time, a VM's CPUs may be placed either way; and whether they
# computed independently: near 2 they shared one core or were time-sliced).
# The talus binary is copied once at the start (tools/bench/out/talus-snapshot) so that a rebuild of target/ during
# the session cannot mix two engine versions; its md5 and date go into the log header. Every result line is also
# appended to tools/bench/out/compare-DATE.txt.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
CASES=${*:-settle:10k:1 settle:10k:2 dense:10k:1 dense:10k:2}
PASSES=${PASSES:-2} IDLE_PCT=${IDLE_PCT:-10} IDLE_WAIT=${IDLE_WAIT:-60}
PEERS=${PEERS:-$ROOT/../shared/peers} PEER=${PEER:-liggghts}
export STEPS=${STEPS:-10000}
OUTB=$ROOT/tools/bench/out
LOG=$OUTB/compare-$(date +%Y%m%d-%H%M%S).txt
mkdir -p "$OUTB"
# run_peer.sh writes data/ and out/ beside itself, so it runs from a writable copy.
if [ ! -x "$OUTB/peers/run_peer.sh" ]; then
  [ -x "$PEERS/run_peer.sh" ] || { echo "peers kit not found at $PEERS (set PEERS=DIR)" >&2; exit 2; }
  rm -rf "$OUTB/peers"; cp -r "$PEERS" "$OUTB/peers"; chmod -R u+w "$OUTB/peers"
fi
BIN=${TALUS:-$ROOT/target/release/talus}
[ -x "$BIN" ] || cargo build --release -p talus >&2
cp "$BIN" "$OUTB/talus-snapshot"
BIN_INFO="talus=$BIN md5=$(md5sum < "$BIN" | cut -c1-12) built=$(date -r "$BIN" -Is)"
export TALUS=$OUTB/talus-snapshot
cargo build --release -q -p talus-benches --bin handover >&2
HANDOVER=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/handover
TCK=$(getconf CLK_TCK)

busy() {  # CPU time used by everything since boot, in clock ticks
  awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat
}
wait_idle() {
  local t0=$SECONDS b0 b1
  while :; do
    b0=$(busy); sleep 3; b1=$(busy)
    local pct=$(( (b1 - b0) * 100 / (3 * TCK * $(nproc)) ))
    [ $pct -lt "$IDLE_PCT" ] && { echo "idle=${pct}%"; return; }
    [ $((SECONDS - t0)) -ge "$IDLE_WAIT" ] && { echo "busy=${pct}%"; return; }
  done
}
measure() {  # CODE CASE N THREADS: one run, prints its result line with the pass, the idle state and other_cpu_s
  local code=$1 case=$2 n=$3 th=$4 state b0 b1 own line
  state=$(wait_idle)
  b0=$(busy)
  if [ "$code" = talus ]; then
    line=$(/usr/bin/time -f "%U %S" -o "$OUTB/.cpu" tools/bench/run.sh "$case" "$n" "$th")
  elif [ "$case" = pdense ]; then
    line=$(/usr/bin/time -f "%U %S" -o "$OUTB/.cpu" tools/bench/peers/run_periodic.sh "$th")
  else
    line=$(/usr/bin/time -f "%U %S" -o "$OUTB/.cpu" "$OUTB/peers/run_peer.sh" "$code" "$n" "$case" "$th")
  fi
  b1=$(busy)
  own=$(awk '{print $1 + $2}' "$OUTB/.cpu")
  line="$line pass=$pass start=$state other_cpu_s=$(awk -v b=$((b1 - b0)) -v t=$TCK -v o=$own 'BEGIN {printf "%.1f", b / t - o}')"
  # Where the CPUs sat right after a multi-threaded run: whether they share a cache (handover_ratio near 1) or
  # not (2-3), and whether both compute at full speed at once (together_ratio near 1) or not (near 2); see
  # tools/benches/src/bin/handover.rs.
  [ "$th" -gt 1 ] && line="$line $("$HANDOVER" 2>/dev/null | sed 's/alone_us=[^ ]* //')"
  echo "$line" | tee -a "$LOG" >&2
}

echo "# $(date -Is) $(uname -n) nproc=$(nproc) cases: $CASES passes=$PASSES $BIN_INFO" | tee -a "$LOG" >&2
for pass in $(seq 1 "$PASSES"); do
  for c in $CASES; do
    IFS=: read -r case n th <<< "$c"
    measure "$PEER" "$case" "$n" "$th"
    measure talus "$case" "$n" "$th"
  done
done

# One row per case: every loop time in the order taken, medians, the ratio of the medians and the range of the
# per-pass ratios, contacts per ball at the end of the last run, talus peak RSS.
grep -v '^#' "$LOG" | awk -v logf="$LOG" -v cases="$CASES" '
  function kv(s,   i, a, b) { delete v; split(s, a, " "); for (i in a) if (split(a[i], b, "=") == 2) v[b[1]] = b[2] }
  function median(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
      if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  { kv($0); th = ($1 == "talus") ? v["threads"] : v["ranks"]; n = v["N"] / 1000 "k"; key = v["case"] ":" n ":" th
    code = ($1 == "talus") ? "t" : "p"
    t[key, code] = t[key, code] (t[key, code] == "" ? "" : " ") v["loop_s"]
    cpb[key, code] = v["contacts_per_ball"]; if (code == "t") rss[key] = v["peak_rss_mb"]
    last[key, code, v["pass"]] = v["loop_s"] }
  END {
    printf "%-14s | %-22s | %-22s | %8s %8s | %7s | %-13s | %-9s | %s\n", "case:N:threads", "peer loop_s", "talus loop_s",
           "peer med", "talus md", "ratio", "pass ratios", "c/ball p t", "talus RSS MB"
    nc = split(cases, cs, " ")
    for (i = 1; i <= nc; i++) { k = cs[i]; if (t[k, "t"] == "") continue
      mp = median(t[k, "p"]); mt = median(t[k, "t"]); lo = 1e9; hi = 0
      for (p = 1; p <= 100; p++) if ((k, "p", p) in last && (k, "t", p) in last) {
        r = last[k, "t", p] / last[k, "p", p]; if (r < lo) lo = r; if (r > hi) hi = r }
      printf "%-14s | %-22s | %-22s | %8.2f %8.2f | %7.2f | %5.2f-%-7.2f | %s %s | %s\n", k, t[k, "p"], t[k, "t"], mp, mt,
             mt / mp, lo, hi, cpb[k, "p"], cpb[k, "t"], rss[k] }
    print "ratio = median talus loop_s / median peer loop_s (> 1: talus slower); log: " logf }'
