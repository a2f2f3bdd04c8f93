#!/usr/bin/env bash
# Re-scores the measured design files against the current model and prints the README's tables
# (predicted / measured ms per component, measured / predicted - 1). No GPU needed.
#   results/h200/designs/make_tables.sh [path/to/cisa-sim]
set -euo pipefail
B=${1:-build/release/cisa-sim}
D=results/h200/designs
T=$(mktemp -d)
$B --scenario $D/designs_measure.yaml --measurements $D/designs_measure_device_run.h5 --no-hdf5 --format csv > $T/ink.csv 2>/dev/null
$B --scenario $D/designs_measure.yaml --set "sweep.zip.design=[quest_1v.yaml]" --set "sweep.zip.G=[1]" \
  --measurements $D/quest_copies_device_run.h5 --no-hdf5 --format csv > $T/cop.csv 2>/dev/null
$B --scenario $D/ultra_designs_measure.yaml --measurements $D/ultra_designs_measure_device_run.h5 --no-hdf5 --format csv > $T/ult.csv 2>/dev/null
python3 - $T/ink.csv "Inkling-Small TP8 (4 q / 1 kv heads), batch 16" \
          $T/ult.csv "Nemotron 3 Ultra TP2 (32 q / 1 kv heads), batch 16" \
          $T/cop.csv "Quest with a copy of the KV head per plan (CISA_MEASURE_HEAD_COPIES=1), Inkling TP8" <<'PY'
import csv, sys
comps = ['attention_cisa', 'scoring', 'topk', 'setup', 'other', 'busy_cisa']
def f(x):
    x = float(x)
    return f"{x:.3g}"
for path, title in zip(sys.argv[1::2], sys.argv[2::2]):
    print(f"\n**{title}**\n")
    print("| design | phase | L | G | " + " | ".join(c.replace('_cisa', '') for c in comps) +
          " | dense (own) | x busy pred / meas |")
    print("|---|---|---:|---:|" + "---:|" * (len(comps) + 2))
    for r in csv.DictReader(open(path)):
        s = f"| {r['design']} | {r['phase'].replace('terminal_prefill', 'prefill')} | {int(r['context_tokens']) // 1024}K | {r['qshare_g']} |"
        for c in comps:
            p, m = float(r['pred_ms_' + c]), float(r['meas_ms_' + c])
            s += f" {f(p)} / {f(m)} ({(m / p - 1) * 100:+.0f}%) |"
        s += f" {f(r['meas_ms_attention_dense'])} | {f(r['pred_speedup_busy_vs_own'])} / {f(r['meas_speedup_busy'])} |"
        print(s)
PY
rm -rf $T
