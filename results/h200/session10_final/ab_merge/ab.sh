#!/usr/bin/env bash
# A/B: kernels at 01588cc (old, before the s10_dec merge) vs the working tree (new): prefill
# attention g4/g16/g32 and the decode step, alternating rounds.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON"
t0=$(date +%s)
(cmake -S .dev/ab_old/kernels -B /tmp/bo $cfg > /tmp/bo.log 2>&1 && cmake --build /tmp/bo -j8 --target cisa_kernel_bench >> /tmp/bo.log 2>&1; echo $? > /tmp/bo.rc) &
cmake -S kernels -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j8 --target cisa_kernel_bench >> /tmp/bn.log 2>&1
echo "build new rc=$? old rc=$(wait; cat /tmp/bo.rc) in $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader | tee -a $OUT/summary.txt
C=cisa_attn_prefill_inkling_b16_p512_g16,cisa_attn_prefill_inkling_b16_p512_g4,cisa_attn_prefill_inkling_b16_p512_g32,cisa_step_decode_inkling_b16
for r in 1 2 3; do
  for t in $( [ $((r % 2)) -eq 1 ] && echo "bo bn" || echo "bn bo"); do
    /tmp/$t/cisa_kernel_bench --csv /tmp/ab_${t}_$r.csv --cases $C > /tmp/ab_${t}_$r.log 2>&1
    echo "round $r $t rc=$?" >> $OUT/summary.txt
    sed "s/^/$t,$r,/" /tmp/ab_${t}_$r.csv >> $OUT/ab.csv
    cat /tmp/ab_${t}_$r.log >> $OUT/ab_all.log
  done
done
grep -v ":parts\|upload_once\|^bo,.,case\|^bn,.,case" $OUT/ab.csv | cut -d, -f1-5 | tee -a $OUT/summary.txt
