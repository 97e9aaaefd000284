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
# A seed of its own per task and start (a requeued job's actors do not replay the same episodes).
seed=$((1 + SLURM_PROCID + 1000 * ${SLURM_RESTART_COUNT:-0}))
exec "$SEEDRL_BIN/distributed_actor" --connect "$address" --env "${SEEDRL_ENV:-cartpole}" \
  --envs "${SEEDRL_ENVS_PER_ACTOR:-8}" --seed "$seed" "$@"
