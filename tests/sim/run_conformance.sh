#!/usr/bin/env bash
# The emulator's conformance test (ctest: sim_conformance). Runs every sim test
# with recording on, Google's own client libraries included
# (google_clients_test.cc), then checks each recorded request and response against the
# real API protos (tests/sim/conformance.js). Also checks that the checker
# catches a wrong field, and that src/sim/api_schema_data.cc is what
# src/sim/tools/gen_api_schema.js makes from the installed protos.
#   run_conformance.sh SIM_TESTS_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin=$1 src=$2 work=$3
if ! command -v node >/dev/null; then
  echo "sim_conformance: node is not installed (scripts/setup.sh installs it)" >&2; exit 1
fi
if [ ! -d "$src/.deps/npm/node_modules/@google-cloud/container" ] ||
   [ ! -d "$src/.deps/npm/node_modules/@google-cloud/compute" ]; then
  echo "sim_conformance: the API protos are missing; run scripts/setup.sh" >&2; exit 1
fi
mkdir -p "$work"
record="$work/exchanges.jsonl"
rm -f "$record"
TPU_SIM_GOOGLE_CLIENTS=1 TPU_SIM_RECORD="$record" "$bin" --gtest_brief=1 >"$work/sim_tests.log" 2>&1 ||
  { cat "$work/sim_tests.log"; echo "sim_conformance: sim tests failed" >&2; exit 1; }
node "$src/tests/sim/conformance.js" "$src" "$record"

# The checker itself: a response with a field the real NodePool lacks must fail.
bad="$work/bad.jsonl"
echo '{"method":"GET","path":"/v1/projects/p/locations/l/clusters/c/nodePools/n","query":{},"status":200,"request":null,"response":{"name":"n","nodeCount":3}}' >"$bad"
if node "$src/tests/sim/conformance.js" "$src" "$bad" >"$work/bad.log" 2>&1; then
  echo "sim_conformance: the checker accepted a field the real API lacks" >&2; exit 1
fi

node "$src/src/sim/tools/gen_api_schema.js" "$src" >"$work/api_schema_data.cc"
if ! cmp -s "$work/api_schema_data.cc" "$src/src/sim/api_schema_data.cc"; then
  echo "sim_conformance: src/sim/api_schema_data.cc is stale; regenerate it with" >&2
  echo "  node src/sim/tools/gen_api_schema.js > src/sim/api_schema_data.cc" >&2
  exit 1
fi
echo "sim_conformance: ok"
