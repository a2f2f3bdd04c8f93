#!/usr/bin/env bash
# ncu byte cross-check: every kernel of the pipeline launched once at one shape (bench --ncu),
# DRAM bytes read/written from Nsight Compute against the bytes each entry point expects.
# Usage: ncu_check.sh <cisa_kernel_bench> <outdir>
set -uo pipefail
bin=$1; out=$2
here=$(dirname "$0")
ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum \
  -k regex:'attn_kernel|combine_kernel|score_kernel|sum_iq_kernel|topk_kernel|reps_kernel' --csv \
  "$bin" --ncu > "$out/ncu_raw.csv" 2> /tmp/ncu_stderr.log; tail -3 /tmp/ncu_stderr.log
echo "ncu rc=$?"
grep "^REC" "$out/ncu_raw.csv" > /tmp/ncu_expected.txt
python3 "$here/ncu_compare.py" "$out/ncu_raw.csv" /tmp/ncu_expected.txt "$out/ncu_bytes.csv"
