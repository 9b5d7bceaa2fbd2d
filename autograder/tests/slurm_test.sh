#!/usr/bin/env bash
# The grader on a real Slurm: starts a single-node Slurm on this machine (Debian 12's slurmctld,
# slurmd and munge, configured here on localhost, as root), then
#   1. grades six lab 01 submissions with `batch --slurm` and with a local `batch`: same scores;
#   2. cancels one task of a `batch --slurm` while it runs: that run reports the student as not
#      graded, and a re-run grades only that one and completes the gradebook;
#   3. grades labs 01 and 05: lab 05 in an array of its own on the gpu partition (a GPU the
#      scheduler counts), merged with lab 01 per student;
#   4. runs GPU tests of the build through WORKBOOK_GPU_LAUNCHER="srun ...", exactly as ctest runs
#      them: each becomes a Slurm job (they skip without a GPU, but the launch is exercised).
# Skips (exit code 77) with the reason where Slurm cannot run: not root, not installed, or it does
# not start. Usage: slurm_test.sh GRADER TRUSTED_TREE CACHE SELFTEST_SUBMISSIONS WORK_DIR BUILD_DIR
# (CACHE: a grading cache prepared with lab 01, used by both batches as it is.)
set -euo pipefail
grader=$1 trusted=$2 cache=$3 submissions=$4 work=$5 build=$6

skip() { echo "slurm test skipped: $*"; exit 77; }
fail() { echo "SLURM TEST FAILED: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"

# Without Slurm's commands, --slurm fails and says what to install (this part needs no Slurm).
status=0
message=$(env PATH=/nonexistent "$grader" batch "$submissions" --out "$work/no-slurm" --slurm --labs 01 \
            --trusted "$trusted" --cache "$cache" 2>&1) || status=$?
[ "$status" -ne 0 ] || fail "batch --slurm without Slurm exited 0: $message"
grep -q "apt-get install slurm-client" <<<"$message" || fail "batch --slurm without Slurm does not say what to install: $message"
echo "0. without Slurm: exit $status, \"$(head -c 120 <<<"$message")...\""
[ "$(id -u)" -eq 0 ] || skip "starting a local Slurm needs root (slurmd runs jobs as their users)"
for program in slurmctld slurmd munged sbatch squeue scancel srun; do
  command -v "$program" >/dev/null || skip "$program is not installed: sudo apt-get install slurm-wlm munge"
done

# --- A single-node Slurm, all of it in a folder of its own (nothing in /etc is touched) -------------
# Its sockets (munge's, slurmstepd's in the spool) are Unix sockets, whose paths may not pass 108
# bytes: under a deep build folder (a clone in a `mktemp -d`, say) they would not fit, slurmstepd
# could not start a job, and Slurm would hold every task. So the state lives in a short /tmp folder.
state=$(mktemp -d /tmp/workbook-slurm.XXXXXX)
mkdir -p "$state/ctld" "$state/spool" "$state/munge"
chmod 700 "$state/munge"
host=$(hostname -s)
cleanup() {
  scancel --full --quiet --user=root 2>/dev/null || true
  for pid_file in "$state/slurmd.pid" "$state/slurmctld.pid" "$state/munge/munged.pid"; do
    [ -f "$pid_file" ] && kill "$(cat "$pid_file")" 2>/dev/null || true
  done
  # The logs stay with the test's other files, for a failure to be read after the test.
  cp "$state"/*.log "$work/" 2>/dev/null || true
  sleep 1
  rm -rf "$state"
}
trap cleanup EXIT
dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$state/munge/munge.key"
munged --force --key-file="$state/munge/munge.key" --socket="$state/munge/munge.socket" \
  --pid-file="$state/munge/munged.pid" --log-file="$state/munge/munged.log" --seed-file="$state/munge/munged.seed" ||
  skip "munged does not start: $(tail -n 3 "$state/munge/munged.log" 2>/dev/null)"
cpus=$(nproc)
memory=$(awk '/MemTotal/ { print int($2 / 1024) - 1024 }' /proc/meminfo)
export SLURM_CONF=$state/slurm.conf
cat > "$SLURM_CONF" <<EOF
ClusterName=workbook-test
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$state/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$state/jobs.txt
MinJobAge=2
GresTypes=gpu
NodeName=$host CPUs=$cpus RealMemory=$memory Gres=gpu:1 State=UNKNOWN
PartitionName=cpu Nodes=$host Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$host MaxTime=INFINITE State=UP
EOF
# A GPU the scheduler counts, so that the CUDA labs' array (--gres=gpu:1) is scheduled as on a
# real GPU partition. Slurm wants a device file for it; this machine may have no GPU, so the file
# is a stand-in (a node like /dev/null's) that only the scheduler sees.
mknod "$state/fake-gpu0" c 1 3
echo "NodeName=$host Name=gpu File=$state/fake-gpu0" > "$state/gres.conf"
slurmctld || skip "slurmctld does not start: $(tail -n 5 "$state/slurmctld.log" 2>/dev/null)"
slurmd || skip "slurmd does not start: $(tail -n 5 "$state/slurmd.log" 2>/dev/null)"
for _ in $(seq 60); do
  sinfo --noheader --format=%T 2>/dev/null | grep -q idle && break
  sleep 0.5
done
sinfo --noheader --format=%T | grep -q idle ||
  skip "Slurm started but its node never became idle: $(tail -n 5 "$state/slurmd.log" "$state/slurmctld.log")"
echo "local Slurm up: $(sinfo --noheader --format='%P %D %C %T' | tr '\n' ' ')"

# --- 1. six submissions, on Slurm and locally: the same scores ---------------------------------------
subs=$work/submissions
mkdir -p "$subs"
for name in wrong zeros crash compile_error caching skipping_work; do
  cp -r "$submissions/$name" "$subs/$name"
  rm -f "$subs/$name/expected.json"
done
common=(--labs 01 --no-perf --seed 20261123 --test-timeout 20 --trusted "$trusted" --cache "$cache")
on_slurm=(--slurm --prepared-cache --partition cpu --cpus-per-task 1 --time 20 --poll-seconds 1)
start=$(date +%s)
"$grader" batch "$subs" --out "$work/slurm-out" "${on_slurm[@]}" "${common[@]}" || fail "batch --slurm exited with $?"
echo "batch --slurm graded 6 submissions in $(($(date +%s) - start)) s"
start=$(date +%s)
"$grader" batch "$subs" --out "$work/local-out" --jobs 2 --no-prepare "${common[@]}" || fail "the local batch exited with $?"
echo "the local batch graded 6 submissions in $(($(date +%s) - start)) s"
[ "$(grep -c . "$work/slurm-out/gradebook.csv")" -eq 7 ] || fail "the Slurm gradebook has not 6 rows: $(cat "$work/slurm-out/gradebook.csv")"
diff <(cut -d, -f1-7 "$work/slurm-out/gradebook.csv") <(cut -d, -f1-7 "$work/local-out/gradebook.csv") ||
  fail "the scores on Slurm differ from the local batch's"
for name in wrong zeros crash compile_error caching skipping_work; do
  [ -f "$work/slurm-out/submissions/$name/results.json" ] || fail "no results.json for $name"
done
[ -f "$work/slurm-out/slurm/cpu.sbatch" ] || fail "no sbatch file was written"
echo "1. same scores on Slurm as locally: ok"

# --- 2. a task cancelled while it runs; the re-run completes the gradebook ----------------------------
out=$work/kill-out
few=$work/three
mkdir -p "$few"
cp -r "$subs/wrong" "$subs/zeros" "$subs/caching" "$few/"
"$grader" batch "$few" --out "$out" "${on_slurm[@]}" "${common[@]}" > "$work/kill-1.log" 2>&1 &
batch_pid=$!
# A task is cancelled while it runs; one that ends between squeue and scancel is not (scancel then
# fails), so try the next running one.
victim=""
for _ in $(seq 300); do
  running=$(squeue --noheader --array --states=RUNNING --format=%i | head -1)
  if [ -n "$running" ] && scancel "$running" 2>/dev/null; then
    victim=$running
    break
  fi
  sleep 0.2
done
[ -n "$victim" ] || fail "no running task could be cancelled: $(cat "$work/kill-1.log")"
status=0
wait "$batch_pid" || status=$?
cat "$work/kill-1.log"
[ "$status" -ne 0 ] || fail "the run whose task was cancelled exited 0"
grep -q "NOT GRADED: .*cancelled" "$work/kill-1.log" || fail "the cancelled task was not reported as cancelled"
"$grader" batch "$few" --out "$out" "${on_slurm[@]}" "${common[@]}" > "$work/kill-2.log" 2>&1 || fail "the re-run exited with $?: $(cat "$work/kill-2.log")"
cat "$work/kill-2.log"
grep -q "submitted 1 task(s) of lab 01" "$work/kill-2.log" || fail "the re-run did not submit exactly the missing task"
diff <(cut -d, -f1-7 "$out/gradebook.csv") <(grep -E '^(id|wrong|zeros|caching),' "$work/local-out/gradebook.csv" | cut -d, -f1-7) ||
  fail "the resumed gradebook differs from the local batch's"
echo "2. cancelled task reported, re-run completed the gradebook: ok"

# --- 3. the CUDA labs' array: on the gpu partition, a GPU each; merged with the CPU labs' result ------
both=$work/both
mkdir -p "$both"
cp -r "$subs/wrong" "$submissions/lab05_skip_when_timed" "$both/"
rm -f "$both"/*/expected*.json
status=0
"$grader" batch "$both" --out "$work/gpu-out" --slurm --prepared-cache --partition cpu --gpu-partition gpu \
  --cpus-per-task 1 --time 20 --poll-seconds 1 --labs 01,05 --no-perf --seed 20261123 --test-timeout 20 \
  --trusted "$trusted" --cache "$cache" > "$work/gpu.log" 2>&1 || status=$?
cat "$work/gpu.log"
# 3: lab 05 could not be graded here (no GPU on this machine); 0 where the machine has one.
[ "$status" -eq 0 ] || [ "$status" -eq 3 ] || fail "batch --slurm with the CUDA labs exited with $status"
grep -q "^#SBATCH --gres=gpu:1" "$work/gpu-out/slurm/gpu.sbatch" || fail "the GPU array asks for no GPU"
grep -q "^#SBATCH --partition=gpu" "$work/gpu-out/slurm/gpu.sbatch" || fail "the GPU array is not on the gpu partition"
[ "$(grep -c "Partition=gpu" "$state/jobs.txt")" -ge 2 ] || fail "no task ran on the gpu partition: $(cat "$state/jobs.txt")"
head -1 "$work/gpu-out/gradebook.csv" | grep -q "lab01,.*lab05," || fail "the gradebook lacks lab 01 or 05: $(head -1 "$work/gpu-out/gradebook.csv")"
[ "$(grep -c . "$work/gpu-out/gradebook.csv")" -eq 3 ] || fail "the gradebook has not 2 students: $(cat "$work/gpu-out/gradebook.csv")"
# Lab 05 was built and run on the GPU partition: graded where there is a GPU, not_graded where not.
grep -qE '^lab05_skip_when_timed,.*,(graded|not_graded),' "$work/gpu-out/gradebook.csv" ||
  fail "lab 05 of lab05_skip_when_timed was not graded on the gpu partition: $(cat "$work/gpu-out/gradebook.csv")"
echo "3. CUDA labs graded in their own array on the gpu partition, merged per student: ok"

# --- 4. GPU tests through the launcher, as ctest runs them --------------------------------------------
gpu_tests=$(ctest --test-dir "$build" --show-only=json-v1 -R '^lab05\.' |
            python3 -c 'import json, shlex, sys
def labels(t):
    return next((p["value"] for p in t.get("properties", []) if p["name"] == "LABELS"), [])
tests = [t for t in json.load(sys.stdin)["tests"]
         if t["name"].startswith("lab05.") and any("correctness" in l for l in labels(t))]
for t in tests[:3]:
    sys.stdout.write(" ".join(shlex.quote(a) for a in t["command"]) + "\n")')
if [ -z "$gpu_tests" ]; then
  echo "4. skipped: this build has no lab 05 (no CUDA compiler), so there is no GPU test to launch"
  exit 0
fi
export WORKBOOK_GPU_LAUNCHER="srun --partition gpu --time 5"
before=$(grep -c . "$state/jobs.txt" 2>/dev/null || echo 0)
ran=0
# The commands ctest would run for lab 05's correctness tests (the first three), run as it runs them.
while IFS= read -r command; do
  eval "set -- $command"
  [ "$1" = "$build/workbook-gpu-launch" ] || fail "a GPU test does not run through workbook-gpu-launch: $command"
  status=0
  output=$("$@" 2>&1) || status=$?
  if [ "$status" -ne 0 ] && ! grep -q "no CUDA device: skipped" <<<"$output"; then
    fail "a GPU test failed through the launcher ($status): $output"
  fi
  ran=$((ran + 1))
done <<<"$gpu_tests"
[ "$ran" -gt 0 ] || fail "no lab 05 GPU test found in $build"
sleep 3  # the job records are written when the jobs are purged
after=$(grep -c . "$state/jobs.txt" 2>/dev/null || echo 0)
[ $((after - before)) -ge "$ran" ] || fail "$ran GPU tests ran but Slurm recorded $((after - before)) jobs"
echo "4. $ran GPU tests ran as Slurm jobs through WORKBOOK_GPU_LAUNCHER: ok"
