#!/usr/bin/env bash
# bench/test_command_time.sh [REF ...]: the README's test command from a fresh clone, stage by
# stage, as JSON lines (docs/performance.md, "The test command").
#
# For each REF (default: HEAD), clones this repository at REF into a temporary directory and runs
# `CI=true bash .ci/run` there with no standard input, as CI does, each output line stamped with
# the time it came. The stages are the spans between the script's "== ... ==" banners; each
# stage that builds and then tests is split at CTest's first line ("Test project"); what comes
# before the first banner is the installation of what is missing. One line per stage:
#   {"bench":"test_command","ref":...,"commit":...,"stage":...,"part":"setup"|"build"|"test",
#    "seconds":...}
# then one with the whole command ("stage":"total") and its exit status, the CPU model and the
# core count. Nothing but the clone is written; the command's own output goes to
# test_command.log beside it (kept when the command fails, and said).
# NINJA_LOGS=DIR: each build tree's .ninja_log is copied there (<commit>-<tree>.ninja_log), and
# CTest's time of every test (<commit>-<tree>.test_times: CTestCostData.txt, name, runs, seconds).
# Each run takes from half an hour to more than an hour on 2 cores: compare figures from the same
# machine only.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
[ "$#" -gt 0 ] || set -- HEAD
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo | sed 's/"/\\"/g')
cores=$(nproc)

run_one() {  # run_one REF
  local ref=$1 clone
  clone=$(mktemp -d /tmp/seedrl-test-command.XXXXXX)
  git clone -q "$root" "$clone/src"
  git -C "$clone/src" checkout -q --detach "$ref"
  local commit; commit=$(git -C "$clone/src" rev-parse --short HEAD)
  echo "test_command_time: $ref ($commit): running the test command in $clone/src..." >&2
  local started rc
  started=$(date +%s.%N)
  set +e
  (cd "$clone/src" && CI=true bash .ci/run < /dev/null 2>&1) |
    while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done \
      > "$clone/test_command.log"
  rc=${PIPESTATUS[0]}
  set -e
  local ended; ended=$(date +%s.%N)
  awk -v ref="$ref" -v commit="$commit" -v started="$started" -v ended="$ended" '
    function emit(to) {
      if (stage == "" || (part == "build" && to - from < 1)) return
      printf "{\"bench\":\"test_command\",\"ref\":\"%s\",\"commit\":\"%s\",\"stage\":\"%s\",\"part\":\"%s\",\"seconds\":%.1f}\n",
        ref, commit, stage, part, to - from
    }
    {
      t = $1; text = substr($0, length($1) + 2)
      if (NR == 1) { stage = "install what is missing"; part = "setup"; from = started }
      if (text ~ /^== .* ==$/) {
        emit(t)
        stage = substr(text, 4, length(text) - 6); gsub(/"/, "\\\"", stage)
        part = "build"; from = t
      } else if (text ~ /^Test project / && part == "build") {
        emit(t); part = "test"; from = t
      }
      last = t
    }
    END { if (stage !~ /^all tests passed/) emit(last) }
  ' "$clone/test_command.log"
  printf '{"bench":"test_command","ref":"%s","commit":"%s","stage":"total","seconds":%.1f,"exit_status":%d,"cpu":"%s","cores":%d}\n' \
    "$ref" "$commit" "$(awk -v a="$started" -v b="$ended" 'BEGIN { print b - a }')" "$rc" "$cpu" "$cores"
  if [ -n "${NINJA_LOGS:-}" ]; then  # each tree's .ninja_log: what every file took to compile
    mkdir -p "$NINJA_LOGS"
    for log in "$clone"/src/build/*/.ninja_log; do
      [ -e "$log" ] && cp "$log" "$NINJA_LOGS/$commit-$(basename "$(dirname "$log")").ninja_log"
    done
    for costs in "$clone"/src/build/*/Testing/Temporary/CTestCostData.txt; do
      [ -e "$costs" ] && cp "$costs" "$NINJA_LOGS/$commit-$(basename "$(dirname "$(dirname "$(dirname "$costs")")")").test_times"
    done
  fi
  if [ "$rc" -eq 0 ]; then
    rm -rf "$clone"
  else
    echo "test_command_time: $ref failed (exit status $rc): its output is in $clone/test_command.log" >&2
  fi
}

for ref in "$@"; do run_one "$ref"; done
