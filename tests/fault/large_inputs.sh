#!/usr/bin/env bash
# Inputs that used to exhaust memory or spin: a 17 MB scenario (refused by size), and a planner
# search whose list sizes multiply past 2^64 (the product wrapped to 0 and its limit never fired).
set -uo pipefail
EXE=$1 DIR=$2
rm -rf "$DIR" && mkdir -p "$DIR" && cd "$DIR" || exit 1
fail() { echo "large_inputs: FAILED: $*"; exit 1; }
{ echo "name: big"; head -c 17000000 /dev/zero | tr '\0' '#'; echo; } >big.yaml
err=$(timeout 20 "$EXE" --scenario ./big.yaml --no-hdf5 2>&1); rc=$?
[ $rc = 2 ] && grep -q "big.yaml.*limited to 16 MiB" <<<"$err" || fail "17 MB scenario: exit $rc: $err"
long=$(seq -s, 1 70000) short=$(seq -s, 1 65536)  # 70000^2 x 65536^2 > 2^64
{
  echo "name: wrap"; echo "model: nemotron3_ultra"; echo "hardware: b300"; echo "basis: speed_of_light"
  echo "weights: fp8"; echo "parallel: {tp: 2, dp: 2, ep: 4}"
  echo "workload: {context: 1M, output_tokens: 4096, prefill_chunk: 8192, batch: 8}"
  echo "search:"
  for k in context budget; do echo "  $k: [$long]"; done
  for k in G batch; do echo "  $k: [$short]"; done
} >wrap.yaml
err=$(timeout 60 "$EXE" plan --scenario ./wrap.yaml --no-hdf5 2>&1); rc=$?
[ $rc = 2 ] && grep -q "200,000" <<<"$err" || fail "search of 70000^2 x 65536^2: exit $rc: $(head -c 300 <<<"$err")"
echo "large_inputs: ok"
