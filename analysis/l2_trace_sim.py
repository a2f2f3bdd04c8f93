#!/usr/bin/env python3
"""DRAM bytes of CISA prefill attention from a trace of its page reads through an LRU cache.

    l2_trace_sim.py --ctas DIR --result RUN.h5 [--ncu COUNTED.h5] [--points 4,6]
                    [--capacity-mb 24,32,40,50] [--policy random|lru]
                    [--schedule measured|recorded|shuffled|waves|convoy|closed]
                    [--tool l2_reuse]
                    [--seed N] [--markdown]

Rebuilds every CTA's page list and the time it reads each page, then counts the misses of a fully
associative cache of each capacity over the whole launch (the `l2_reuse` tool, built with the
project), evicting a random line (`--policy random`, the default) or the least recently used one. The question (NOTES "Session 24"): is the model's CISA byte over-count at 0.5-1M tokens
(the measured kernel reads 1.1-3.7x fewer DRAM bytes than priced, NOTES "Session 22") explained by
the order in which the CTAs walk their pages and an L2 of some effective size?

Inputs:
- DIR holds the CTA progress record of a measured run (`point_<i>_attn_ctas.csv[.gz]`:
  cta, sm, work, tiles, then ns to the CTA's start, 1/4, 1/2, 3/4 of its tiles and its end;
  `CISA_MEASURE_CTA_TIMES`), RUN.h5 that run's file (the geometry of each point), COUNTED.h5 a
  file with Nsight Compute's counted DRAM bytes (`ncu_dram_read_bytes_attention_cisa`, from
  analysis/ncu_points.py; RUN.h5 itself when it has them).
- Works are planned stream by stream ((sequence, KV head)), then QShare group, then row tile; the
  CTAs of one work (the tail split) take consecutive pieces of its tile list in CTA order.
- A group at position t0 selects K of its N_e = t0 / chunk - W eligible pages uniformly at random
  (the measured runs' random inputs; planted selections are not modelled), sorted, then reads its
  W window pages and the page holding t0. A KV tile is 64 tokens (128 for 128-row tiles, the
  warp-specialised kernel); a CTA reads its tiles at times
  interpolated linearly between its five recorded marks. A page (K and V of one chunk of one KV
  head) is one cache line of the simulation.
- `--schedule recorded` keeps each CTA's recorded duration but dispatches the CTAs in order to as
  many slots as the record had CTAs at once, each reading at a constant pace (no drift inside a
  CTA); `--schedule shuffled` draws each CTA's per-tile time independently (lognormal, the spread
  of the record's per-tile times); `--schedule waves` takes equal per-tile times (the record's
  median): perfect lockstep. `--schedule convoy` (with --visit-ns-sm, --read-tbs, --jitter) uses
  none of the record's times: the prototype rule of `convoy_schedule`. `--schedule closed` (same
  figures, with --cta-spread and --dram-share) makes the schedule from the misses
  (closed_loop_schedule.hpp through `l2_reuse --closed`): each tile takes max(visit time, its missed
  pages at the CTA's share of the read rate); it also prints the simulated launch time beside the
  record's.

Prints per point the CTAs, page reads, counted and model GB, and the simulated GB over counted for
each capacity; then per capacity the median and range of that ratio. The Q, O and block-table bytes
are in the counted bytes, not in the simulation: a few per cent at these shapes.
Exit codes: 0 ok, 2 bad input.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import heapq
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy as np

    import ncu_page_reads  # the /points reader (h5py)
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"l2_trace_sim.py: Python module missing for {sys.executable}: {e}\n")
    sys.exit(2)

GEOMETRY = ("context_tokens", "batch", "prefill_tokens", "budget_chunks", "qshare_g", "kv_heads", "q_heads",
            "head_dim", "window_pages", "tile_rows_cisa", "chunk_tokens", "phase")
MARKS = ("start_ns", "q1_ns", "q2_ns", "q3_ns", "end_ns")
QUARTERS = np.array([0.0, 0.25, 0.5, 0.75, 1.0])  # where a CTA's five marks fall in its tiles


def kv_tile_tokens(tile_rows: float) -> int:
    """Tokens of one recorded KV tile: 64, or 128 in the warp-specialised kernel that runs the
    128-row tiles on Hopper (kernels/src/attention.cu, kWsTile)."""
    return 128 if tile_rows > 64 else 64


def fail(msg: str) -> None:
    sys.stderr.write(f"l2_trace_sim.py: {msg}\n")
    sys.exit(2)


def text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def read_columns(path: str, names, optional=()) -> dict:
    return ncu_page_reads.read_columns(path, names, optional, on_error=fail)


def read_record(directory: str, point: int):
    for name in (f"point_{point}_attn_ctas.csv.gz", f"point_{point}_attn_ctas.csv"):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rt") as f:
                rows = list(csv.DictReader(f))
            break
    else:
        return None
    if not rows or any(k not in rows[0] for k in ("work", "tiles") + MARKS):
        fail(f"{path}: not a CTA progress record (needs work, tiles, {', '.join(MARKS)})")
    work = np.array([int(r["work"]) for r in rows])
    tiles = np.array([int(r["tiles"]) for r in rows])
    marks = np.array([[float(r[k]) for k in MARKS] for r in rows])
    if (marks < 0).any():
        fail(f"{path}: a CTA did not reach all its marks (-1); was the launch cut short?")
    return work, tiles, marks


def max_concurrent(marks) -> int:
    events = sorted([(t, 1) for t in marks[:, 0]] + [(t, -1) for t in marks[:, 4]])
    now = most = 0
    for _, e in events:
        now += e
        most = max(most, now)
    return most


class PointShape:
    """What every rule reads of point i: its value of a column (`v`), the page bytes (K and V of one
    chunk, BF16), the pages a recorded KV tile reads, and the stream (sequence, KV head) of every
    CTA's work (works are planned stream by stream)."""

    def __init__(self, geo: dict, i: int, work):
        self.geo, self.i = geo, i
        self.chunk = int(self.v("chunk_tokens"))
        self.page_bytes = self.chunk * 2 * self.v("head_dim") * 2
        self.pages_per_tile = max(1, kv_tile_tokens(self.v("tile_rows_cisa")) // self.chunk)
        self.streams = int(self.v("batch") * self.v("kv_heads"))
        self.per_stream = (int(work.max()) + 1) // self.streams
        if self.per_stream < 1:
            fail(f"point {i}: {int(work.max()) + 1} works for {self.streams} streams")
        self.stream = work // self.per_stream

    def v(self, column: str) -> float:
        return float(self.geo[column][self.i])

    def pick_probability(self, result: str) -> float:
        """K / N_e of the point's mean eligible pages (the window's taken off)."""
        if "eligible_chunks_mean" not in self.geo:
            fail(f"{result}: /points lacks eligible_chunks_mean (the convoy rule and --union-eps need it)")
        ne = self.v("eligible_chunks_mean") - self.v("window_pages")
        return min(1.0, self.v("budget_chunks") / ne) if ne > 0 else 1.0


def dispatched_schedule(tiles, marks, durations: str, rng):
    """CTAs dispatched in CTA order to as many slots as the record had CTAs at once, each progressing
    linearly: durations "waves" = equal per-tile times (the record's median), "recorded" = each
    CTA's own recorded duration, "shuffled" = per-tile times drawn independently (lognormal) with
    the spread the record's per-tile times have."""
    per = (marks[:, 4] - marks[:, 0]) / np.maximum(tiles, 1)
    per_tile = float(np.median(per))
    cv = float(np.std(per) / np.mean(per)) if np.mean(per) > 0 else 0.0
    free = [0.0] * max_concurrent(marks)
    out = np.zeros_like(marks)
    for c, n in enumerate(tiles):
        s = heapq.heappop(free)
        d = (marks[c, 4] - marks[c, 0] if durations == "recorded"
             else per_tile * n * (float(np.exp(rng.normal(0.0, cv))) if durations == "shuffled" else 1.0))
        out[c] = s + QUARTERS * d
        heapq.heappush(free, s + d)
    return out


def convoy_schedule(geo: dict, i: int, work, tiles, marks, a, rng):
    """The rule a byte model could follow (a prototype, NOTES "Session 24"): CTAs dispatched in order
    to the record's number of slots; the CTAs of one stream dispatched at one instant form a convoy
    whose members read at one pace, per KV tile max(visit time, the convoy's DRAM time), where the
    visit time is a tile's pages x visit ns*SM (of the point's tile class) x slots / SMs and the DRAM
    time is the member's share of the union of the convoy's picks (a tile's pages x page bytes x
    (1 - (1 - p)^n) / (n p)) at an equal share
    of the read rate (read rate / slots); each duration then scaled by 1 + jitter x N(0, 1)."""
    pt = PointShape(geo, i, work)
    p = pt.pick_probability(a.result)
    slots = max_concurrent(marks)
    rows = pt.v("tile_rows_cisa")
    cls = 0 if rows <= 16 else 1 if rows <= 32 else 2 if rows <= 64 else 3
    visit = pt.pages_per_tile * a.visit_ns_sm[cls] * 1e-9 * slots / a.sms

    def pace(n: int) -> float:
        union = (1 - (1 - p) ** n) / (n * p)
        return max(visit, pt.pages_per_tile * pt.page_bytes * union * slots / (a.read_tbs * 1e12))

    free = [0.0] * slots
    out = np.zeros_like(marks)
    c = 0
    while c < len(tiles):
        t0 = heapq.heappop(free)
        n_free = 1
        while free and free[0] - t0 <= 1e-12:
            heapq.heappop(free)
            n_free += 1
        ids = np.arange(c, min(len(tiles), c + n_free))
        c += len(ids)
        for s in np.unique(pt.stream[ids]):
            members = ids[pt.stream[ids] == s]
            per_tile = pace(len(members))
            for j in members:
                d = per_tile * tiles[j] * max(0.0, 1 + a.jitter * float(rng.standard_normal()))
                out[j] = t0 + QUARTERS * d
                heapq.heappush(free, t0 + d)
        for _ in range(n_free - len(ids)):
            heapq.heappush(free, math.inf)  # the launch's last CTAs are out: no more dispatch
    return out


def start_group_union_bytes(geo: dict, i: int, work, tiles, marks, eps: float, result: str) -> float:
    """The analytic end of the picture (no cache): CTAs of a stream that start within eps of the
    median CTA duration of one another read the union of their picks once, N_e (1 - (1 - p)^m)
    pages plus the window and tail (m counts a split piece by its share of the list)."""
    pt = PointShape(geo, i, work)
    p = pt.pick_probability(result)
    k, w = pt.v("budget_chunks"), pt.v("window_pages")
    ne = pt.v("eligible_chunks_mean") - w
    gap = eps * float(np.median(marks[:, 4] - marks[:, 0]))
    share = tiles * pt.pages_per_tile / (k + w + 1)
    total = 0.0
    for s in range(pt.streams):
        idx = np.where(pt.stream == s)[0]
        idx = idx[np.argsort(marks[idx, 0], kind="stable")]
        j = 0
        while j < len(idx):
            e = j
            while e + 1 < len(idx) and marks[idx[e + 1], 0] - marks[idx[j], 0] < gap:
                e += 1
            m = float(share[idx[j:e + 1]].sum())
            total += (ne * (1 - (1 - p) ** m) + w + 1) * pt.page_bytes
            j = e + 1
    return total


def cta_lists(geo: dict, i: int, work, tiles, rng):
    """Every CTA's page ids (stream-unique) in reading order, and the point's shape."""
    pt = PointShape(geo, i, work)
    L, P, K, G, W = (int(pt.v(c)) for c in ("context_tokens", "prefill_tokens", "budget_chunks", "qshare_g",
                                             "window_pages"))
    r = pt.v("q_heads") / pt.v("kv_heads")
    tiles_per_group = max(1, math.ceil(G * r / pt.v("tile_rows_cisa")))
    lists, done, out = {}, {}, []
    for c in range(len(work)):
        w = int(work[c])
        stream, group = w // pt.per_stream, (w % pt.per_stream) // tiles_per_group
        key = (stream, group)
        if key not in lists:
            t0 = L - P + group * G
            ne = max(0, t0 // pt.chunk - W)
            chosen = np.sort(rng.choice(ne, K, replace=False)) if ne > K else np.arange(ne)
            lists[key] = np.concatenate([chosen, np.arange(ne, ne + W + 1)])
        first = done.get(w, 0) * pt.pages_per_tile
        seg = lists[key][first:first + int(tiles[c]) * pt.pages_per_tile]
        done[w] = done.get(w, 0) + int(tiles[c])
        out.append(seg.astype(np.int64) + stream * (1 << 24))
    return out, pt


def page_trace(geo: dict, i: int, work, tiles, marks, rng):
    """Page ids of the launch in time order, and the bytes of a page."""
    segs, pt = cta_lists(geo, i, work, tiles, rng)
    times, pages = [], []
    for c, seg in enumerate(segs):
        if len(seg) == 0:
            continue
        frac = np.arange(len(seg)) / len(seg)
        times.append(np.interp(frac, QUARTERS, marks[c]))
        pages.append(seg)
    t = np.concatenate(times)
    p = np.concatenate(pages)[np.argsort(t, kind="stable")]
    _, ids = np.unique(p, return_inverse=True)
    return ids.astype(np.uint32), pt.page_bytes


def tile_class(rows: float) -> int:
    return 0 if rows <= 16 else 1 if rows <= 32 else 2 if rows <= 64 else 3


def closed_loop(tool: str, geo: dict, i: int, work, tiles, marks, a, capacities, tmp: str):
    """The closed-loop schedule (`l2_reuse --closed`, closed_loop_schedule.hpp) of point i at each
    capacity: CTAs dispatched in order to the record's number of slots, each tile taking max(visit
    time, its missed pages at read rate / resident CTAs, or / the CTAs missing now) with the misses
    of one random-eviction cache; tile times scaled by 1 + jitter x N(0, 1), CTA paces by 1 +
    cta_spread x N(0, 1). Returns the page reads and, per capacity, (missed bytes, simulated launch
    time, s)."""
    segs, pt = cta_lists(geo, i, work, tiles, np.random.default_rng(a.seed))
    allp = np.concatenate(segs)
    _, inv = np.unique(allp, return_inverse=True)
    buf, at = [np.array([len(segs)], dtype="<u4")], 0
    for seg in segs:
        buf.append(np.array([len(seg)], dtype="<u4"))
        buf.append(inv[at:at + len(seg)].astype("<u4"))
        at += len(seg)
    path = os.path.join(tmp, "lists.u32")
    np.concatenate(buf).tofile(path)
    slots = max_concurrent(marks)
    visit = pt.pages_per_tile * a.visit_ns_sm[tile_class(pt.v("tile_rows_cisa"))] * 1e-9 * slots / a.sms
    page_read = pt.page_bytes / (a.read_tbs * 1e12)
    res, reads = [], 0
    for cap in capacities:
        out = subprocess.run([tool, "--closed", path, str(slots), str(pt.pages_per_tile), str(cap), repr(visit),
                              repr(page_read), repr(a.jitter), repr(a.cta_spread), a.dram_share], capture_output=True, text=True)
        if out.returncode != 0:
            fail(f"{tool} --closed: exit {out.returncode}: {out.stderr.strip()}")
        n_reads, misses, span = out.stdout.split()
        reads = int(n_reads)
        res.append((int(misses) * pt.page_bytes, float(span)))
    return reads, res


def cache_misses(tool: str, policy: str, ids, capacities, tmp: str):
    path = os.path.join(tmp, "trace.u32")
    ids.astype("<u4").tofile(path)
    flag = ["--random"] if policy == "random" else []
    out = subprocess.run([tool, *flag, path, *map(str, capacities)], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"{tool}: exit {out.returncode}: {out.stderr.strip()}")
    return [int(line.split()[1]) for line in out.stdout.split("\n") if line.strip()]


def find_tool(given: str | None) -> str:
    if given:
        return given
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in ("build/release/l2_reuse", "build/debug/l2_reuse", "build/l2_reuse"):
        p = os.path.join(here, "..", cand)
        if os.path.exists(p):
            return p
    found = shutil.which("l2_reuse")
    if not found:
        fail("l2_reuse not found: build the project (cmake --build build/release) or pass --tool")
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ctas", required=True, help="directory of point_<i>_attn_ctas.csv[.gz]")
    ap.add_argument("--result", required=True, help="the measured run's .h5 (geometry)")
    ap.add_argument("--ncu", help=".h5 with ncu_dram_read_bytes_attention_cisa (default: --result)")
    ap.add_argument("--points", help="comma-separated point indices (default: every recorded prefill point)")
    ap.add_argument("--capacity-mb", default="24,32,40,50", help="cache capacities, MB (1e6 B)")
    ap.add_argument("--policy", choices=("random", "lru"), default="random", help="the line evicted")
    ap.add_argument("--schedule", choices=("measured", "recorded", "shuffled", "waves", "convoy", "closed"), default="measured",
                    help="the record's marks; its durations dispatched in order; independent ones of the "
                         "same spread; equal ones; the convoy rule; the closed loop (closed_loop_schedule.hpp)")
    ap.add_argument("--visit-ns-sm", help="convoy: page visit cost, ns x SM, of 16-, 32-, 64- and 128-row "
                                          "tiles (calibrate's attention.page_visit_ns), comma-separated")
    ap.add_argument("--read-tbs", type=float, help="convoy: the card's page-gather read rate, TB/s")
    ap.add_argument("--sms", type=int, default=132, help="convoy: the card's SMs")
    ap.add_argument("--jitter", type=float, default=0.0, help="convoy: relative spread of a CTA's duration")
    ap.add_argument("--cta-spread", type=float, default=0.0,
                    help="closed: relative spread of a CTA's pace (one normal factor per CTA)")
    ap.add_argument("--dram-share", choices=("resident", "missing"), default="resident",
                    help="closed: a missed page's time at read rate / the resident CTAs or / the CTAs missing now")
    ap.add_argument("--union-eps", type=float,
                    help="also print the start-group union bytes (groups: starts within this share of "
                         "the median CTA duration), a column 'union / ncu'")
    ap.add_argument("--tool", help="the l2_reuse binary (default: build/release/l2_reuse)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args(argv)
    try:
        caps_mb = [float(x) for x in a.capacity_mb.split(",")]
    except ValueError:
        fail(f"--capacity-mb {a.capacity_mb!r}: not a comma-separated list of numbers")
    if not caps_mb or min(caps_mb) <= 0:
        fail("--capacity-mb: capacities must be positive")
    if a.schedule in ("convoy", "closed"):
        try:
            a.visit_ns_sm = [float(x) for x in (a.visit_ns_sm or "").split(",")]
        except ValueError:
            a.visit_ns_sm = []
        if len(a.visit_ns_sm) != 4 or min(a.visit_ns_sm) <= 0 or not (a.read_tbs and a.read_tbs > 0):
            fail(f"--schedule {a.schedule} needs --visit-ns-sm A,B,C,D (4 positive numbers) and a positive --read-tbs")
    if a.union_eps is not None and a.union_eps < 0:
        fail("--union-eps must be >= 0")
    if a.jitter < 0 or a.cta_spread < 0 or a.sms < 1:
        fail("--jitter and --cta-spread must be >= 0 and --sms >= 1")
    if not os.path.isdir(a.ctas):
        fail(f"--ctas {a.ctas}: not a directory")
    geo = read_columns(a.result, GEOMETRY,
                       optional=("pred_dram_bytes_attention_cisa", "ncu_dram_read_bytes_attention_cisa",
                                 "eligible_chunks_mean"))
    counted = read_columns(a.ncu, (), optional=("ncu_dram_read_bytes_attention_cisa",)) if a.ncu else geo
    ncu = counted.get("ncu_dram_read_bytes_attention_cisa")
    n_points = len(geo["phase"])
    if a.points:
        try:
            points = [int(x) for x in a.points.split(",")]
        except ValueError:
            fail(f"--points {a.points!r}: not a comma-separated list of integers")
        bad = [p for p in points if not 0 <= p < n_points]
        if bad:
            fail(f"--points: {bad} not in {a.result} (0..{n_points - 1})")
    else:
        points = list(range(n_points))
    tool = find_tool(a.tool)
    rng = np.random.default_rng(a.seed)
    head = ["point", "CTAs", "reads M", "ncu GB", "model GB"] + [f"{c:g} MB / ncu" for c in caps_mb]
    if a.union_eps is not None:
        head.append("union / ncu")
    if a.schedule == "closed":
        head += ["record us"] + [f"{c:g} MB us" for c in caps_mb]
    rows, ratios, unions, union_ratios = [], {c: [] for c in caps_mb}, [], []
    tmp = tempfile.mkdtemp(prefix="cisa_l2_trace_")
    try:
        for i in points:
            if text(geo["phase"][i]) != "terminal_prefill":
                continue
            rec = read_record(a.ctas, i)
            if rec is None:
                if a.points:
                    fail(f"{a.ctas}: no CTA record of point {i}")
                continue
            work, tiles, marks = rec
            if a.schedule == "convoy":
                marks = convoy_schedule(geo, i, work, tiles, marks, a, rng)
            elif a.schedule != "measured":
                marks = dispatched_schedule(tiles, marks, a.schedule, rng)
            if a.union_eps is not None:
                u_gb = start_group_union_bytes(geo, i, work, tiles, marks, a.union_eps, a.result) / 1e9
                unions.append(u_gb)
            if a.schedule == "closed":
                page_bytes = PointShape(geo, i, work).page_bytes
                caps = [max(1, int(c * 1e6 / page_bytes)) for c in caps_mb]
                n_reads, cl = closed_loop(tool, geo, i, work, tiles, marks, a, caps, tmp)
                sim_gb = [b / 1e9 for b, _ in cl]
            else:
                ids, page_bytes = page_trace(geo, i, work, tiles, marks, rng)
                n_reads = len(ids)
                caps = [max(1, int(c * 1e6 / page_bytes)) for c in caps_mb]
                sim_gb = [m * page_bytes / 1e9 for m in cache_misses(tool, a.policy, ids, caps, tmp)]
            n_gb = float(ncu[i]) / 1e9 if ncu is not None and i < len(ncu) and math.isfinite(ncu[i]) else math.nan
            model = geo.get("pred_dram_bytes_attention_cisa")
            m_gb = float(model[i]) / 1e9 if model is not None else math.nan
            cells = [str(i), str(len(work)), f"{n_reads / 1e6:.1f}", f"{n_gb:.2f}", f"{m_gb:.2f}"]
            for c, s in zip(caps_mb, sim_gb):
                cells.append(f"{s / n_gb:.2f}" if math.isfinite(n_gb) else f"{s:.2f} GB")
                if math.isfinite(n_gb):
                    ratios[c].append(s / n_gb)
            if a.union_eps is not None:
                cells.append(f"{unions[-1] / n_gb:.2f}" if math.isfinite(n_gb) else f"{unions[-1]:.2f} GB")
                if math.isfinite(n_gb):
                    union_ratios.append(unions[-1] / n_gb)
            if a.schedule == "closed":
                cells.append(f"{(marks[:, 4].max() - marks[:, 0].min()) / 1e3:.0f}")
                cells += [f"{span * 1e6:.0f}" for _, span in cl]
            rows.append(cells)
            print(f"point {i}: {n_reads / 1e6:.1f}M page reads simulated", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not rows:
        print("no recorded prefill point")
        return 0
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(h), *(len(r[j]) for r in rows)) for j, h in enumerate(head)]
        print("  ".join(h.rjust(w[j]) for j, h in enumerate(head)))
        for r in rows:
            print("  ".join(c.rjust(w[j]) for j, c in enumerate(r)))
    for c in caps_mb:
        if ratios[c]:
            x = np.array(ratios[c])
            print(f"{c:g} MB ({a.policy}, {a.schedule} schedule): simulated / counted median {np.median(x):.2f}, "
                  f"range {x.min():.2f}-{x.max():.2f} over {len(x)} points")
    if union_ratios:
        x = np.array(union_ratios)
        print(f"start-group union (eps {a.union_eps:g}, {a.schedule} schedule): / counted median {np.median(x):.2f}, "
              f"range {x.min():.2f}-{x.max():.2f} over {len(x)} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
