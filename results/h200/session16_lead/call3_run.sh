#!/usr/bin/env bash
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,power.draw,temperature.gpu --format=csv > $OUT/smi_before.csv 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 20 > $OUT/smi_log.csv 2>&1 &
SP=$!
python3 .dev/clk/clk.py > $OUT/clk.jsonl 2> $OUT/clk.err; echo "clk rc=$?"
sleep 0.5; kill $SP
# the cuDNN L scan once more, with the clock log running
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 20 > $OUT/smi_scan.csv 2>&1 &
SP=$!
cp .dev/scan/cudnn_scan.h5 $OUT/scan2.h5
timeout 200 python3 analysis/measure_impls.py $OUT/scan2.h5 --impls cudnn --rows all --reps 5 > $OUT/scan2.out 2> $OUT/scan2.log; echo "scan rc=$?"
kill $SP
cat $OUT/smi_before.csv; head -3 $OUT/smi_log.csv; wc -l $OUT/smi_log.csv; cat $OUT/clk.jsonl | cut -c1-300
