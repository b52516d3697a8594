#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== 1/3 dependencies"
bash scripts/install-deps.sh
echo "== 2/3 build"
bash scripts/build.sh
echo "== 3/3 tests"
ctest --test-dir "${EAT_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
