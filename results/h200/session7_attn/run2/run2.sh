#!/usr/bin/env bash
# session 7 attention helper, device call 2 (final): build B (this tree: 128-token WS tiles, tail
# split, PDL for split launches, parallel combine, dynamic splits for the 16/32-row split launches),
# A (the same without dynamic splits, commit 01e2d41) and old (main dd4feb4); GPU tests of B
# (default, mma.sync); A/B old/A/B on the attention cases and the decode step, a second pass on
# g16 / decode / step; compute-sanitizer on the faster of A and B at the decode step.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S=$OUT/summary.txt
A=${A:-../s7attn_A}; OLD=${OLD:-../s7attn_old}
export BK=/tmp/bk_s7attn
( cmake -S $OLD/kernels -B /tmp/bko_s7 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON > /tmp/bo.log 2>&1 && \
  cmake --build /tmp/bko_s7 -j5 --target cisa_kernel_bench >> /tmp/bo.log 2>&1; echo "== old build rc=$?" > /tmp/old_rc ) &
( cmake -S $A/kernels -B /tmp/bka_s7 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON > /tmp/ba.log 2>&1 && \
  cmake --build /tmp/bka_s7 -j5 --target cisa_kernel_bench kernels_gpu_test >> /tmp/ba.log 2>&1; echo "== A build rc=$?" > /tmp/a_rc ) &
STOP_ON_FAIL=1 bash kernels/bench/device_run.sh test test0 > /tmp/dr.log 2>&1
wait; cat /tmp/old_rc /tmp/a_rc >> $S; tail -2 /tmp/gpu_test.log >> $S; grep -E "wave split|tail split|FAIL" /tmp/gpu_test.log | head -12 >> $S
cuobjdump --dump-sass $BK/libcisa_kernels.a 2>/dev/null | awk '/Function :/{f=$3} {if ($0 ~ /LDL|STL/) n[f]++} END{for (k in n) print "local mem:", k, n[k]}' >> $S
grep -q "gpu_test rc=0" $S || { cat $S; tail -60 /tmp/gpu_test.log; exit 1; }
C8=dense_prefill_inkling_b16_p512,dense_prefill_ultra_b16_p512,cisa_attn_prefill_inkling_b16_p512_g4,cisa_attn_prefill_inkling_b16_p512_g16,cisa_attn_prefill_inkling_b16_p512_g32,cisa_attn_prefill_ultra_b16_p512_g4,cisa_attn_decode_inkling_b16,dense_decode_inkling_b16,cisa_step_decode_inkling_b16
C3=cisa_attn_prefill_inkling_b16_p512_g16,cisa_attn_decode_inkling_b16,cisa_step_decode_inkling_b16
b() { local tag=$1 bin=$2 cases=$3; shift 3; local t0=$(date +%s)
  env "$@" $bin --csv /tmp/ab_$tag.csv --cases $cases > /tmp/ab_$tag.log 2>&1
  echo "== $tag ($*) $(( $(date +%s) - t0 )) s" >> $S; grep -E "^(dense|cisa|ERROR|read|BF16)" /tmp/ab_$tag.log | grep -v "parts\|upload" | cut -c1-125 >> $S
  sed "s/^/$tag,/" /tmp/ab_$tag.csv >> $OUT/ab_all.csv; cat /tmp/ab_$tag.log >> $OUT/ab_all.log; }
b B1 $BK/cisa_kernel_bench $C8
b A1 /tmp/bka_s7/cisa_kernel_bench $C8
b old1 /tmp/bko_s7/cisa_kernel_bench $C8
b B2 $BK/cisa_kernel_bench $C3
b A2 /tmp/bka_s7/cisa_kernel_bench $C3
b old2 /tmp/bko_s7/cisa_kernel_bench $C3
st() { grep -h "^cisa_step_decode_inkling_b16 " /tmp/ab_$1.log | awk '{print $3}'; }
W=B; TB=/tmp/bk_s7attn/kernels_gpu_test
if python3 -c "import sys; sys.exit(0 if $(st B1)+$(st B2) > $(st A1)+$(st A2) else 1)"; then
  W=A; TB=/tmp/bka_s7/kernels_gpu_test
  $TB > /tmp/gpu_test_A.log 2>&1; echo "== A gpu_test rc=$? $(tail -1 /tmp/gpu_test_A.log)" >> $S; cp /tmp/gpu_test_A.log $OUT/
fi
echo "== decode step B $(st B1) $(st B2) A $(st A1) $(st A2): sanitize $W" >> $S
t0=$(date +%s)
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $TB 1 > /tmp/san_$tool.log 2>&1
  echo "== compute-sanitizer $tool ($W) rc=$? $(grep -E 'SUMMARY|checks passed' /tmp/san_$tool.log | tr '\n' ' ')" >> $S
  grep -m5 -B2 -A12 -E "^========= (Invalid|Race|Barrier|Error)|Hazard" /tmp/san_$tool.log >> $OUT/sanitize_findings.txt
done
echo "== sanitize $(( $(date +%s) - t0 )) s" >> $S
cp /tmp/gpu_test.log $OUT/
cat $S
