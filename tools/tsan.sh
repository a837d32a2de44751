#!/bin/bash
# Runs talus-core's tests under ThreadSanitizer, which reports any data race in the parallel stages (the team's
# regions, the contact pass adding to shared force sums through raw pointers, the held-back sums). Needs the
# nightly toolchain with rust-src (rustup toolchain install nightly; rustup component add rust-src --toolchain
# nightly); not part of CI (it rebuilds the standard library, ~5 minutes on 2 cores, and runs ~10x slower).
# usage: tools/tsan.sh [extra cargo test args]     e.g. tools/tsan.sh regrouped
# A clean run ends with "test result: ok" for every test binary and no "WARNING: ThreadSanitizer" line.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TARGET=$(rustc +nightly -vV | sed -n 's/^host: //p')
LOG=${LOG:-$ROOT/target/tsan.log}
mkdir -p "$(dirname "$LOG")"
RUSTFLAGS="-Zsanitizer=thread" CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target/tsan} \
  cargo +nightly test -Zbuild-std --target "$TARGET" -p talus-core --release --lib --tests "$@" 2>&1 | tee "$LOG"
if grep -q "WARNING: ThreadSanitizer" "$LOG"; then
  echo "ThreadSanitizer reported races: see $LOG" >&2
  exit 1
fi
