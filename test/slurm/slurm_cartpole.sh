#!/usr/bin/env bash
# CTest slurm_cartpole: scripts/slurm/seedrl.sbatch on a real Slurm, a one-node cluster made on
# this machine for the test. It installs Debian's slurm-wlm and munge where they are missing (as
# root), starts munged, slurmctld and slurmd with a generated slurm.conf (this node's name and
# CPUs, proctrack/linuxproc and task/none: no systemd or cgroups needed, ports of the test's own,
# every file in a temporary directory), submits the job script, preempts it once with
# `scancel --signal=USR1 --batch` after the learners' first progress, and checks that the requeued
# job resumed from the checkpoint and that 2 learner ranks with 2 actor tasks trained CartPole to
# a mean return of at least 475, an actor killed in the second start being started again by
# actor.sh. Then it stops the daemons it started. Exit 77 (CTest: skipped)
# with the reason where it cannot run them (not root, no packages, no MPI in the build).
#
#   slurm_cartpole.sh BUILD/examples [FRAMES]
set -uo pipefail

examples=$(readlink -f "${1:?usage: slurm_cartpole.sh BUILD/examples [FRAMES]}")
frames=${2:-2000000}
here=$(dirname "$(readlink -f "$0")")
job_script=$(readlink -f "$here/../../scripts/slurm/seedrl.sbatch")

skip() { echo "slurm_cartpole: skipped: $*"; exit 77; }
fail() { echo "slurm_cartpole: FAILED: $*" >&2; show_logs; exit 1; }

[ "$(id -u)" = 0 ] || skip "starting slurmctld, slurmd and munged for a test cluster needs root"
[ -x "$examples/distributed_learner" ] || fail "$examples/distributed_learner not found"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm_cartpole: installing slurm-wlm and munge"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null 2>&1; } ||
    skip "slurm-wlm and munge are not installed and apt-get could not install them"
fi
compgen -G "/usr/lib/*/slurm-wlm/mpi_pmix*.so" >/dev/null ||
  compgen -G "/usr/lib*/slurm/mpi_pmix*.so" >/dev/null ||
  skip "this Slurm has no PMIx plugin (mpi_pmix*.so), which the learner group's srun needs"

work=$(mktemp -d /tmp/seedrl-slurm-XXXXXX)
chmod 755 "$work"
mkdir -p "$work"/{state,spool,log,munge,run,tmp}
chmod 700 "$work/munge"
daemons=()
stop_all() {
  if [ -n "${job:-}" ] && scancel "$job" >/dev/null 2>&1; then
    for _ in $(seq 15); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 1; done
  fi
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do  # slurmd, slurmctld, then munged
    kill "${daemons[$i]}" 2>/dev/null
    wait "${daemons[$i]}" 2>/dev/null
  done
  # Whatever the job left (slurmstepd outlives slurmd by design; its steps run in $work).
  for pid in $(pgrep slurmstepd); do
    case "$(readlink "/proc/$pid/cwd")" in "$work"*) kill -9 "$pid" 2>/dev/null ;; esac
  done
  pkill -f "$work" 2>/dev/null
  rm -rf "$work"
}
trap stop_all EXIT
show_logs() {
  for f in "$work"/log/*.log "$work"/run/*.log "$work"/run/*.out "$work"/job.out; do
    [ -f "$f" ] && { echo "---- $f (last 30 lines)"; tail -n 30 "$f"; }
  done
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
host=$(hostname -s)
cpus=$(nproc)

# munged with a key, socket and files of the test's own (not the machine's munge).
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$work/munge/munge.key"
# The daemons run in the foreground as this script's children, so that it can stop and reap
# them (daemonised, their zombies would wait for an init that may not reap).
/usr/sbin/munged --foreground --key-file="$work/munge/munge.key" \
  --socket="$work/munge/munge.socket" --pid-file="$work/munge/munged.pid" \
  --log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed" --force \
  >>"$work/log/munged.out" 2>&1 &
daemons+=($!)
for _ in $(seq 50); do [ -S "$work/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$work/munge/munge.socket" ] || fail "munged did not start"

cat >"$work/slurm.conf" <<EOF
ClusterName=seedrltest
SlurmctldHost=$host
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
TmpFS=$work/tmp
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobRequeue=1
MinJobAge=600
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
EOF
export SLURM_CONF=$work/slurm.conf
/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >>"$work/log/slurmctld.out" 2>&1 &
daemons+=($!)
sleep 1
/usr/sbin/slurmd -D -f "$SLURM_CONF" >>"$work/log/slurmd.out" 2>&1 &
daemons+=($!)
for _ in $(seq 60); do
  sinfo -h -o %T 2>/dev/null | grep -q idle && break
  sleep 1
done
sinfo -h -o %T | grep -q idle || fail "the node did not become idle: $(sinfo 2>&1)"
echo "slurm_cartpole: a one-node Slurm is up on $host ($cpus CPUs)"

# The learners listen on PORT and PORT + 1 (rank 1): two free ones of the test's own.
for _ in $(seq 50); do
  port=$(free_port)
  python3 -c 'import socket, sys; s=socket.socket(); s.bind(("0.0.0.0", int(sys.argv[1]) + 1))' \
    "$port" 2>/dev/null && break
done
echo "seedrl slurm test" >"$work/token"
chmod 600 "$work/token"
job=$(cd "$work" && SEEDRL_BIN=$examples SEEDRL_RUN_DIR=$work/run SEEDRL_TOKEN_FILE=$work/token \
  SEEDRL_LEARNERS_PER_NODE=2 SEEDRL_ENVS_PER_ACTOR=8 SEEDRL_PORT=$port \
  SEEDRL_LEARNER_ARGS="--frames $frames --seed 3 --report-seconds 1 --log-connections false" \
  sbatch --parsable --nodes=1 --ntasks=4 --overcommit --output="$work/job.out" "$job_script") ||
  fail "sbatch refused the job script"
echo "slurm_cartpole: submitted job $job"

state() { scontrol show job "$job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
# Preempt it at the learners' first progress (a tenth of a second of training or more: the whole
# budget takes 13 - 30 s here).
deadline=$((SECONDS + 600))
until grep -qE "^frames [1-9][0-9]*/" "$work/run/learner.log" 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || fail "the learners made no progress (job state $(state))"
  case "$(state)" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL) fail "the job ended early: $(state)" ;; esac
  sleep 0.5
done
echo "slurm_cartpole: preempting job $job (scancel --signal=USR1 --batch)"
scancel --signal=USR1 --batch "$job" || fail "scancel --signal=USR1 failed"

# A requeued job waits for a begin time Slurm sets about two minutes ahead (Reason=BeginTime);
# the test moves it to now once the job is back in the queue, as an administrator may.
deadline=$((SECONDS + 120))
until scontrol show job "$job" | grep -q "Restarts=[1-9]" && [ "$(state)" = PENDING ]; do
  [ $SECONDS -lt $deadline ] || fail "the job did not go back to the queue (state $(state))"
  sleep 1
done
# Not at once: slurmd refuses a credential made in the same second as the requeue's revocation.
sleep 2
scontrol update JobId="$job" StartTime=now || fail "scontrol update StartTime=now failed"
# In the second start, an actor crashes (SIGKILL): actor.sh starts it again, and its learner
# rank, which waits for its data meanwhile, goes on.
deadline=$((SECONDS + 300))
until grep -A 100 "resumed from" "$work/run/learner.log" 2>/dev/null | grep -qE "^frames [0-9]+/"; do
  [ $SECONDS -lt $deadline ] || fail "the requeued job did not resume training (state $(state))"
  sleep 0.5
done
pkill -KILL -o -f "$examples/distributed_actor" || fail "no actor to kill"
echo "slurm_cartpole: killed an actor (SIGKILL)"
deadline=$((SECONDS + 900))
until [ "$(state)" = COMPLETED ]; do
  [ $SECONDS -lt $deadline ] || fail "the job did not complete (state $(state))"
  case "$(state)" in FAILED | CANCELLED | TIMEOUT | NODE_FAIL) fail "the job ended: $(state)" ;; esac
  sleep 2
done
restarts=$(scontrol show job "$job" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
result=$(grep '^{' "$work/run/learner.out" | tail -n 1)
echo "slurm_cartpole: job $job completed after $restarts restart(s); the learners' result: $result"
[ "${restarts:-0}" -ge 1 ] || fail "the job was not requeued"
grep -q "resumed from" "$work/run/learner.log" || fail "the requeued learners did not resume from the checkpoint"
python3 - "$result" "$frames" <<'EOF' || fail "the result does not show 2 ranks that resumed and reached 475"
import json, sys
r = json.loads(sys.argv[1])
frames = int(sys.argv[2])
print(f"slurm_cartpole: ranks {r['ranks']}, resumed {r['resumed']}, frames {r['frames']}, "
      f"mean return {r['mean_return']}")
sys.exit(0 if r["ranks"] == 2 and r["resumed"] and r["frames"] >= frames and
         r["mean_return"] is not None and r["mean_return"] >= 475 else 1)
EOF
actors=$(grep -c "feeds learner rank" "$work/run/actors.log")
[ "$actors" -ge 4 ] || fail "expected 2 actor tasks in each of the 2 starts, saw $actors"
grep "feeds learner rank" "$work/run/actors.log"
grep -q "distributed_actor ended with status 137; starting it again" "$work/run/actors.log" ||
  fail "actor.sh did not start the killed actor again"
echo "---- the job's output"
cat "$work/job.out"
echo "---- the learners' log: starts, progress, the checkpoint and the resume"
grep -vE "^(distributed_learner: (listening|cartpole)|run:)" "$work/run/learner.log"
echo "slurm_cartpole: passed"
