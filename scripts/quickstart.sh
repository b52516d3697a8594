#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs a real evolution on
# the CPU with the builtin agents (configs/quickstart.toml): no network, no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== 1/3 dependencies"
bash scripts/install-deps.sh
echo "== 2/3 build"
bash scripts/build.sh
echo "== 3/3 eat run configs/quickstart.toml"
exec ./build/eat run configs/quickstart.toml
