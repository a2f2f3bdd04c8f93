#!/usr/bin/env bash
# session 6 attention helper, device call 1: build new + old (8d97c3b), tests, interleaved A/B, ncu
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S=$OUT/summary.txt
( cmake -S old/kernels -B /tmp/bko -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON > /tmp/bo.log 2>&1 && \
  cmake --build /tmp/bko -j6 --target cisa_kernel_bench >> /tmp/bo.log 2>&1; echo "== old build rc=$?" > /tmp/old_rc ) &
STOP_ON_FAIL=1 kernels/bench/device_run.sh test > /tmp/dr.log 2>&1
wait; cat /tmp/old_rc >> $S; tail -3 /tmp/gpu_test.log >> $S
grep -q "gpu_test rc=0" $S || { cat $S; tail -50 /tmp/gpu_test.log; exit 1; }
C7=dense_prefill_inkling_b16_p512,dense_prefill_ultra_b16_p512,cisa_attn_prefill_inkling_b16_p512_g4,cisa_attn_prefill_inkling_b16_p512_g16,cisa_attn_prefill_inkling_b16_p512_g32,cisa_attn_prefill_ultra_b16_p512_g4,cisa_attn_decode_inkling_b16
C3=dense_prefill_inkling_b16_p512,cisa_attn_prefill_ultra_b16_p512_g4,cisa_attn_prefill_inkling_b16_p512_g32
b() { local tag=$1 bin=$2 cases=$3; shift 3; local t0=$(date +%s)
  env "$@" $bin --csv /tmp/ab_$tag.csv --cases $cases > /tmp/ab_$tag.log 2>&1
  echo "== $tag ($*) $(( $(date +%s) - t0 )) s" >> $S; grep -E "^(dense|cisa|ERROR)" /tmp/ab_$tag.log | cut -c1-125 >> $S
  sed "s/^/$tag,/" /tmp/ab_$tag.csv >> $OUT/ab_all.csv; cat /tmp/ab_$tag.log >> $OUT/ab_all.log; }
b old /tmp/bko/cisa_kernel_bench $C7
b new /tmp/bk/cisa_kernel_bench $C7
b nowave /tmp/bk/cisa_kernel_bench dense_prefill_inkling_b16_p512,dense_prefill_ultra_b16_p512 CISA_ATTN_WAVE=0
b var1 /tmp/bk/cisa_kernel_bench $C3 CISA_ATTN_VAR=1
b new2 /tmp/bk/cisa_kernel_bench $C3
t0=$(date +%s)
timeout 120 ncu --clock-control none -k regex:attn_kernel -c 1 --section SpeedOfLight --section WarpStateStats \
  --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
  /tmp/bk/cisa_kernel_bench --csv /tmp/n.csv --cases dense_prefill_inkling_b16_p512 > $OUT/ncu_dense.txt 2>&1
echo "== ncu rc=$? $(( $(date +%s) - t0 )) s" >> $S
grep -E "Duration|Throughput|Issue Slots|Pipe|pipeline|Stall|Warp Cycles|Eligible|Active Warps" $OUT/ncu_dense.txt | head -30 >> $S
cat $S
