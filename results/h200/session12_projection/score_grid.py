#!/usr/bin/python3
"""Scores the index projection's form (floor + max(bytes / read, FLOPs / MMA)) with the figures of a
calibration file against session 11's 180-shape cuBLAS grid (two runs), the 24 fit shapes apart
from the 156 others. Usage: score_grid.py CALIBRATION.yaml"""
import csv, re, statistics, sys

cal = open(sys.argv[1]).read()
def fig(name):
    m = re.search(name + r": \{value: ([0-9.eE+-]+)", cal)
    if not m:
        sys.exit(f"{sys.argv[1]}: no {name}")
    return float(m.group(1))
floor, R, F = fig("projection_floor_us") * 1e-6, fig("projection_read_bw_tbs") * 1e12, fig("projection_mma_tflops") * 1e12
fit = lambda m, n, k: m in (128, 256, 512) and k in (4096, 8192) and n in (1024, 4096, 16384, 65536)
print(f"figures: floor {floor*1e6:.2f} us, read {R/1e12:.3f} TB/s, MMA {F/1e12:.0f} TF/s")
for run in ("proj_grid.csv", "proj_grid2.csv"):
    rows = list(csv.DictReader(open("results/h200/session11_projection/" + run)))
    sets = {"fit (24)": [], "others (156)": [], "all (180)": []}
    for r in rows:
        m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
        t = float(r["ms_flush"]) * 1e-3
        b, f = 2.0 * (m * k + k * n + m * n), 2.0 * m * n * k
        e = t / (floor + max(b / R, f / F)) - 1
        sets["fit (24)" if fit(m, n, k) else "others (156)"].append(e)
        sets["all (180)"].append(e)
    for name, es in sets.items():
        a = [abs(e) for e in es]
        print(f"{run:15s} {name:13s} median |err| {100*statistics.median(a):5.1f} %  worst {100*max(a):5.1f} %  "
              f"signed median {100*statistics.median(es):+5.1f} %")
