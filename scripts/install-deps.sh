#!/usr/bin/env bash
# Installs the Debian 12 packages that eat needs to build, test and run.
# Idempotent: asks dpkg what is missing and runs apt-get only for that, so it
# returns at once when everything is present. Run as root (or with sudo).
#
#   scripts/install-deps.sh            build, test and run dependencies
#   EAT_WITH_HIP=1 scripts/install-deps.sh   also hipcc and the HIP runtime
#                                      (~350 MB) to compile the HIP backend
set -euo pipefail

packages=(
  g++ cmake make pkg-config git ca-certificates
  libcaf-dev libssl-dev          # actors (CAF 0.17.6; caf/openssl needs libssl)
  libzmq3-dev cppzmq-dev         # transport between processes
  libmsgpack-cxx-dev             # wire format
  liblmdb-dev lmdb-utils         # store
  libtomlplusplus-dev            # configuration files
  nlohmann-json3-dev             # reading JSON (agent output, plans, task definitions)
  libcurl4-openssl-dev           # http agents (OpenAI-compatible, Anthropic)
  libopenblas-dev                # expert CPU baseline (sgemm)
  libdnnl-dev                    # expert CPU baseline (softmax: oneDNN)
  libbenchmark-dev               # bench/harness_bench: agreement with Google Benchmark
  catch2                         # tests
  python3                        # tests: scripts/check-constraints.py
)
if [[ "${EAT_WITH_HIP:-0}" == "1" ]]; then
  packages+=(hipcc libamdhip64-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages are present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then
    sudo="sudo"
  else
    echo "install-deps: missing ${missing[*]}; run this script as root" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
  --no-install-recommends "${missing[@]}"
echo "install-deps: done"
