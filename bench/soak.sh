#!/bin/sh
# The long soak (issue 24): `watch` through 10,000 reconciles and 500 commits
# against the cloud emulator, RSS, threads and open fds sampled after every
# commit. It is the reliability suite's SoakTest with larger numbers; about
# 85 minutes on a 2-core machine (the loop runs about 2 reconciles a second:
# each pass refreshes and plans three clusters, then sleeps at least 200 ms).
#
#   bench/soak.sh [RECONCILES [COMMITS]]
#
# BUILD_DIR (default build/) and JOBS as in scripts/build.sh; the samples go
# to $OUT (default $BUILD_DIR/soak-samples.tsv), the summary line to stdout.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
[ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"${JOBS:-2}" --target tpu-provisioner reliability_tests
TPU_SOAK_RECONCILES=${1:-10000} TPU_SOAK_COMMITS=${2:-500} TPU_SOAK_REPORT=${OUT:-$build/soak-samples.tsv} \
  exec "$build/tests/reliability/reliability_tests" --gtest_filter='SoakTest.*'
