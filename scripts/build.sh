#!/usr/bin/env bash
# Configures and builds eat in build/ (Release), using every core.
#   scripts/build.sh [extra cmake -D options...]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${EAT_BUILD_DIR:-build}"
echo "build: configuring in ${build_dir}/"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >"${build_dir}.configure.log" 2>&1 \
  || { cat "${build_dir}.configure.log"; exit 1; }
grep -E "^-- eat:" "${build_dir}.configure.log" || true
echo "build: compiling with $(nproc) jobs (a CAF-heavy file takes ~7 s)"
cmake --build "$build_dir" -j "$(nproc)"
