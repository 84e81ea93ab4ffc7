#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer:
# configures $BUILD_DIR (default build-asan) with -DTPU_SANITIZE=ON, builds
# everything, and runs every ctest entry (or only the labels given, e.g.
# `scripts/sanitize.sh reliability`). A full rebuild: run it before a release,
# not on every change. Any sanitizer report fails the test it happens in
# (-fno-sanitize-recover=all).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-asan}
JOBS=${JOBS:-$(nproc)}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPU_SANITIZE=ON -DTPU_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS"
cd "$BUILD_DIR"
if [ "$#" -gt 0 ]; then
  for label in "$@"; do ctest --output-on-failure -j"$JOBS" --timeout 900 -L "$label"; done
else
  ctest --output-on-failure -j"$JOBS" --timeout 900
fi
