#!/usr/bin/env bash
# Everything the CUDA labs need checked on a real GPU, in one go (a lent GPU is scarce): configure
# and build the solutions, run the correctness, harness and sanitizer tests with a GPU required,
# the perf tests, the benches (ceilings, every version, reference profiles), the harness-vs-ncu
# comparison, the student kit's profile fallback, and the PyTorch peers in the same session.
#
# Usage, from the repository root:   solutions/05_cuda_square/device_check.sh "05;06" [deps-prefix]
# Writes build/device/ and, under $OUT (default build/device/out): log.txt, results.tgz.
set -uo pipefail
labs=${1:-"05;06"}
deps=${2:-}
root=$(pwd)
out=${OUT:-$root/build/device/out}
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
build=$root/build/device
step() { echo; echo "=== $* ($(date +%T))"; }

step machine
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,ecc.mode.current --format=csv
for t in nvcc cmake g++ ncu compute-sanitizer python3; do printf '%-18s %s\n' "$t" "$(command -v $t)"; done
nvcc --version | tail -1; cmake --version | head -1; g++ --version | head -1; ncu --version | tail -1

mkdir -p "$build/results"
step configure and build
cmake -S . -B "$build" -G Ninja ${deps:+-DCMAKE_PREFIX_PATH=$deps} -DWORKBOOK_IMPL=solutions "-DWORKBOOK_LABS=$labs" \
  -DWORKBOOK_HARNESS_TESTS=ON -DWORKBOOK_BENCH=ON -DWORKBOOK_WERROR=ON -DWORKBOOK_REGISTER_LAST_BUILD=OFF | grep -E "CUDA|Error|error|left out"
time cmake --build "$build" -j "$(nproc)" 2>&1 | grep -E "error|warning|FAILED" | head -40

# GPU tests one at a time: the timing tests measure kernels of known length, and a neighbour on
# the same GPU would stretch them.
export WORKBOOK_REQUIRE_GPU=1
step correctness, harness, sanitizer
ctest --test-dir "$build" -LE "perf|bench|sanitizer" --output-on-failure --output-log "$build/results/ctest-correctness.log" 2>&1 \
  | grep -E "tests passed|Failed|\(Failed\)|Not Run|Total Test"
grep -B2 -A30 "\*\*\*Failed" "$build/results/ctest-correctness.log" | head -80
ctest --test-dir "$build" -L sanitizer --output-on-failure --output-log "$build/results/ctest-sanitizer.log" 2>&1 | tail -12
step perf tests, reference against itself
ctest --test-dir "$build" -L perf --output-on-failure -V 2>&1 | grep -E "PASS|FAIL|Ratio|Roofline|your |reference " | head -60
step bench: ceilings, versions, profiles, ncu
ctest --test-dir "$build" -L bench -V 2>&1 | grep -vE "^[0-9]+: *$" | grep -E "^[0-9]+: " | sed 's/^[0-9]*: //' | head -400
step student kit: the profile fallback, without a reference worker
for lab in $(echo "$labs" | tr ';' ' '); do
  dir=$(ls -d labs/${lab}_*); worker=$(ls "$build"/labs/${lab}_*/lab${lab}_perf)
  for c in $("$worker" --list | head -2); do
    "$build"/common/workbook-gpu-perf --lab lab$lab --case "$c" --student "$worker" \
      --profile "$build/results/lab$lab/reference_profile.json" --edit "$dir" \
      --ceilings "$build/workbook-gpu-ceilings.json" --results "$build/results-kit" | grep -E "PASS|FAIL|Ratio"
  done
done
step PyTorch peers, same session
for lab in $(echo "$labs" | tr ';' ' '); do
  sol=$(ls -d solutions/${lab}_*); labdir=$(ls -d labs/${lab}_*)
  [ -f "$sol/capi.cu" ] || continue
  nvcc -O3 -std=c++20 -arch=sm_90 -shared -Xcompiler -fPIC -I"$labdir" -Icommon/include "$sol"/*.cu \
    common/src/cuda/check.cpp common/src/not_implemented.cpp common/src/require.cpp -o "$build/liblab$lab.so" 2>&1 | grep -v "^$" | head
  PYTHONUNBUFFERED=1 python3 solutions/05_cuda_square/torch_peers.py "$build/liblab$lab.so" ${PEERS_ARGS:-} 2>&1 | grep -v Warning
done
step files
cp "$build"/workbook-gpu-ceilings.json "$build"/results/ 2>/dev/null
tar czf "$out/results.tgz" -C "$build" results results-kit 2>/dev/null
ls -la "$out"
