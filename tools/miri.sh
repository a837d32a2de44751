#!/bin/bash
# Runs the team's tests (engine/core/src/team.rs: raw pointers to the region a job serves, items moved in and
# out of shared slots, panics carried to the stepping thread) under Miri, which reports undefined behaviour.
# Needs the nightly toolchain with miri (rustup component add --toolchain nightly miri); not part of CI
# (~5 minutes). Tree borrows, permissive provenance and ignored leaks because crossbeam-epoch, under rayon,
# breaks stacked borrows' rules, casts integers to pointers and leaves its garbage at exit; none of that is ours.
# usage: tools/miri.sh [test filter]     default: team::
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MIRIFLAGS="-Zmiri-tree-borrows -Zmiri-permissive-provenance -Zmiri-ignore-leaks" \
  CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target/miri} \
  cargo +nightly miri test -p talus-core --lib "${1:-team::}"
