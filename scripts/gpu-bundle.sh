#!/usr/bin/env bash
# Packs a CUDA build of eat for a GPU machine that cannot install Debian's
# packages (no network, another distribution):
#   scripts/gpu-bundle.sh [BUILD_DIR [BUNDLE]]
# configures BUILD_DIR (default build-gpu-check) with CUDA when it is not
# configured, builds what scripts/gpu-check.sh runs (eat, its runners, the
# GPU test programs), and writes BUNDLE (default BUILD_DIR.tar.xz) holding
# those programs, the CTest files that list their tests, and the shared
# libraries they load that are not part of the C runtime, the C++ runtime
# or CUDA. On the GPU machine, in a checkout of the same commit:
#   EAT_BUNDLE=BUNDLE scripts/gpu-check.sh
# The programs name the source folder they were built from (tests read
# kernels/ through it): gpu-check.sh links that path to the checkout when
# it does not exist there.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build-gpu-check}"
bundle="${2:-${build_dir}.tar.xz}"
fail() { echo "gpu-bundle: $*" >&2; exit 1; }

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DEAT_ENABLE_HIP=OFF \
    -DEAT_CUDA_ARCHITECTURES="${EAT_CUDA_ARCHITECTURES:-90}" \
    || fail "configure failed"
else
  # Again, keeping its cache: targets added since must exist in it.
  cmake -S . -B "$build_dir" >/dev/null || fail "configure failed"
fi
grep -q "^EAT_ENABLE_CUDA:BOOL=ON" "$build_dir/CMakeCache.txt" \
  || fail "$build_dir is not configured with EAT_ENABLE_CUDA=ON"
source scripts/gpu-targets.sh
programs=("${gpu_programs[@]}")
tests=("${gpu_tests[@]}")
cmake --build "$build_dir" -j "$(nproc)" \
  --target "${programs[@]}" "${tests[@]}" "${gpu_benches[@]}" \
  || fail "build failed"
[ -x "$build_dir/eat-cuda-runner" ] || fail "no eat-cuda-runner: nvcc not found?"

files=(CMakeCache.txt DartConfiguration.tcl "${programs[@]}")
for t in "${tests[@]}"; do files+=("tests/devices/$t"); done
for b in "${gpu_benches[@]}"; do files+=("bench/$b"); done
while IFS= read -r f; do files+=("${f#"$build_dir"/}"); done < <(
  find "$build_dir" -path "$build_dir/CMakeFiles" -prune -o \
    \( -name CTestTestfile.cmake -o -name '*_include-*.cmake' \
       -o -name '*_tests-*.cmake' \) -print)

# The libraries, less those every Linux machine with CUDA has.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$build_dir/bundle-lib"
for p in "${programs[@]}" "${tests[@]/#/tests/devices/}" \
         "${gpu_benches[@]/#/bench/}"; do
  ldd "$build_dir/$p" | awk '/=> \//{print $1, $3}'
done | sort -u | while read -r name path; do
  case "$name" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libresolv.so*|\
    libstdc++.so*|libgcc_s.so*|libcudart.so*|libcuda.so*|libnvidia-ml.so*) ;;
    *) cp -L "$path" "$stage/$build_dir/bundle-lib/$name" ;;
  esac
done
tar -C . -cf "$stage/bundle.tar" "${files[@]/#/$build_dir/}"
tar -C "$stage" -rf "$stage/bundle.tar" "$build_dir/bundle-lib"
xz -T0 -6 -c "$stage/bundle.tar" >"$bundle"
echo "gpu-bundle: wrote $bundle ($(du -h "$bundle" | cut -f1); $(ls "$stage/$build_dir/bundle-lib" | wc -l) libraries)"
