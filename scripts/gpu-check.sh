#!/usr/bin/env bash
# Checks eat on a machine with an NVIDIA GPU, in under 8 minutes:
#   1. configure and build with CUDA (build-gpu-check/ unless EAT_BUILD_DIR)
#      what the later steps run (scripts/gpu-targets.sh),
#   2. run the GPU tests (ctest -L gpu; a skipped test is a failure here):
#      the sgemm_cuda device tests and the definition task gemm_n4096_k4096
#      (its naive baseline on all 6 workloads, a wrong kernel, a write past
#      C, a tiled and a tensor-core instance, and the cuBLAS expert; about a
#      minute, most of it the CPU reference), and the baselines and two
#      instances per family of the MLA, GQA, rmsnorm and softmax tasks,
#   3. `eat devices --check`, and `eat tasks check sgemm_cuda` (its
#      baseline run on the GPU, two instances compiled for it),
#   4. a short evolution: `eat run configs/gpu-check.toml` (sgemm_cuda),
#      stopped early enough (its max_wall_s) to end within the 8 minutes,
# then prints the figures to record in docs/performance.md: GPU model,
# clocks, per-workload baseline and candidate times, best speedup, CV,
# gemm_n4096_k4096's cuBLAS expert against its naive baseline, and how the
# runner of an eat that is not root isolated kernels on the GPU (its user
# namespace: tests/devices/gpu_hw_test.cpp), and what switching processes
# costs on the host CPU (bench/process_switch_bench.cpp).
# The 8 minutes count from the end of step 1 (building takes what the
# machine's cores make it; a bundle unpacks in seconds). Each step's
# start is printed with the seconds since then.
# Any failure stops the script with a non-zero exit status; with
# EAT_KEEP_GOING=1 the later steps still run and the status is non-zero at
# the end (for a machine lent for a few minutes only).
#
# On a GPU machine that cannot install eat's Debian packages, build on a
# Debian 12 machine with scripts/gpu-bundle.sh and run
#   EAT_BUNDLE=build-gpu-check.tar.xz scripts/gpu-check.sh
# in a checkout of the same commit: step 1 then unpacks the bundle instead
# of building, links the source path the programs were built from to this
# checkout when that path does not exist, and puts the bundled libraries
# this machine lacks on LD_LIBRARY_PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${EAT_BUILD_DIR:-build-gpu-check}"
start=$(date +%s)
limit_s=480
failures=0
fail() {
  echo "gpu-check: FAILED: $*" >&2
  failures=$((failures + 1))
  [ "${EAT_KEEP_GOING:-0}" = 1 ] || exit 1
}
fatal() { echo "gpu-check: FAILED: $*" >&2; exit 1; }
step() { echo; echo "== gpu-check: $* ($(( $(date +%s) - start )) s)"; }

# Unpacks $EAT_BUNDLE (scripts/gpu-bundle.sh) and makes its programs run.
unpack_bundle() {
  [ -f "$EAT_BUNDLE" ] || fatal "no bundle $EAT_BUNDLE"
  build_dir=$(tar -tJf "$EAT_BUNDLE" | awk -F/ 'NR == 1 { print $1 }')
  tar -xJf "$EAT_BUNDLE" || fatal "cannot unpack $EAT_BUNDLE"
  local src
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build_dir/CMakeCache.txt")
  if [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src" \
      || fatal "cannot link $src (the bundle's source path) to $PWD"
  fi
  [ "$src" -ef "$PWD" ] || fatal "$src exists and is not this checkout"
  local used="$build_dir/bundle-lib-used" known
  known=$(ldconfig -p)
  mkdir -p "$used"
  for lib in "$build_dir"/bundle-lib/*; do
    if ! grep -q "^[[:space:]]*$(basename "$lib") " <<<"$known"; then
      ln -sf "$PWD/$lib" "$used/"
    fi
  done
  export LD_LIBRARY_PATH="$PWD/$used${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "bundle: $(ls "$used" | wc -l) of $(ls "$build_dir/bundle-lib" | wc -l) libraries taken from it; LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  if ldd "$build_dir/eat" "$build_dir/eat-cuda-runner" | grep "not found"; then
    fatal "the bundled programs miss libraries on this machine"
  fi
}

# The runners compile candidates with the nvcc on PATH.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
# The CUDA libraries that the runners and candidates load (nvcc gives them
# no RUNPATH; the cuBLAS expert links libcublas), from the toolkit of that
# nvcc where the loader does not know them (a toolkit installed without an
# ld.so.conf.d entry).
if command -v nvcc >/dev/null; then
  cuda_root=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
  known_libs=$(ldconfig -p)
  for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13; do
    grep -q "$lib " <<<"$known_libs" && continue
    for d in "$cuda_root/lib64" "$cuda_root/targets/x86_64-linux/lib"; do
      if [ -e "$d/$lib" ] && [[ ":${LD_LIBRARY_PATH:-}:" != *":$d:"* ]]; then
        export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
      fi
    done
  done
fi

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv || true

if [ -n "${EAT_BUNDLE:-}" ]; then
step "1/4 unpack the prebuilt bundle $EAT_BUNDLE"
unpack_bundle
else
step "1/4 configure and build with CUDA"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DEAT_ENABLE_CUDA=ON \
  >"${build_dir}.configure.log" 2>&1 || { cat "${build_dir}.configure.log"; fatal "configure"; }
grep -q "eat: CUDA backend ON" "${build_dir}.configure.log" \
  || fatal "CMake did not find nvcc (see ${build_dir}.configure.log)"
source scripts/gpu-targets.sh
cmake --build "$build_dir" -j "$(nproc)" \
  --target "${gpu_programs[@]}" "${gpu_tests[@]}" "${gpu_benches[@]}" \
  || fatal "build"
fi
echo "gpu-check: step 1 took $(( $(date +%s) - start )) s; the 8 minutes start now"
start=$(date +%s)

step "2/4 GPU tests (ctest -L gpu)"
ctest_log="${build_dir}/gpu-tests.log"
ctest --test-dir "$build_dir" -L gpu --timeout 300 --output-on-failure -V 2>&1 | tee "$ctest_log" \
  || fail "GPU tests"
if grep -q "(Skipped)\|\*\*\*Skipped" "$ctest_log"; then
  fail "GPU tests were skipped: no CUDA GPU visible to the CUDA runtime"
fi
# (Not the GPU devices run on the CPU, devices/gpu/on_cpu/: CI runs them.)
ctest --test-dir "$build_dir" -R "devices/gpu/" -E "devices/gpu/on_cpu/" \
  -LE gpu -j 4 --timeout 300 --output-on-failure || fail "GPU device tests without label gpu"

step "3/4 eat devices --check, eat tasks check sgemm_cuda"
"$build_dir/eat" devices --check || fail "eat devices --check"
check_log="${build_dir}/gpu-tasks-check.log"
"$build_dir/eat" tasks check sgemm_cuda --sample 1 2>&1 | tee "$check_log" \
  || fail "eat tasks check sgemm_cuda"
grep -q "^cuda tasks run on " "$check_log" \
  || fail "eat tasks check did not run sgemm_cuda on the GPU"
"$build_dir/eat" tasks show gemm_n4096_k4096 >/dev/null \
  || fail "eat tasks show gemm_n4096_k4096"

step "4/4 short evolution: eat run configs/gpu-check.toml"
# Its max_wall_s (240) lowered to what is left of the 8 minutes, less 40 s
# for the steps after it, and 60 s at least; the copy names its folders by
# absolute path, since relative paths are relative to the file's folder.
wall_s=$(( limit_s - ($(date +%s) - start) - 40 ))
[ "$wall_s" -le 240 ] || wall_s=240
[ "$wall_s" -ge 60 ] || wall_s=60
run_config="${build_dir}/gpu-check.toml"
sed -e "s|^max_wall_s = [0-9]*|max_wall_s = $wall_s|" \
    -e "s|^root = \"\.\./runs\"|root = \"$PWD/runs\"|" \
    -e "s|^tasks_dir = \"\.\./kernels\"|tasks_dir = \"$PWD/kernels\"|" \
    configs/gpu-check.toml >"$run_config"
grep -q "^max_wall_s = $wall_s" "$run_config" && grep -q "^root = \"/" "$run_config" \
  && grep -q "^tasks_dir = \"/" "$run_config" \
  || fatal "cannot adapt configs/gpu-check.toml (its keys moved?)"
echo "evolution stopped after ${wall_s} s at most (max_wall_s)"
run_log="${build_dir}/gpu-check-run.log"
"$build_dir/eat" run "$run_config" 2>&1 | tee "$run_log" \
  || fail "eat run configs/gpu-check.toml"
run_dir=$(ls -td runs/gpu-check* 2>/dev/null | head -1 || true)
[ -n "$run_dir" ] || fail "no run directory under runs/"
"$build_dir/eat" status "$run_dir" | tee "${build_dir}/gpu-check-status.log" \
  || fail "eat status $run_dir"
grep -q "^best: none" "${build_dir}/gpu-check-status.log" \
  && fail "no candidate of the evolution passed on the GPU"

step "figures to record in docs/performance.md"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks_throttle_reasons.active --format=csv || true
grep -E "tiled .*geomean speedup" "$ctest_log" || true
grep -E "own stream:|launch from a thread:" "$ctest_log" || true
grep -E "user namespace check" "$ctest_log" || true
grep -E "gemm_n4096_k4096 (cuBLAS expert|tiled|tensor_core)" "$ctest_log" || true
grep -E "_cuda (kv_shared|warp_split|group_shared|block_row|warp_row|block_online) " "$ctest_log" || true
grep -iE "speedup|median|cv|best|SM [0-9]+ MHz" "${build_dir}/gpu-check-status.log" || true
# What kernel processes would cost on this host's CPU (docs/performance.md,
# "process_switch_bench"); a figure, not a check.
if [ -x "$build_dir/bench/process_switch_bench" ]; then
  "$build_dir/bench/process_switch_bench" --rounds 1 --calls 8 2>/dev/null || true
fi
elapsed=$(( $(date +%s) - start ))
[ "$elapsed" -le "$limit_s" ] || fail "took ${elapsed} s after step 1, more than 8 minutes"
[ "$failures" -eq 0 ] || { echo "gpu-check: $failures failures in ${elapsed} s" >&2; exit 1; }
echo "gpu-check: passed in ${elapsed} s (run: $run_dir)"
