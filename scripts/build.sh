#!/usr/bin/env bash
# Configures and builds into build/ (or $BUILD_DIR). Extra arguments go to cmake.
# Release (-O2, no debug info) by default: debug info doubles the compile time
# of the tests; BUILD_TYPE=RelWithDebInfo for gdb.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "$@" >/dev/null
# TARGET=tpu-provisioner builds the binary alone (the quickstart).
cmake --build "$BUILD_DIR" -j"${JOBS:-$(nproc)}" ${TARGET:+--target "$TARGET"}
