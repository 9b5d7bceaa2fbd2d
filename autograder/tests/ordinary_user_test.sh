#!/usr/bin/env bash
# The grader run by an ordinary user, as an instructor without root runs it: `prepare` (its canary
# grades @reference and @stub in the sandbox, which for an unprivileged user is built in a user
# namespace where the kernel allows one) and `grade @reference`, all as nobody, in a folder of
# nobody's, with the trusted tree cloned there (CI's checkout is under a 0700 folder of root's).
# Lab 99 only (the self-test's smallest lab, from its overlay): the harness and one tiny lab.
# Usage: ordinary_user_test.sh GRADER TRUSTED_TREE    (as root; skipped, exit 77, otherwise)
set -euo pipefail
grader=$1 trusted=$2
if [ "$(id -u)" -ne 0 ]; then
  echo "skipped: run as root, it runs the grader as nobody (this suite already runs as an ordinary user)"
  exit 77
fi
work=$(mktemp -d /tmp/workbook-ordinary-user.XXXXXX)
trap 'rm -rf "$work"' EXIT
git clone --quiet --no-hardlinks "$trusted" "$work/tree"
# The tree under test as it is, uncommitted changes included (CI's clone has none).
git -C "$trusted" diff --binary HEAD | git -C "$work/tree" apply --allow-empty
git -C "$work/tree" -c user.name=t -c user.email=t@example.org commit -qam "as tested" || true
mkdir -p "$work/bin"
cp "$grader" "$work/bin/workbook-grade"
chown -R nobody:nogroup "$work"
# From a folder of nobody's: ctest's working folder is under the 0700 checkout, where nobody cannot
# enter (git, which the grader runs, fails there).
as_nobody() {
  (cd "$work" && setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env -- \
    env HOME="$work" PATH=/usr/local/bin:/usr/bin:/bin "$work/bin/workbook-grade" "$@")
}
echo "=== as $(setpriv --reuid=nobody --regid=nogroup --clear-groups id -un): doctor"
as_nobody doctor > "$work/doctor.json"
grep -E '"(user_namespace|mount_namespace|level)"' "$work/doctor.json" || head -c 600 "$work/doctor.json"
echo "=== prepare (lab 99; its canary grades @reference and @stub in the sandbox)"
as_nobody prepare --trusted "$work/tree" --overlay "$work/tree/autograder/selftest/overlay" \
  --cache "$work/cache" --labs 99 --jobs 2
echo "=== grade @reference"
as_nobody grade @reference --trusted "$work/tree" --cache "$work/cache" --work "$work/work" \
  --out "$work/out" --labs 99 --no-perf --no-prepare
# row.csv: id,score,max_score,...
IFS=, read -r _ score max _ < <(sed -n 2p "$work/out/row.csv")
echo "@reference as nobody: $score of $max"
if [ -z "$score" ] || [ "$score" != "$max" ] || [ "$max" = "0.00" ]; then
  echo "FAILED: @reference did not get full marks as nobody"
  exit 1
fi
owner=$(stat -c %U "$work/cache")
[ "$owner" = nobody ] || { echo "FAILED: the cache belongs to $owner, not nobody"; exit 1; }
echo "ok: prepared and graded as nobody; @reference $score of $max"
