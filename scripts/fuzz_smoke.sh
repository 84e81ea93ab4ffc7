#!/usr/bin/env bash
# The short fuzz run of the test command: the manifest loader under libFuzzer
# with ASan + UBSan, for $FUZZ_SECONDS (default 30). Builds only the fuzzer and
# the libraries it links, with clang, into build-fuzz/ (or $FUZZ_BUILD_DIR).
# tests/RELIABILITY.md has the longer run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DTPU_FUZZ=ON -DTPU_SANITIZE=ON -DTPU_BUILD_BENCH=OFF -DTPU_FUZZ_SECONDS="${FUZZ_SECONDS:-30}" >/dev/null
cmake --build "$BUILD_DIR" -j"${JOBS:-$(nproc)}" --target manifest_fuzzer
cd "$BUILD_DIR"
ctest --output-on-failure -L fuzz
