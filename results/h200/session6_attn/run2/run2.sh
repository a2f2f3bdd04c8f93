#!/usr/bin/env bash
# session 6 attention helper, device call 2 (final code): build new + old (8d97c3b), tests (default
# and CISA_ATTN_MMA=sync), A/B bench old/new on the 7 attention cases, ncu of Ultra g4, sanitizers
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S=$OUT/summary.txt
( cmake -S old/kernels -B /tmp/bko -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON > /tmp/bo.log 2>&1 && \
  cmake --build /tmp/bko -j6 --target cisa_kernel_bench >> /tmp/bo.log 2>&1; echo "== old build rc=$?" > /tmp/old_rc ) &
STOP_ON_FAIL=1 kernels/bench/device_run.sh test test0 > /tmp/dr.log 2>&1
wait; cat /tmp/old_rc >> $S; tail -2 /tmp/gpu_test.log >> $S; grep "wave split" /tmp/gpu_test.log >> $S
grep -q "gpu_test rc=0" $S || { cat $S; tail -50 /tmp/gpu_test.log; exit 1; }
C7=dense_prefill_inkling_b16_p512,dense_prefill_ultra_b16_p512,cisa_attn_prefill_inkling_b16_p512_g4,cisa_attn_prefill_inkling_b16_p512_g16,cisa_attn_prefill_inkling_b16_p512_g32,cisa_attn_prefill_ultra_b16_p512_g4,cisa_attn_decode_inkling_b16
b() { local tag=$1 bin=$2 cases=$3; shift 3; local t0=$(date +%s)
  env "$@" $bin --csv /tmp/ab_$tag.csv --cases $cases > /tmp/ab_$tag.log 2>&1
  echo "== $tag ($*) $(( $(date +%s) - t0 )) s" >> $S; grep -E "^(dense|cisa|ERROR|read|BF16)" /tmp/ab_$tag.log | cut -c1-125 >> $S
  sed "s/^/$tag,/" /tmp/ab_$tag.csv >> $OUT/ab_all.csv; cat /tmp/ab_$tag.log >> $OUT/ab_all.log; }
b new1 /tmp/bk/cisa_kernel_bench $C7
b old /tmp/bko/cisa_kernel_bench $C7
b new2 /tmp/bk/cisa_kernel_bench $C7
t0=$(date +%s)
timeout 60 ncu --clock-control none -k regex:attn_kernel -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
  /tmp/bk/cisa_kernel_bench --csv /tmp/n.csv --cases cisa_attn_prefill_ultra_b16_p512_g4 > $OUT/ncu_ultra_g4.txt 2>&1
echo "== ncu rc=$? $(( $(date +%s) - t0 )) s" >> $S
grep -E "Duration|Throughput|Hit Rate|SM Frequency" $OUT/ncu_ultra_g4.txt | head -12 >> $S
t0=$(date +%s)
SAN_TIMEOUT=100 kernels/bench/device_run.sh sanitize > /tmp/san.log 2>&1
echo "== sanitize $(( $(date +%s) - t0 )) s" >> $S
cat $S
