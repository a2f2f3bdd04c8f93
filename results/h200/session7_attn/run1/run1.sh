#!/usr/bin/env bash
# session 7 attention helper, device call 1 (exploration): build new + old (main dd4feb4) kernels,
# GPU tests (default, PDL off, mma.sync), A/B old/new on the attention cases and the decode step,
# tail split on/off, decode split sweep, PDL on/off, ncu of the decode attention + combine kernels.
# Run from the new tree's root: bash results/h200/session7_attn/run1.sh (OLD=path of the old tree)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S=$OUT/summary.txt
OLD=${OLD:-../s7attn_old}
export BK=/tmp/bk_s7attn
( cmake -S $OLD/kernels -B /tmp/bko_s7 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON > /tmp/bo.log 2>&1 && \
  cmake --build /tmp/bko_s7 -j6 --target cisa_kernel_bench >> /tmp/bo.log 2>&1; echo "== old build rc=$?" > /tmp/old_rc ) &
STOP_ON_FAIL=1 ALT_ENV=CISA_ATTN_PDL=0 bash kernels/bench/device_run.sh test test0 > /tmp/dr.log 2>&1
wait; cat /tmp/old_rc >> $S; tail -3 /tmp/gpu_test.log >> $S
grep -E "tile128|tail split|wave split|FAIL" /tmp/gpu_test.log | head -20 >> $S
cuobjdump --dump-sass $BK/libcisa_kernels.a 2>/dev/null | awk '/Function :/{f=$3} /attn_kernel/{} {if ($0 ~ /LDL|STL/) n[f]++} END{for (k in n) print "local mem:", k, n[k]}' >> $S
grep -q "gpu_test rc=0" $S || { cat $S; tail -60 /tmp/gpu_test.log; exit 1; }
C7=dense_prefill_inkling_b16_p512,dense_prefill_ultra_b16_p512,cisa_attn_prefill_inkling_b16_p512_g4,cisa_attn_prefill_inkling_b16_p512_g16,cisa_attn_prefill_inkling_b16_p512_g32,cisa_attn_prefill_ultra_b16_p512_g4,cisa_attn_decode_inkling_b16,dense_decode_inkling_b16
b() { local tag=$1 bin=$2 cases=$3; shift 3; local t0=$(date +%s)
  env "$@" $bin --csv /tmp/ab_$tag.csv --cases $cases > /tmp/ab_$tag.log 2>&1
  echo "== $tag ($*) $(( $(date +%s) - t0 )) s" >> $S; grep -E "^(dense|cisa|ERROR|read|BF16)" /tmp/ab_$tag.log | cut -c1-125 >> $S
  sed "s/^/$tag,/" /tmp/ab_$tag.csv >> $OUT/ab_all.csv; cat /tmp/ab_$tag.log >> $OUT/ab_all.log; }
b new1 $BK/cisa_kernel_bench $C7
b old /tmp/bko_s7/cisa_kernel_bench $C7

b notail $BK/cisa_kernel_bench dense_prefill_ultra_b16_p512,cisa_attn_prefill_ultra_b16_p512_g4 CISA_ATTN_TAIL=0
D=cisa_attn_decode_inkling_b16,cisa_step_decode_inkling_b16
b step_new $BK/cisa_kernel_bench $D
b step_old /tmp/bko_s7/cisa_kernel_bench $D
b step_nopdl $BK/cisa_kernel_bench $D CISA_ATTN_PDL=0
for sp in 8 32; do b dec_s$sp $BK/cisa_kernel_bench cisa_attn_decode_inkling_b16 CISA_ATTN_SPLITS=$sp; done
t0=$(date +%s)
timeout 90 ncu --clock-control none -k regex:"attn_kernel|combine_kernel" -c 4 --metrics \
  gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,sm__cycles_elapsed.max,smsp__cycles_active.avg,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active \
  $BK/cisa_kernel_bench --csv /tmp/n.csv --cases cisa_attn_decode_inkling_b16 > $OUT/ncu_decode.txt 2>&1
echo "== ncu rc=$? $(( $(date +%s) - t0 )) s" >> $S
grep -E "attn_kernel|combine_kernel|duration|dram__|sm__cycles|launch__grid|warps_active" $OUT/ncu_decode.txt | cut -c1-150 >> $S
cp /tmp/gpu_test.log $OUT/
cat $S
