#!/usr/bin/env bash
# Issue 14 session 7 (scoring helper), the final device call at this tree: A/B of the trees in
# OLD_TREES ("name=path ...": old main and the session's earlier commits) against this one in the same
# call (score_device_run.sh), then this tree's GPU tests, full benchmark with the torch peers and the
# three sanitizers (device_run.sh test bench sanitize); logs packed so that at most 8 files come back.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-/tmp/out} BK=${BK:-/tmp/bk_s7score}
ALL=score_prefill_inkling_b16_p512_g4,score_decode_inkling_b16,cisa_step_decode_inkling_b16,cisa_step_prefill_inkling_b16_p512_g32
G32=cisa_step_prefill_inkling_b16_p512_g32
OLD_TREES="${OLD_TREES:-}" CASES=score_prefill_inkling_b16_p512_g4 \
  VARIANTS="old1::$ALL final1::$ALL A1:: B1:: old2:: A2:: B2:: final2:: old3::$G32 final3::$G32" \
  NCU_CASES="score_prefill_inkling_b16_p512_g4:score_kernel" bash kernels/bench/score_device_run.sh
STOP_ON_FAIL=1 bash kernels/bench/device_run.sh test bench sanitize
cd "$OUT" && tar czf logs.tgz bench_all.log bench.log peers.log ncu_*.txt 2>/dev/null
rm -f bench_all.log bench.log peers.log ncu_*.txt
ls -la "$OUT"
