#!/bin/bash
# After the test command: 12 alternating pairs of one -O3 compile of test/package/train.cpp,
# 40b3876 (/tmp/b40) against the final tree (/tmp/cc7, a clean clone), then the PPO queue may go.
out=/work/runs/ba/out/compile_time_final.jsonl; : > $out
for i in $(seq 1 12); do
  order="40b3876 final"; [ $((i % 2)) = 0 ] && order="final 40b3876"
  for t in $order; do
    root=/tmp/b40; [ $t = final ] && root=/tmp/cc7
    label=$t; [ $t = final ] && label=$(git -C /tmp/cc7 rev-parse --short HEAD)
    /usr/bin/time -f "{\"bench\":\"compile_time_cpu\",\"tree\":\"$label\",\"pair\":$i,\"wall_s\":%e,\"user_s\":%U,\"sys_s\":%S}" \
      g++ -std=c++20 -O3 -DNDEBUG -I $root/include -I /work/main/build/release/include \
      -isystem /usr/include/eigen3 -c $root/test/package/train.cpp -o /tmp/ctf.o 2>> $out
  done
done
