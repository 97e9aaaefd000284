#!/usr/bin/env bash
# One actor task of scripts/slurm/seedrl.sbatch: finds its learner rank from Slurm's task id and
# the job's learner hosts, and steps environments for it until training is over. The arguments
# are distributed_actor's secret and TLS options.
#
# Actor k (SLURM_PROCID within the actors' step) feeds learner rank r = k mod SEEDRL_LEARNERS,
# on learner host r / SEEDRL_LEARNERS_PER_NODE (the ranks are placed in blocks) at port
# SEEDRL_PORT + r. The learner may not listen yet, or may be gone for a moment (a requeue):
# distributed_actor keeps connecting with back-off until it is told that training is over.
set -euo pipefail

: "${SLURM_PROCID:?run me with srun}" "${SEEDRL_LEARNER_HOSTS:?}" "${SEEDRL_LEARNERS:?}"
: "${SEEDRL_BIN:?}" "${SEEDRL_PORT:?}"
read -r -a hosts <<<"$SEEDRL_LEARNER_HOSTS"
rank=$((SLURM_PROCID % SEEDRL_LEARNERS))
host=${hosts[$((rank / ${SEEDRL_LEARNERS_PER_NODE:-1}))]}
address="$host:$((SEEDRL_PORT + rank))"
echo "actor.sh: task $SLURM_PROCID on $(hostname -s) feeds learner rank $rank at $address"
# A seed of its own per task, start and restart (a requeued job's actors do not replay the same
# episodes). An actor that crashes is started again (at most 5 times, 3 s apart); one that
# ends (0: training is over) or is refused for good (2: a wrong token, spec or version) is not.
child=""
trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; wait; exit 0' TERM INT
for attempt in 0 1 2 3 4 5; do
  seed=$((1 + SLURM_PROCID + 1000 * ${SLURM_RESTART_COUNT:-0} + 100000 * attempt))
  "$SEEDRL_BIN/distributed_actor" --connect "$address" --env "${SEEDRL_ENV:-cartpole}" \
    --envs "${SEEDRL_ENVS_PER_ACTOR:-8}" --seed "$seed" "$@" &
  child=$!
  status=0
  wait "$child" || status=$?
  child=""
  case "$status" in
    0 | 2) exit "$status" ;;
  esac
  echo "actor.sh: task $SLURM_PROCID: distributed_actor ended with status $status;" \
    "starting it again in 3 s (restart $((attempt + 1)) of 5)" >&2
  sleep 3
done
echo "actor.sh: task $SLURM_PROCID: giving up after 5 restarts" >&2
exit 1
