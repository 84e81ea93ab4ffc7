#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test,
# then a short fuzz run of the manifest loader (clang, ASan + UBSan).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Tests and benchmarks on explicitly: a build directory the quickstart
# configured has them off.
scripts/build.sh -DTPU_BUILD_TESTS=ON -DTPU_BUILD_BENCH=ON -DTPU_UNITY_LIBS=ON
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j"${JOBS:-$(nproc)}" --timeout 300)
scripts/fuzz_smoke.sh
