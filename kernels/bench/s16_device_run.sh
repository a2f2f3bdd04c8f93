#!/usr/bin/env bash
# Issue 14 session 16 (kernels helper), one device call. Run from a copy holding kernels/ and tests/.
# Builds this tree and OLD_TREE's bench; GPU tests (default, then TEST_ENVS with seed 7); A/B of
# AB_CASES over AB_VARIANTS (label:ENV=V,ENV=V; labels starting "old" run OLD_TREE's binary),
# ROUNDS rounds alternating; a median table (ab_table.txt); compute-sanitizer memcheck / synccheck /
# racecheck on SAN_KERNELS (kernel:ENV=V,... entries) while DEADLINE (s since start) allows; RACE_CASES:
# an unfiltered racecheck of those GPU-test cases (CISA_TEST_CASES) before the A/B.
# Everything lands in $OUT/s16.tar.gz plus $OUT/summary.txt and $OUT/ab_table.txt.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
W=/tmp/s16w; rm -rf $W; mkdir -p $W
S="$OUT/summary.txt"
log() { echo "== [$(el) s] $*" | tee -a "$S"; }
DEADLINE=${DEADLINE:-300}
log "$(date) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>/dev/null)"
BK=/tmp/bk16n
san_run() {  # tool kernel envs
  local tool=$1 k=$2 envs=$3 left=$(( DEADLINE - $(el) - 5 ))
  [ $left -lt 20 ] && { log "compute-sanitizer $tool ($k; $envs): skipped, $left s left"; return; }
  env ${envs//,/ } timeout $left compute-sanitizer --tool $tool --kernel-name kns=$k --error-exitcode 9 \
    $BK/kernels_gpu_test 1 > $W/san_${tool}_${k}.log 2>&1
  log "compute-sanitizer $tool ($k; $envs) rc=$? $(grep -E 'SUMMARY|checks passed' $W/san_${tool}_${k}.log | tr '\n' ' ')"
  { echo "### $tool $k $envs"; grep -m5 -B2 -A12 -E "^========= (Invalid|Race|Barrier|Error)|Hazard" $W/san_${tool}_${k}.log; tail -3 $W/san_${tool}_${k}.log; } >> $W/sanitize.log
}
( cmake -S "$OLD_TREE/kernels" -B ${BK}_old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON \
    > $W/build_old.log 2>&1 && cmake --build ${BK}_old -j6 --target cisa_kernel_bench >> $W/build_old.log 2>&1 ) &
opid=$!
cmake -S kernels -B $BK -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON -DCISA_PTXAS_VERBOSE=ON \
  > $W/build.log 2>&1 && cmake --build $BK -j10 --target cisa_kernel_bench kernels_gpu_test >> $W/build.log 2>&1
rc=$?; wait $opid; orc=$?
log "build rc=$rc, old build rc=$orc; nonzero spill lines: $(grep -E '[1-9][0-9]* bytes spill' $W/build.log | wc -l)"
if [ $rc -ne 0 ] || [ $orc -ne 0 ]; then grep -B5 -A20 -E "error|FAILED" $W/build.log $W/build_old.log | head -60; tar czf "$OUT/s16.tar.gz" -C $W .; exit 1; fi
$BK/kernels_gpu_test > $W/gpu_test.log 2>&1; log "gpu_test (default) rc=$? $(tail -1 $W/gpu_test.log)"
grep -E "FAIL|mismatches [1-9]" $W/gpu_test.log | head -20 >> "$S"
for e in ${TEST_ENVS:-}; do
  env ${e//,/ } $BK/kernels_gpu_test 7 > $W/gt_env.log 2>&1; log "gpu_test ($e, seed 7) rc=$? $(tail -1 $W/gt_env.log)"
  grep -E "FAIL|mismatches [1-9]" $W/gt_env.log | head -20 >> "$S"; cat $W/gt_env.log >> $W/gpu_test_envs.log
done
if [ -n "${RACE_CASES:-}" ]; then  # unfiltered racecheck on a few step cases (the kernel filter trips the tool)
  CISA_TEST_CASES=$RACE_CASES timeout ${RACE_LIMIT:-40} compute-sanitizer --tool racecheck --error-exitcode 9 \
    $BK/kernels_gpu_test 1 > $W/san_racecheck_cases.log 2>&1
  log "compute-sanitizer racecheck (no filter; CISA_TEST_CASES=$RACE_CASES) rc=$? $(grep -E 'SUMMARY|checks passed' $W/san_racecheck_cases.log | tr '\n' ' ')"
  { echo "### racecheck cases $RACE_CASES"; grep -m5 -B2 -A12 -E "^========= (Invalid|Race|Barrier|Error)|Hazard" $W/san_racecheck_cases.log; tail -3 $W/san_racecheck_cases.log; } >> $W/sanitize.log
fi
for r in $(seq 1 ${ROUNDS:-3}); do
  for v in ${AB_VARIANTS:-old: new:}; do
    [ $(el) -gt $(( DEADLINE - ${SAN_RESERVE:-60} )) ] && { log "ab r$r $v: skipped (deadline)"; continue; }
    label=${v%%:*}; envs=${v#*:}; bin=$BK/cisa_kernel_bench; [[ $label == old* ]] && bin=${BK}_old/cisa_kernel_bench
    env ${envs//,/ } timeout 90 $bin --csv $W/ab_r${r}_${label}.csv --cases "$AB_CASES" > $W/ab1.log 2>&1
    log "ab r$r $label ($envs) rc=$?"
    { echo "### r$r $label ($envs)"; cat $W/ab1.log; } >> $W/ab.log
  done
done
python3 - "$W" > $OUT/ab_table.txt 2>&1 <<'PY'
import csv, glob, os, re, statistics, sys
w = sys.argv[1]; d = {}; labels = []
for f in sorted(glob.glob(os.path.join(w, "ab_r*_*.csv"))):
    m = re.match(r"ab_r(\d+)_(.+)\.csv", os.path.basename(f)); lab = m.group(2)
    if lab not in labels: labels.append(lab)
    for row in csv.DictReader(open(f)):
        d.setdefault(row["case"], {}).setdefault(lab, []).append(float(row["ms"]) * 1000)
for case in d:
    print(case)
    for lab in labels:
        v = d[case].get(lab)
        if v: print("   %-10s median %9.2f us  runs %s" % (lab, statistics.median(v), " ".join("%.1f" % x for x in v)))
PY
head -150 $OUT/ab_table.txt
for sk in ${SAN_KERNELS:-}; do
  k=${sk%%:*}; envs=${sk#*:}
  for t in memcheck synccheck racecheck; do san_run $t $k "$envs"; done
done
cp $W/build.log $W/build_new.log 2>/dev/null
tar czf "$OUT/s16.tar.gz" -C $W . ; log "done"
