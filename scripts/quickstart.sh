#!/usr/bin/env bash
# The quickstart: installs what is missing, builds, and runs tpu-provisioner on
# example-project/ against the embedded cloud emulator: validate, then
# plan → apply → plan (the last one reports no changes). The emulator keeps its
# state in $BUILD_DIR/quickstart-sim.json between the commands and starts empty
# each time the quickstart runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what the binary needs: no test frameworks, no npm, and only the
# tpu-provisioner target (scripts/test.sh builds and runs everything).
scripts/setup.sh --binary-only
BUILD_DIR=${BUILD_DIR:-build}
TARGET=tpu-provisioner scripts/build.sh -DTPU_BUILD_TESTS=OFF -DTPU_BUILD_BENCH=OFF -DTPU_UNITY_LIBS=ON
bin=$BUILD_DIR/bin/tpu-provisioner
state=$BUILD_DIR/quickstart-sim.json
rm -f "$state"
# Operations take 0.5 s in the emulator, so the apply shows its lanes at work.
# The two reservations the example names exist, so the first plan shows their
# free VMs before → after (docs/capacity.md): the shared v6e one, owned by
# ml-capacity-shared (68 VMs: the 64 of v6e-reserved, and one slice of
# v6e-burst, whose second slice starts on the next rung of its capacity
# ladder), and the tpu7x one of ml-serving-dev.
cat >"$BUILD_DIR/quickstart-sim-config.json" <<'JSON'
{"opLatencyMs": {"default": 500},
 "capacity": {"reservations": [
   {"name": "v6e-256-central1b", "project": "ml-capacity-shared", "zone": "us-central1-b",
    "machineType": "ct6e-standard-4t", "count": 68, "specificReservationRequired": true,
    "shared": ["ml-research-prod"]},
   {"name": "my-tpu-reservation", "project": "ml-serving-dev", "zone": "us-central1-c",
    "machineType": "tpu7x-standard-4t", "count": 4, "specificReservationRequired": true}]}}
JSON
sim=(--cloud "sim:$state" --sim-config "$BUILD_DIR/quickstart-sim-config.json")
set -x
"$bin" catalog --accelerator v5e
"$bin" validate --repo example-project
"$bin" plan --repo example-project "${sim[@]}"
"$bin" apply --repo example-project "${sim[@]}" --auto-approve --poll-initial-ms 200 --poll-max-ms 1000
"$bin" plan --repo example-project "${sim[@]}" --detailed-exitcode
