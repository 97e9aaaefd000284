#!/usr/bin/env bash
# Launches one distributed_learner and N distributed_actor processes on this machine, and waits
# for the learner's final JSON line. Ctrl-C stops everything (the learner writes a checkpoint
# when it has a --logdir).
#
#   scripts/launch-distributed.sh [-n ACTORS] [-e ENVS] [-b BUILD_DIR] [-a ADDRESS] [--tls]
#                                 [-- LEARNER OPTIONS...]
#
#   -n  actor processes (default 4)           -e  environments per actor (default 8)
#   -b  build directory (default build/release) -a  address (default unix:/tmp/seedrl-<pid>.sock)
#   --tls  mutual TLS over TCP (default address 127.0.0.1:8686): a throwaway CA, a certificate
#          for the learner and one for the actors are made with `openssl` in a temporary
#          directory, removed at the end
#   everything after -- goes to distributed_learner (--env, --frames, --logdir, agent options);
#   --env is passed to the actors as well.
#
# The token comes from SEEDRL_TOKEN; when it is unset a random one is made for this run.
set -euo pipefail
cd "$(dirname "$0")/.."

actors=4 envs=8 build=build/release address="" tls=0
args=() passthrough=0
for arg in "$@"; do  # --tls is long, getopts reads the short options: take it out first
  if [ "$passthrough" = 0 ] && [ "$arg" = "--tls" ]; then
    tls=1
    continue
  fi
  [ "$arg" = "--" ] && passthrough=1
  args+=("$arg")
done
set -- "${args[@]+"${args[@]}"}"
while getopts "n:e:b:a:h" opt; do
  case "$opt" in
    n) actors=$OPTARG ;;
    e) envs=$OPTARG ;;
    b) build=$OPTARG ;;
    a) address=$OPTARG ;;
    *) sed -n '2,17p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
learner_args=("$@")

env_name=cartpole
for ((i = 0; i < ${#learner_args[@]}; i++)); do
  case "${learner_args[$i]}" in
    --env) env_name=${learner_args[$((i + 1))]:-cartpole} ;;
    --env=*) env_name=${learner_args[$i]#--env=} ;;
  esac
done

for program in distributed_learner distributed_actor; do
  if [ ! -x "$build/examples/$program" ]; then
    echo "launch-distributed: $build/examples/$program not found; build first, e.g." >&2
    echo "  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build $build" >&2
    exit 1
  fi
done

export SEEDRL_TOKEN="${SEEDRL_TOKEN:-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')}"
learner_tls=() actor_tls=() certificates=""
if [ "$tls" = 1 ]; then
  [ -n "$address" ] || address=127.0.0.1:8686
  command -v openssl >/dev/null || { echo "launch-distributed: --tls needs openssl" >&2; exit 1; }
  certificates=$(mktemp -d /tmp/seedrl-tls.XXXXXX)
  host=${address%:*}
  san="DNS:localhost,IP:127.0.0.1"
  [[ "$host" =~ ^[0-9.]+$ ]] && san="$san,IP:$host" || san="$san,DNS:$host"
  # A CA (a day), then a learner and an actor certificate it signs; EC P-256 keys.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -subj "/CN=seedrl throwaway CA" -keyout "$certificates/ca_key.pem" -out "$certificates/ca.pem" \
    2>/dev/null
  for who in learner actor; do
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=seedrl $who" \
      -keyout "$certificates/${who}_key.pem" -out "$certificates/$who.csr" 2>/dev/null
    openssl x509 -req -in "$certificates/$who.csr" -CA "$certificates/ca.pem" \
      -CAkey "$certificates/ca_key.pem" -CAcreateserial -days 1 -out "$certificates/$who.pem" \
      -extfile <(printf "subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n" "$san") \
      2>/dev/null
  done
  learner_tls=(--tls-cert "$certificates/learner.pem" --tls-key "$certificates/learner_key.pem"
               --tls-ca "$certificates/ca.pem" --require-client-cert)
  actor_tls=(--tls-ca "$certificates/ca.pem" --tls-client-cert "$certificates/actor.pem"
             --tls-client-key "$certificates/actor_key.pem")
  echo "launch-distributed: mutual TLS with throwaway certificates in $certificates" >&2
fi
[ -n "$address" ] || address="unix:/tmp/seedrl-$$.sock"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -z "$certificates" ] || rm -rf "$certificates"
}
trap cleanup EXIT
interrupted=0
trap 'interrupted=1; kill -INT "$learner" 2>/dev/null || true' INT TERM

"$build/examples/distributed_learner" --listen "$address" ${learner_tls[@]+"${learner_tls[@]}"} \
  ${learner_args[@]+"${learner_args[@]}"} &
learner=$!
sleep 0.5
for ((i = 1; i <= actors; i++)); do
  "$build/examples/distributed_actor" --connect "$address" --env "$env_name" --envs "$envs" \
    --seed "$i" --report-seconds 30 ${actor_tls[@]+"${actor_tls[@]}"} &
  pids+=($!)
done
status=0
wait "$learner" || status=$?
# A signal interrupts `wait`: wait again for the learner to finish its checkpoint.
while kill -0 "$learner" 2>/dev/null; do wait "$learner" || status=$?; done
# At the end of training the actors exit by themselves; after an interrupt they would keep
# waiting for the learner to come back, so they are stopped.
if [ "$interrupted" = 1 ]; then
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
fi
for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
pids=()
exit "$status"
