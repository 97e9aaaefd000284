#!/bin/bash
# A third and fourth round of bench_pipeline (its figures spread widely), after run.sh.
out=/work/runs/ba/out
B=/work/runs/ba/before; A=/work/runs/ba/after
log() { echo "$(date -u +%FT%TZ) $*" >> $out/meta.txt; }
until grep -q " done$" $out/meta.txt 2>/dev/null; do sleep 10; done
for i in 3 4; do
  order="before after"; [ $i = 4 ] && order="after before"
  for w in $order; do
    d=$B; [ $w = after ] && d=$A
    log "bench_pipeline $w $i"; LD_LIBRARY_PATH=$d $d/bench_pipeline > $out/pipeline_${w}_$i.jsonl 2> $out/pipeline_${w}_$i.err
  done
done
log "round2 finished"
