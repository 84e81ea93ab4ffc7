#!/usr/bin/env bash
# Installs what tpu-provisioner needs to build and test on Debian bookworm (run as root).
# Idempotent: packages already present are not fetched again.
#   scripts/setup.sh               everything the tests need
#   scripts/setup.sh --binary-only what building bin/tpu-provisioner needs (the quickstart):
#                                  no test frameworks, no clang, no npm, no kubectl
set -euo pipefail
cd "$(dirname "$0")/.."
binary_only=0
[ "${1:-}" = "--binary-only" ] && binary_only=1

PACKAGES=(
  build-essential cmake pkg-config git ca-certificates
  libyaml-dev libyaml-cpp-dev libgit2-dev libcurl4-openssl-dev libssl-dev
  nlohmann-json3-dev libsimdjson-dev libspdlog-dev libcli11-dev libcpp-httplib-dev
)
if ((!binary_only)); then
  PACKAGES+=(
    libgtest-dev libgmock-dev libbenchmark-dev libvterm-dev
    clang libclang-rt-14-dev zsh
    nodejs npm
    # The node bootstrap script's tests: it fetches metadata with curl, and must pass shellcheck.
    curl shellcheck
  )
fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come from elsewhere (nodesource, nvm); Debian's is only a fallback.
if command -v npm >/dev/null 2>&1; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
read -r -a missing <<<"${missing[*]}"
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# valijson is header-only, but Debian's package depends on Qt and Poco: unpack
# only its headers into .deps/ instead of installing it.
if [ ! -f .deps/valijson/usr/include/valijson/validator.hpp ] && [ ! -f /usr/include/valijson/validator.hpp ]; then
  echo "setup: unpacking valijson headers into .deps/valijson"
  mkdir -p .deps/download
  (cd .deps/download && apt-get download libvalijson-dev >/dev/null 2>&1 ||
     { apt-get update -qq && apt-get download libvalijson-dev >/dev/null; })
  dpkg-deb -x .deps/download/libvalijson-dev_*.deb .deps/valijson
fi

((binary_only)) && exit 0

# The real API definitions (GKE cluster_service.proto, Compute compute.proto)
# for the emulator's conformance test, with protobufjs (via google-gax) to read them.
# Pinned: src/sim/api_schema_data.cc is generated from exactly these protos.
if [ ! -f .deps/npm/node_modules/@google-cloud/container/build/protos/google/container/v1/cluster_service.proto ] ||
   [ ! -f .deps/npm/node_modules/@google-cloud/compute/build/protos/google/cloud/compute/v1/compute.proto ] ||
   [ ! -d .deps/npm/node_modules/protobufjs ]; then
  echo "setup: installing @google-cloud/container and @google-cloud/compute into .deps/npm"
  mkdir -p .deps/npm
  npm install --prefix .deps/npm --no-audit --no-fund --loglevel=error \
    @google-cloud/container@6.10.0 @google-cloud/compute@6.15.0 >/dev/null
fi

# kubectl renders deploy/ in the tests (they skip without it); Debian's is kubernetes-client.
if ! command -v kubectl >/dev/null 2>&1; then
  echo "setup: installing kubernetes-client (kubectl)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends kubernetes-client >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends kubernetes-client >/dev/null; }
fi
