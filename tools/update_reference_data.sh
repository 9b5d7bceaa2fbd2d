#!/usr/bin/env bash
# Measures the reference of each lab named (01 ... 06; all by default) and writes what a student kit
# is judged by: labs/NN_*/tests/reference_profile.json (the fraction of its roofline the reference
# reached in each perf case, with the hashes of the sources it was measured from) and the table of
# it in the lab's handout (labs/NN_*/README.md), stamped with the machine and the date. The test
# labNN.reference_data fails when they no longer match the reference: this script is its fix.
#
# Run it on a quiet machine (nothing else running: the figures are timings), a GPU machine for labs
# 05 and 06, then commit what it wrote. It builds in build/bench (WORKBOOK_BENCH_BUILD=... for
# another folder) only what the profiles need.
#   tools/update_reference_data.sh            # every lab this machine can run
#   tools/update_reference_data.sh 02 04      # labs 02 and 04
set -euo pipefail
cd "$(dirname "$0")/.."
build=${WORKBOOK_BENCH_BUILD:-build/bench}

labs=("$@")
if [ ${#labs[@]} -eq 0 ]; then
  for d in labs/[0-9][0-9]_*/; do labs+=("$(basename "$d" | cut -c1-2)"); done
fi
for n in "${labs[@]}"; do
  if ! [[ $n =~ ^[0-9][0-9]$ ]] || ! compgen -G "labs/${n}_*/" >/dev/null; then
    echo "update_reference_data: '$n' is not a lab number (01, 02, ...: the folders under labs/)" >&2
    exit 2
  fi
done

# Built here target by target: ctest is kept from building the whole bench tree (its benches against
# the libraries) before it lists or runs a test, and a plain `ctest` keeps its own last build.
cmake --preset bench -B "$build" -DWORKBOOK_CTEST_BUILDS=OFF -DWORKBOOK_REGISTER_LAST_BUILD=OFF >/dev/null
targets=$(cmake --build "$build" --target help)
# The roofs measured now, with the profiles, not reused from an earlier (perhaps busier) moment:
# a profile is a fraction of them.
rm -f "$build/workbook-ceilings.json" "$build/workbook-gpu-ceilings.json"
run_tests() { ctest --test-dir "$build" --fixture-exclude-setup workbook_build "$@"; }
failed=()
for n in "${labs[@]}"; do
  folder=$(basename labs/${n}_*)
  listed=$(run_tests -N -R "^lab$n\.profile\.")
  if ! grep -q "Test *#" <<<"$listed"; then
    # A CUDA lab is left out of a build without the CUDA compiler (its configure said why).
    echo "lab $n ($folder): no profile to measure in this build (a CUDA lab needs the CUDA compiler and a GPU): not updated" >&2
    failed+=("$n")
    continue
  fi
  want=("lab${n}_perf")
  for t in workbook-perf workbook-probe workbook-gpu-perf workbook-gpu-probe; do
    grep -q "^[^ ]*\b$t\b" <<<"$targets" && want+=("$t")
  done
  echo "lab $n ($folder): building ${want[*]}"
  cmake --build "$build" --target "${want[@]}"
  # A fresh profile: the cases measured now, none left from an earlier run.
  rm -f "$build/results/lab$n/reference_profile.json"
  echo "lab $n: timing the reference (its profile tests, one at a time)"
  if ! run_tests -R "^lab$n\.profile\." --output-on-failure; then
    failed+=("$n")
    continue
  fi
  WORKBOOK_UPDATE_REFERENCE_DATA=1 run_tests -R "^lab$n\.reference_data$" --output-on-failure ||
    failed+=("$n")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "update_reference_data: not updated: lab ${failed[*]} (see above)" >&2
  exit 1
fi
echo "update_reference_data: updated lab ${labs[*]}: commit labs/*/tests/reference_profile.json and labs/*/README.md"
