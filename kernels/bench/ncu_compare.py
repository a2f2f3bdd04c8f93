#!/usr/bin/env python3
"""Matches ncu DRAM byte counters with the bytes each instrumented launch expects (bench --ncu)."""
import csv
import io
import sys

raw, exp, out = sys.argv[1:4]
lines = open(raw).read().splitlines()
csv_lines = [l for l in lines if l.startswith('"')]
rows = list(csv.DictReader(io.StringIO("\n".join(csv_lines))))
launches = {}  # ID -> {name, metrics}
order = []
for r in rows:
    i = r["ID"]
    if i not in launches:
        launches[i] = {"name": r["Kernel Name"], "m": {}}
        order.append(i)
    v = r["Metric Value"].replace(",", "")
    unit = r.get("Metric Unit", "")
    scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}.get(unit, 1)
    try:
        launches[i]["m"][r["Metric Name"]] = float(v) * scale
    except ValueError:
        pass
ncu = [launches[i] for i in order]
recs = [l.split() for l in open(exp)]
KMAP = {"reps_rebuild": ["reps_kernel"], "reps_update": ["reps_kernel"], "sum_index_queries": ["sum_iq_kernel"],
        "score_pages": ["score_kernel"], "topk_radix_select": ["topk_kernel"], "paged_attention": ["attn_kernel"],
        "paged_attention_split": ["attn_kernel", "combine_kernel"]}
pos = 0
res = []
for rec in recs:
    _, comp, kern, by, fl = rec
    want = KMAP.get(kern)
    if want is None:
        continue  # memcpy (setup) is not a kernel
    rd = wr = l2 = 0.0
    for wname in want:
        while pos < len(ncu) and wname not in ncu[pos]["name"]:
            pos += 1
        if pos == len(ncu):
            break
        m = ncu[pos]["m"]
        rd += m.get("dram__bytes_read.sum", 0)
        wr += m.get("dram__bytes_write.sum", 0)
        l2 += m.get("lts__t_sectors_srcunit_tex_op_read.sum", 0) * 32
        pos += 1
    res.append((comp, kern, float(by), rd, wr, l2))
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["component", "kernel", "expected_bytes", "dram_read", "dram_write", "dram_total", "ratio_total_expected",
                "l2_read_from_sm"])
    for comp, kern, by, rd, wr, l2 in res:
        w.writerow([comp, kern, f"{by:.0f}", f"{rd:.0f}", f"{wr:.0f}", f"{rd + wr:.0f}",
                    f"{(rd + wr) / by if by else float('nan'):.3f}", f"{l2:.0f}"])
        print(f"{comp:10s} {kern:24s} expected {by / 1e6:10.2f} MB  dram rd {rd / 1e6:10.2f} wr {wr / 1e6:8.2f} MB  "
              f"ratio {(rd + wr) / by if by else float('nan'):.3f}")
