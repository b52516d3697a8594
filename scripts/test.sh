#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with CTest.
# The test build also installs hipcc (EAT_WITH_HIP=1) so that the HIP sources
# are compiled, as the CUDA ones are wherever nvcc is on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== 1/3 dependencies"
EAT_WITH_HIP=1 bash scripts/install-deps.sh
echo "== 2/3 build"
bash scripts/build.sh
echo "== 3/3 tests"
# Tests that need a GPU carry the label "gpu"; scripts/gpu-check.sh runs them
# on a machine that has one.
ctest --test-dir "${EAT_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" \
  -LE gpu
