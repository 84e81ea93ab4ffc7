#!/usr/bin/env bash
# The quickstart: installs what is missing, builds, and runs tpu-provisioner on
# example-project/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
bin=${BUILD_DIR:-build}/bin/tpu-provisioner
set -x
"$bin" catalog
"$bin" validate --repo example-project
