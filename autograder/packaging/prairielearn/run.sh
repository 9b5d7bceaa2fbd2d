#!/usr/bin/env bash
# PrairieLearn's entrypoint: the student's files are in /grade/student; the results go to
# /grade/results/results.json in PrairieLearn's format (score in [0, 1], tests with points).
set -uo pipefail
mkdir -p /grade/results
/opt/perf-workbook/build/grader/autograder/workbook-grade grade /grade/student \
  --cache /opt/grade-cache --work /tmp/workbook-work --out /grade/results/workbook \
  --prairielearn /grade/results/results.json
if [ ! -s /grade/results/results.json ]; then
  echo '{"gradable": false, "message": "The autograder failed: not your fault; tell your instructor."}' > /grade/results/results.json
fi
