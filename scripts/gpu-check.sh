#!/usr/bin/env bash
# Checks eat on a machine with an NVIDIA GPU, in under 8 minutes:
#   1. configure and build with CUDA (build-gpu-check/ unless EAT_BUILD_DIR),
#   2. run the GPU tests (ctest -L gpu; a skipped test is a failure here):
#      the sgemm_cuda device tests and the definition task gemm_n4096_k4096
#      (its naive baseline on all 6 workloads, a wrong kernel, a write past
#      C, a tiled and a tensor-core instance, and the cuBLAS expert; about a
#      minute, most of it the CPU reference),
#   3. `eat devices --check`,
#   4. a short evolution: `eat run configs/gpu-check.toml` (sgemm_cuda),
# then prints the figures to record in docs/performance.md: GPU model,
# clocks, per-workload baseline and candidate times, best speedup, CV, and
# gemm_n4096_k4096's cuBLAS expert against its naive baseline.
# Any failure stops the script with a non-zero exit status.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${EAT_BUILD_DIR:-build-gpu-check}"
start=$(date +%s)
fail() { echo "gpu-check: FAILED: $*" >&2; exit 1; }
step() { echo; echo "== gpu-check: $* ($(( $(date +%s) - start )) s)"; }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv || true

step "1/4 configure and build with CUDA"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DEAT_ENABLE_CUDA=ON \
  >"${build_dir}.configure.log" 2>&1 || { cat "${build_dir}.configure.log"; fail "configure"; }
grep -q "eat: CUDA backend ON" "${build_dir}.configure.log" \
  || fail "CMake did not find nvcc (see ${build_dir}.configure.log)"
cmake --build "$build_dir" -j "$(nproc)" || fail "build"

step "2/4 GPU tests (ctest -L gpu)"
ctest_log="${build_dir}/gpu-tests.log"
ctest --test-dir "$build_dir" -L gpu --output-on-failure -V 2>&1 | tee "$ctest_log" \
  || fail "GPU tests"
if grep -q "(Skipped)\|\*\*\*Skipped" "$ctest_log"; then
  fail "GPU tests were skipped: no CUDA GPU visible to the CUDA runtime"
fi
ctest --test-dir "$build_dir" -R "devices/gpu/" -LE gpu --output-on-failure \
  || fail "GPU device tests without label gpu"

step "3/4 eat devices --check"
"$build_dir/eat" devices --check || fail "eat devices --check"
"$build_dir/eat" tasks show gemm_n4096_k4096 >/dev/null \
  || fail "eat tasks show gemm_n4096_k4096"

step "4/4 short evolution: eat run configs/gpu-check.toml"
run_log="${build_dir}/gpu-check-run.log"
"$build_dir/eat" run configs/gpu-check.toml 2>&1 | tee "$run_log" \
  || fail "eat run configs/gpu-check.toml"
run_dir=$(ls -td runs/gpu-check* 2>/dev/null | head -1)
[ -n "$run_dir" ] || fail "no run directory under runs/"
"$build_dir/eat" status "$run_dir" | tee "${build_dir}/gpu-check-status.log" \
  || fail "eat status $run_dir"

step "figures to record in docs/performance.md"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks_throttle_reasons.active --format=csv || true
grep -E "tiled .*geomean speedup" "$ctest_log" || true
grep -E "gemm_n4096_k4096 (cuBLAS expert|tiled|tensor_core)" "$ctest_log" || true
grep -iE "speedup|median|cv|best|SM [0-9]+ MHz" "${build_dir}/gpu-check-status.log" || true
elapsed=$(( $(date +%s) - start ))
echo "gpu-check: passed in ${elapsed} s (run: $run_dir)"
[ "$elapsed" -le 480 ] || fail "took ${elapsed} s, more than 8 minutes"
