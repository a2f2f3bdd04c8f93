#!/usr/bin/env bash
# Session 16 lead call 2: cuDNN shape scan (diagnostic).
set -u
cp .dev/scan/cudnn_scan.h5 $OUT/cudnn_scan.h5
timeout 400 python3 analysis/measure_impls.py $OUT/cudnn_scan.h5 --impls cudnn,fa2 --rows all --reps 5 > $OUT/scan.out 2> $OUT/scan.log
echo "rc=$?"; tail -5 $OUT/scan.log; grep -c "ms" $OUT/scan.out
