#!/bin/bash
# Issue 75's final before/after: 40b3876 (the commit before the redesign began, /work/runs/ba/before)
# against the redesign's head (/work/runs/ba/after), one run at a time, interleaved.
out=/work/runs/ba/out; mkdir -p $out
B=/work/runs/ba/before; A=/work/runs/ba/after
log() { echo "$(date -u +%FT%TZ) $*" >> $out/meta.txt; }
bin() { # which name args...: runs a copied binary with its own library path
  local dir=$1 name=$2; shift 2
  LD_LIBRARY_PATH=$dir "$dir/$name" "$@"
}
log "start $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo)"
for i in 1 2; do
  first=$B; second=$A; f=before; s=after
  if [ $i = 2 ]; then first=$A; second=$B; f=after; s=before; fi
  for pair in "$first:$f" "$second:$s"; do
    d=${pair%%:*}; w=${pair##*:}
    log "bench_pipeline $w $i"; bin $d bench_pipeline > $out/pipeline_${w}_$i.jsonl 2> $out/pipeline_${w}_$i.err
  done
  for pair in "$first:$f" "$second:$s"; do
    d=${pair%%:*}; w=${pair##*:}
    log "bench_inference $w $i"; bin $d bench_inference --seconds 3 > $out/inference_${w}_$i.jsonl 2> $out/inference_${w}_$i.err
  done
  for pair in "$first:$f" "$second:$s"; do
    d=${pair%%:*}; w=${pair##*:}
    log "bench_transport $w $i"; bin $d bench_transport --transports inproc,unix,tcp,tls > $out/transport_${w}_$i.jsonl 2> $out/transport_${w}_$i.err
  done
done
log "compile_time"
(cd /tmp/a75 && for i in 1 2 3; do bash bench/compile_time.sh /work/main/build/release 40b3876 test/package/train.cpp; done) > $out/compile_time.jsonl 2> $out/compile_time.err
# Learning: the reporting seeds, before then after for each seed.
for seed in 101 102 103 104 105; do
  for w in before after; do
    d=$B; [ $w = after ] && d=$A
    mkdir -p $out/runs/$w; cd $out/runs/$w  # whatever a program writes by default lands here
    log "cartpole_vtrace $w $seed"
    bin $d cartpole_vtrace --seed $seed > $out/runs/$w/cartpole_vtrace_$seed.json 2> $out/runs/$w/cartpole_vtrace_$seed.progress
    log "minatar_vtrace breakout $w $seed"
    bin $d minatar_vtrace --game breakout --entropy-cost 0.01 --seed $seed --report-seconds 30 > $out/runs/$w/vtrace_breakout_$seed.json 2> $out/runs/$w/vtrace_breakout_$seed.progress
    log "mujoco_ppo hopper $w $seed"
    bin $d mujoco_ppo --env hopper --seed $seed > $out/runs/$w/ppo_hopper_$seed.json 2> $out/runs/$w/ppo_hopper_$seed.progress
  done
done
log done
