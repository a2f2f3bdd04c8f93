#!/usr/bin/env bash
# (Archived: ran as .dev/score/kernels/bench/score_s8_run3.sh at 4202116; the CISA_GEMV_CFG switch it drives is deleted.)
# Session 8 scoring helper, device call 3: main's GEMV beside the branch-free issue and four (warps,
# stages) shapes of it (CISA_GEMV_CFG), GPU tests under each shape, ncu, then compute-sanitizer on the
# GEMV under each shape while time is left. Run from the repo root of a copy holding .dev/score and
# .dev/main_ref (kernels/ and tests/ of each).
set -uo pipefail
OUT=${OUT:-/tmp/out}
cd .dev/score
t0=$(date +%s)
D=score_decode_inkling_b16,cisa_step_decode_inkling_b16
S1=score_decode_inkling_b16
V="old1::$D bf1::$D"
for c in 24 15 26 16; do V="$V c$c:CISA_GEMV_CFG=$c:$S1"; done
V="$V old2::$D bf2::$D"
for c in 24 15 26 16; do V="$V c${c}b:CISA_GEMV_CFG=$c:$S1"; done
V="$V old3::$S1 bf3::$S1"
OUT=$OUT OLD_TREE=$PWD/../main_ref VARIANTS="$V" \
  TEST_ENVS="CISA_GEMV_CFG=24 CISA_GEMV_CFG=15 CISA_GEMV_CFG=26 CISA_GEMV_CFG=16" \
  NCU_CASES="score_decode_inkling_b16:score_gemv" bash kernels/bench/score_device_run.sh > "$OUT/run.log" 2>&1
R="$OUT/san.txt"
o=$(find /tmp/bk_score -name 'scoring.cu.o' | head -1)
cuobjdump -sass "$o" | awk '/Function :/{f=$3} /ENDCOLLECTIVE/{c[f]++} END{for(k in c) print "ENDCOLLECTIVE", c[k], k}' >> "$R" 2>&1
o2=$(find /tmp/bk_score_old -name 'scoring.cu.o' | head -1)
cuobjdump -sass "$o2" | awk '/Function :/{f=$3} /ENDCOLLECTIVE/{c[f]++} END{for(k in c) print "old ENDCOLLECTIVE", c[k], k}' >> "$R" 2>&1
for c in 43 24 15 26 16; do
  for tool in memcheck racecheck synccheck; do
    [ $(( $(date +%s) - t0 )) -gt ${SAN_DEADLINE:-330} ] && { echo "skip $tool cfg $c (time)" >> "$R"; continue; }
    CISA_GEMV_CFG=$c timeout 60 compute-sanitizer --tool $tool --kernel-name kns=score_gemv --error-exitcode 9 \
      /tmp/bk_score/kernels_gpu_test 1 > /tmp/san.log 2>&1
    echo "cfg $c $tool rc=$? $(grep -E 'SUMMARY|checks passed' /tmp/san.log | tr '\n' ' ') ($(( $(date +%s) - t0 )) s)" >> "$R"
    grep -m3 -A8 -E "^========= (Invalid|Race|Barrier|Error)|Hazard" /tmp/san.log >> "$R"
  done
done
cat "$OUT/summary.txt" "$R"
