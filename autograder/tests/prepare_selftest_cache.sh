#!/bin/sh
# The self-test's grading cache, prepared as a course adds labs over a term: lab 99 first, then
# every lab. The cache is per lab: the second prepare builds every lab but 99, which it keeps where
# the first one built it. Its log is added to LOG for autograder.e2e to read (a prepare run again
# finds the cache up to date: the log of the one that built it stays).
# usage: prepare_selftest_cache.sh GRADER LOG PREPARE-OPTIONS...
set -u
grader=$1 log=$2
mkdir -p "$(dirname "$log")"
shift 2
"$grader" prepare "$@" --labs 99 || exit 1
"$grader" prepare "$@" > "$log.new" 2>&1
status=$?
tee -a "$log" < "$log.new"
rm -f "$log.new"
exit $status
