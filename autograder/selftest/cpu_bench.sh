#!/usr/bin/env bash
# The CPU labs' benches on this machine, each version beside its library baseline (OpenBLAS, oneDNN,
# OpenMP, xtensor), for the handouts' performance tables; and, on a GPU machine with PyTorch, lab
# 05's square against torch.square (solutions/05_cuda_square/torch_peers.py). One run, one machine:
# the figures of a table must come from the same run.
#
# Usage, from the repository root:   autograder/selftest/cpu_bench.sh [deps-prefix] [labs]
# (deps-prefix: where gpu_deps.sh --baselines gathered the Debian packages, on a machine without
# them, or ""; labs: default "01;02;03;04", add 05 on a GPU machine). Writes build/cpu-bench/ and,
# under $OUT (default build/cpu-bench/out): log.txt, one folder of JSON and SVG per lab. Exits
# non-zero when a bench fails. BENCH_ARGS, when set, is added to every bench's command line:
# BENCH_ARGS="--versus-library --rounds 41" times only the references against their libraries,
# in 41 interleaved rounds at least, for steadier ratios on a noisy host.
set -uo pipefail
root=$(pwd)
deps=${1:-}
labs=${2:-"01;02;03;04"}
build=$root/build/cpu-bench
out=${OUT:-$build/out}
mkdir -p "$out" "$build"
exec > >(tee "$out/log.txt") 2>&1
if [ -n "$deps" ]; then
  export CMAKE_PREFIX_PATH=$deps
  if [ -d "$deps/runtime" ]; then "$root/autograder/selftest/gpu_deps.sh" --install "$deps" || exit 1; fi
fi
step() { echo; echo "=== $* ($(date +%T))"; }
failed=0

step machine
grep -m1 "model name" /proc/cpuinfo; nproc; lscpu | grep -iE "^L[123]|cache" | head -5
g++ --version | head -1
cmake -S . -B "$build" -G Ninja -DWORKBOOK_IMPL=solutions "-DWORKBOOK_LABS=$labs" -DWORKBOOK_BENCH=ON \
  -DWORKBOOK_REGISTER_LAST_BUILD=OFF -DWORKBOOK_CTEST_BUILDS=OFF > "$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
grep -E "OpenBLAS|oneDNN|OpenMP|CUDA" "$build/configure.log"
targets=$(for lab in $(echo "$labs" | tr ';' ' '); do echo "lab${lab}_bench"; done)
cmake --build "$build" -j "$(nproc)" --target $targets 2>&1 | grep -E "error|FAILED" | head -40

# The libraries' settings the build gives a lab's bench test (OPENBLAS_CORETYPE=SkylakeX where it
# targets AVX-512: cmake/WorkbookDependencies.cmake), so that the baselines timed here are the ones
# `ctest -L bench` times: without them OpenBLAS 0.3.21 runs its AVX2 kernels on Zen 4 and 5.
library_settings() {
  ctest --test-dir "$build" -R "^lab$1\.bench\$" --show-only=json-v1 | python3 -c '
import json, sys
for test in json.load(sys.stdin)["tests"]:
    for prop in test.get("properties", []):
        if prop["name"] == "ENVIRONMENT":
            for setting in prop["value"]:
                if not setting.startswith("WORKBOOK_"):
                    print(setting)'
}

ceilings=$build/ceilings.json
for lab in $(echo "$labs" | tr ';' ' '); do
  step "lab $lab bench"
  bench=$(ls "$build"/labs/${lab}_*/solution/lab${lab}_bench)
  # The CPU labs share one file of measured ceilings; the GPU labs keep theirs where they are.
  where=(--ceilings "$ceilings")
  compgen -G "solutions/${lab}_*/*.cu" > /dev/null && where=()
  mapfile -t settings < <(library_settings "$lab")
  echo "library settings: ${settings[*]:-(none)}"
  # shellcheck disable=SC2086  # BENCH_ARGS is a list of words
  env "${settings[@]}" "$bench" "${where[@]}" --results "$out/lab$lab" ${BENCH_ARGS:-} ||
    { echo "lab $lab bench FAILED"; failed=1; }
done

if [[ ";$labs;" == *";05;"* ]] && python3 -c "import torch, triton" 2>/dev/null; then
  step "lab 05 against torch.square, same timer"
  nvcc -O3 -std=c++20 -arch=native -shared -Xcompiler -fPIC -Ilabs/05_cuda_square -Icommon/include \
    solutions/05_cuda_square/*.cu common/src/cuda/check.cpp common/src/not_implemented.cpp \
    common/src/require.cpp -o "$build/liblab05.so" || failed=1
  PYTHONUNBUFFERED=1 python3 solutions/05_cuda_square/torch_peers.py "$build/liblab05.so" \
    ${PEERS_ARGS:---rounds 6} 2>&1 | grep -v Warning || failed=1
fi
exit $failed
