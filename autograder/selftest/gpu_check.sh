#!/usr/bin/env bash
# The autograder on a GPU machine, end to end, in one command (CI has no GPU, so this is where the
# grader's GPU path is proved; re-run it whenever the grader or a CUDA lab changes):
#   1. what the jail gives a CUDA program here (`doctor`), and the sandbox's unit tests with the GPU;
#   2. the sealed (hidden) tests of labs 05 and 06: pass on the reference, fail cleanly on the stub;
#   3. `prepare` lab 05, then labs 05 and 06 (the second builds lab 06 alone), `grade @reference`
#      (full marks, perf timed) and `grade @stub` (zero) under the full sandbox;
#   4. the hostile GPU submissions of selftest/gpu_submissions (a kernel that never finishes, one that
#      takes all GPU memory, one that faults), lab05_link_error and lab05_skip_when_timed (right
#      except on timed calls: the perf driver's own check of a timed output), each against its
#      expected.json, and after each one the GPU proved usable by the reference's sealed tests;
#   5. `batch` over several submissions, with perf;
#   6. the benches of labs 05 and 06 (their handouts' roofline figures: lab05.svg, lab06.svg);
#   7. the labs' catalogues of mistakes: every buggy implementation under solutions/0[56]_*/mistakes
#      caught by its test, with the diagnosis it must get and no SIMD words (label mistakes).
#
# Usage, from the repository root:   autograder/selftest/gpu_check.sh [deps-prefix] [step...]
# (deps-prefix: where the Debian packages gathered by gpu_deps.sh are, e.g. $PWD/.deps, or ""; steps: some of
# 1-7, default all, to split the run where a session's commands are time-limited; 5 needs 3's
# prepared cache, 4 and 5 the sealed tests' build of 2). Writes build/gpu-check/
# and, under $OUT (default build/gpu-check/out): log.txt and the figures. Exits non-zero when any
# check fails; the last lines are a table of every check.
set -uo pipefail
root=$(pwd)
deps=${1:-}
shift || true
steps=${*:-1 2 3 4 5 6 7}
want() { [[ " $steps " == *" $1 "* ]]; }
build=$root/build/gpu-check
out=${OUT:-$build/out}
mkdir -p "$out" "$build"
exec > >(tee "$out/log.txt") 2>&1
if [ -n "$deps" ]; then
  export CMAKE_PREFIX_PATH=$deps  # the grader's own configure (prepare) needs it too
  # Runtime libraries gathered by gpu_deps.sh (libarchive, cmark-gfm and what they load), where
  # missing here.
  if [ -d "$deps/runtime" ]; then "$root/autograder/selftest/gpu_deps.sh" --install "$deps" || exit 1; fi
  # GNU patch, for the self-test's submissions, where the machine has none of its own (last in PATH).
  export PATH=$PATH:$deps/bin
fi
step() { echo; echo "=== $* ($(date +%T))"; }
results=()
check() {  # check NAME COMMAND...: runs it, records PASS or FAIL
  local name=$1
  shift
  if "$@"; then results+=("PASS  $name"); else results+=("FAIL  $name"); fi
}

step machine
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
nvcc --version | tail -1
cmake -S . -B "$build" -G Ninja -DWORKBOOK_IMPL=solutions "-DWORKBOOK_LABS=05;06" -DWORKBOOK_AUTOGRADER=ON \
  -DWORKBOOK_BENCH=ON -DWORKBOOK_HARNESS_TESTS=ON -DWORKBOOK_GPU_MISTAKES=ON -DWORKBOOK_REGISTER_LAST_BUILD=OFF > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" 2>&1 | grep -E "error|FAILED" | head -40
G=$build/autograder/workbook-grade
# The self-test's submissions, whole (one that is the reference or the stub with one mistake is
# stored as a patch: selftest/materialise.cmake), under $build/selftest/.
for d in submissions gpu_submissions; do
  cmake "-DSUBMISSIONS=autograder/selftest/$d" -DTRUSTED=. "-DOUT=$build/selftest/$d" \
    -P autograder/selftest/materialise.cmake || { echo "the self-test's $d could not be made (see above)"; exit 1; }
done
cache=$build/grade-cache
work=$build/work
common=(--cache "$cache" --work "$work" --no-prepare --seed 20261123)
# The GPU must be visible to every test below: a skip would hide a failure.
export WORKBOOK_REQUIRE_GPU=1

if want 1; then
  step "1. doctor, and the sandbox's tests with this machine's GPU"
  $G doctor | tee "$out/doctor.json"
  check "doctor finds the GPU" grep -q '"present": true' "$out/doctor.json"
  check "sandbox unit tests" "$build/autograder/tests/workbook_grade_tests" --gtest_filter='Sandbox.*:GpuAccess.*:FirstErrors.*'
fi

if want 2; then
  step "2. sealed tests: the reference passes, the stub fails cleanly; the harness's GPU tests and perf tests"
  check "sealed tests of labs 05 and 06" ctest --test-dir "$build" -L hidden --output-on-failure
  check "harness tests" ctest --test-dir "$build" -L harness --output-on-failure
  # Each perf case's timed output, checked by the driver against the reference's.
  check "perf tests of labs 05 and 06" ctest --test-dir "$build" -R 'lab0[56]\.perf\.' --output-on-failure -V
  ctest --test-dir "$build" -R 'lab0[56]\.perf\.' -V 2>/dev/null | grep -E "Output:" | head -8
fi

if want 3; then
  step "3. grade @reference and @stub, full sandbox, perf timed"
  # As a course adds labs: lab 05, then 05 and 06; the cache is per lab, so the second builds 06 alone.
  check "prepare lab 05" $G prepare --labs 05 --cache "$cache" --jobs "$(nproc)"
  $G prepare --labs 05,06 --cache "$cache" --jobs "$(nproc)" 2>&1 | tee "$build/prepare-06.log"
  check "prepare labs 05 and 06" test "${PIPESTATUS[0]}" -eq 0
  check "lab 05 kept, lab 06 built alone" grep -q -e "lab05: kept as" "$build/prepare-06.log"
  grep -E "kept as|configure build|prepared in" "$build/prepare-06.log"
  $G labs --cache "$cache"
  check "@reference: full marks" $G grade @reference --labs 05,06 --out "$out/reference" "${common[@]}" \
    --expect autograder/selftest/reference.json
  grep -E "^\| 0[56] " "$out/reference/report.md"
  check "@stub: zero" $G grade @stub --labs 05,06 --out "$build/stub" "${common[@]}" --expect autograder/selftest/stub.json
fi

if want 4; then
  step "4. hostile GPU submissions, the GPU usable after each"
  for s in ${GPU_CHECK_SUBMISSIONS:-gpu_submissions/spin gpu_submissions/oom gpu_submissions/fault submissions/lab05_link_error submissions/lab05_skip_when_timed}; do
    dir=$build/selftest/$s
    s=$(basename "$s")
    start=$(date +%s)
    # expected.gpu.json: a submission that needs a GPU for what it checks, left out of CI.
    expected=$dir/expected.json
    [ -f "$dir/expected.gpu.json" ] && expected=$dir/expected.gpu.json
    check "$s graded as expected" $G grade "$dir" --out "$build/$s" "${common[@]}" --test-timeout 10 --labs 05 \
      $(python3 -c "import json,sys; print(' '.join(json.load(open(sys.argv[1])).get('arguments', [])))" "$expected") \
      --expect "$expected"
    echo "  $s: graded in $(( $(date +%s) - start )) s"
    grep -E "^\| 05 " "$build/$s/report.md"
    grep -m3 -E "did not finish|out of memory|illegal memory access|undefined reference" "$build/$s/report.md"
    python3 -c "import json,sys; [print(' ', i['test'], i['status'], i['output'][:300].replace(chr(10), ' ')) for l in json.load(open(sys.argv[1]))['labs'] for i in l['items'] if i['status'] == 'failed' and i['function'] not in ('square', '')]" "$build/$s/record.json"
    nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv,noheader
    check "GPU usable after $s" ctest --test-dir "$build" -R "lab05.hidden.Square.MatchesOracle" --output-on-failure
  done
fi

if want 5; then
  step "5. batch over several submissions, with perf"
  class=$build/class
  rm -rf "$class" "$build/batch"
  mkdir -p "$class/reference/labs/05_cuda_square" "$class/reference/labs/06_cuda_normalize" "$class/stub/labs"
  cp solutions/05_cuda_square/square.cu solutions/05_cuda_square/square_kernels.cuh "$class/reference/labs/05_cuda_square/"
  cp solutions/06_cuda_normalize/normalize.cu solutions/06_cuda_normalize/*.cuh "$class/reference/labs/06_cuda_normalize/"
  cp -r labs/05_cuda_square labs/06_cuda_normalize "$class/stub/labs/"
  cp -r "$build/selftest/gpu_submissions/fault" "$class/fault"
  check "batch" $G batch "$class" --out "$build/batch" --labs 05,06 --jobs 1 --cache "$cache" --work "$work" --no-prepare
  cat "$build/batch/gradebook.csv" | cut -d, -f1-4
  check "batch: reference 200, stub 0" python3 - "$build/batch/gradebook.csv" <<'EOF'
import csv, sys
rows = {r["id"]: r for r in csv.DictReader(open(sys.argv[1]))}
ok = float(rows["reference"]["score"]) == 200 and float(rows["stub"]["score"]) == 0 and float(rows["fault"]["score"]) < 200
print("reference", rows["reference"]["score"], "stub", rows["stub"]["score"], "fault", rows["fault"]["score"])
sys.exit(0 if ok else 1)
EOF
fi

if want 6; then
  step "6. benches of labs 05 and 06: the handouts' figures"
  check "benches" ctest --test-dir "$build" -L bench -R "lab0[56]" -V
  for f in lab05.svg lab06.svg lab05.json lab06.json; do find "$build" -path "*bench*" -name "$f" -exec cp {} "$out/" \; ; done
fi

if want 7; then
  step "7. the catalogues of mistakes: each buggy implementation gets its diagnosis"
  check "mistakes of labs 05 and 06" ctest --test-dir "$build" -L mistakes --output-on-failure
  ctest --test-dir "$build" -L mistakes -V 2>/dev/null | grep -E "caught by|Diagnosis:" | head -60
fi

step summary
printf '%s\n' "${results[@]}"
failed=$(printf '%s\n' "${results[@]}" | grep -c '^FAIL')
echo "$(( ${#results[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]
