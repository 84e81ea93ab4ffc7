#!/bin/sh
# The one command for the benchmarks (issue 9): builds tpu-provisioner and
# tpu-bench, generates the fleet, runs scenarios 1-5 and writes bench/RESULTS.md.
#
#   bench/run.sh small|large [extra tpu-bench run flags, e.g. --projects 10 --clusters 5 --pools 8]
#
# BUILD_DIR (default build/) and JOBS (default 2) as in scripts/build.sh;
# WORK (default $BUILD_DIR/bench-work) holds the fleet and scratch files;
# OUT (default bench/RESULTS.md) is the report.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-small}
[ $# -gt 0 ] && shift
build=${BUILD_DIR:-$root/build}
[ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j"${JOBS:-2}" --target tpu-provisioner tpu-bench
exec "$build/bin/tpu-bench" run --size "$size" \
  --binary "$build/bin/tpu-provisioner" \
  --work "${WORK:-$build/bench-work}" \
  --out "${OUT:-$root/bench/RESULTS.md}" \
  --profile-notes "$root/bench/PROFILE.md" "$@"
