#!/usr/bin/env python3
"""Times implementations this project did not write on the rows of a cisa-sim result file, on the
card the file's kernels were measured on, and adds one column per implementation (issue 11).

    measure_impls.py RESULT.h5 [--impls cudnn,fa2,flex] [--rows measured|all] [--reps N]
                     [--dry-run-timer CONST_MS] [--no-kernel-check]

  cudnn  meas_ms_attention_dense_cudnn   dense attention, cuDNN SDPA through PyTorch: the timer and
                                         forms of analysis/measure_peers.py (imported, not copied)
  fa2    meas_ms_attention_dense_fa2     dense attention, FlashAttention-2 through PyTorch's flash
                                         SDPA backend (SDPBackend.FLASH_ATTENTION), the same forms
  flex   meas_ms_attention_cisa_flex     CISA attention with FlexAttention block-sparse
                                         (torch.compile) over the row's selections: per QShare
                                         group of G positions, K random pages among the N_e eligible
                                         (uniform, like cisa-sim's random inputs; all N_e where
                                         N_e <= K), the W window pages and the group's own partial
                                         page(s) under the causal mask; 16-token KV blocks

FlexAttention forms (every form that applies is timed, the fastest correct one kept):
  prefill  heads-in-rows  Q [B*Hkv, 1, P*r, d], rows (position, head): a group is one Q block of
                          G*r rows (needs G*r a multiple of 16, the smallest tile)
           enable_gqa     Q [B*Hkv, r, P, d]: a group is one Q block of G positions per head
                          (needs G a multiple of 16; the form kernels/bench/peers.py timed)
  decode   heads-in-rows  Q [B*Hkv, 1, r, d];   enable_gqa  Q [B*Hkv, r, 1, d] (flex decoding)
K/V are contiguous [B*Hkv, 1, L, d] BF16 (KV heads folded into the batch, so every block mask has
one head). Each form's output is checked against an FP32 reference for two groups of sequence 0
before it is timed. Rows that share a shape share one timing. Timing as measure_peers.py: warm-up,
256 MB L2 flush before each repetition, CUDA events, median.

Columns are written to /points (atomically, through h5_columns.add_columns) after each
implementation, so a later failure keeps the earlier columns. File attributes: impl_measurement
(one line per implementation: torch, cuDNN, GPU, date, forms, reps) and impl_forms_<impl> (the form
and every candidate per shape, or why a shape was not timed). --dry-run-timer gives every shape a
constant (for tests; torch is never imported). Exit codes: 0 ok, 2 bad input or no GPU / no torch
(the file is left unchanged when that is found before the first implementation's columns are
written), 1 internal error.
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    from h5_columns import add_columns, read_points
    import measure_peers as mp
except ImportError as e:
    sys.stderr.write(f"measure_impls.py: Python module missing for {sys.executable}: {e}\n"
                     "Install python3-numpy and python3-h5py (scripts/install-deps.sh).\n")
    sys.exit(2)

IMPLS = {
    # name: (column, SDPA backend or None for Flex, what it times)
    "cudnn": ("meas_ms_attention_dense_cudnn", "cudnn", "dense attention with cuDNN SDPA"),
    "fa2": ("meas_ms_attention_dense_fa2", "flash",
            "dense attention with FlashAttention-2 (PyTorch's flash SDPA backend)"),
    "flex": ("meas_ms_attention_cisa_flex", None,
             "CISA attention with FlexAttention block-sparse over random selections of the row's "
             "K, W and G"),
}
FLEX_COLUMNS = ["budget_chunks", "window_pages", "qshare_g", "chunk_tokens"]
FLEX_FORMS = ["heads-in-rows", "enable_gqa"]
CHECK_TOLERANCE = 2e-2  # ||out - ref|| / ||ref|| with BF16 inputs, FP32 reference
SINGLE_CALL_MS = 2000.0  # a call slower than this is timed once (warm-up excluded)


def log(msg: str) -> None:
    mp.log(msg)


class InputError(mp.InputError):
    pass


# ---------------------------------------------------------------------------------------------
# Flex shapes: the dense shape plus the selection parameters


class FlexShape(mp.Shape):
    """One CISA attention problem; decode has one position and no QShare group."""

    def __init__(self, phase, L, B, hq, hkv, d, P, K, W, G, c):
        super().__init__(phase, L, B, hq, hkv, d, P)
        self.K, self.W, self.c = K, W, c
        self.G = 1 if phase == "decode" else G

    def key(self):
        return super().key() + (self.K, self.W, self.G, self.c)

    def __str__(self):
        return super().__str__() + f" K={self.K} W={self.W} G={self.G} c={self.c}"

    @property
    def s(self):
        """Cached tokens before the first new position."""
        return self.L - self.P

    @property
    def groups(self):
        return self.P // self.G

    def forms(self):
        """The FlexAttention forms that can express this shape's Q blocks."""
        if self.phase == "decode":
            return list(FLEX_FORMS)
        out = []
        if (self.G * self.r) % 16 == 0:
            out.append(FLEX_FORMS[0])
        if self.G % 16 == 0:
            out.append(FLEX_FORMS[1])
        return out

    def why_not(self):
        why = super().why_not()
        if why:
            return why
        if min(self.K, self.G, self.c) <= 0 or self.W < 0:
            return "a non-positive K, G or chunk, or a negative W"
        if self.P % self.G:
            return (f"P {self.P} is not a multiple of G {self.G}: FlexAttention Q blocks are all "
                    "one size, so a short last QShare group has no block")
        if self.L % self.c:
            return f"context {self.L} is not a multiple of the {self.c}-token page"
        if not self.forms():
            return (f"G*r = {self.G * self.r} rows per QShare group: neither G*r nor G is a multiple "
                    "of 16, the smallest FlexAttention tile")
        return ""

    def visits(self):
        """(Q block, KV block) pairs of the heads-in-rows form, a size guard."""
        return self.B * self.hkv * self.groups * (self.K + self.W + 3)


def flex_shapes_of(cols, selected):
    out = {}
    for i in np.flatnonzero(selected):
        vals = []
        for c in mp.SHAPE_COLUMNS[1:] + FLEX_COLUMNS:
            v = float(cols[c][i])
            vals.append(int(v) if math.isfinite(v) else -1)
        s = FlexShape(str(cols["phase"][i]), *vals)
        out.setdefault(s.key(), (s, []))[1].append(int(i))
    order = sorted(out, key=lambda k: (out[k][0].B, out[k][0].hkv, out[k][0].L, out[k][0].d, k))
    return {k: out[k] for k in order}


# ---------------------------------------------------------------------------------------------
# Timers: measure(shape) -> (form, ms, notes); raise mp.Skip(reason)


class DryRunFlexTimer:
    def __init__(self, const_ms):
        self.const_ms = const_ms
        self.device = "no device (dry run)"
        self.provenance = (f"dry run, not a measurement: every shape given {const_ms:g} ms "
                           f"(--dry-run-timer); torch not imported; {mp.utc_now()}")

    def measure(self, shape):
        form = shape.forms()[0]
        return form, self.const_ms, [f"{form} {self.const_ms:g} ms (dry run)"]

    def close(self):
        pass


class FlexTimer(mp.CudnnTimer):
    """FlexAttention block-sparse through torch.compile, on the first CUDA device. Reuses the SDPA
    timer's device set-up, L2 flush and CUDA-event timing."""

    def __init__(self, reps, kernel_check=True):
        super().__init__(reps, kernel_check=kernel_check)
        torch = self.torch
        try:
            from torch.nn.attention.flex_attention import BlockMask, flex_attention
        except ImportError as e:
            raise InputError(f"torch {torch.__version__} has no FlexAttention "
                             "(torch.nn.attention.flex_attention; needs torch >= 2.5)") from e
        import torch._dynamo as dynamo
        torch.set_grad_enabled(False)  # inference: no logsumexp output, no autograd graph
        # one compiled graph per shape: lift the recompile limits so no shape falls back to eager
        for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                     "accumulated_recompile_limit"):
            if hasattr(dynamo.config, name):
                setattr(dynamo.config, name, 4096)
        self.BlockMask = BlockMask
        self.masks = {}
        self.flex = torch.compile(flex_attention, dynamic=False)
        self.no_q_blocks = "compute_q_blocks" in inspect.signature(BlockMask.from_kv_blocks).parameters
        self.provenance = (
            f"torch {torch.__version__}, triton {self._triton()}, {self.device}; FlexAttention "
            f"block-sparse (torch.compile(flex_attention, dynamic=False)), 16-token KV blocks, forms "
            f"{', '.join(FLEX_FORMS)} (fastest correct kept; checked against an FP32 reference, "
            f"tolerance {CHECK_TOLERANCE:g}); uniform random selections (torch.manual_seed per "
            f"shape); median of {reps} reps after {mp.WARMUP} warm-up calls, L2 flushed "
            f"({mp.FLUSH_BYTES >> 20} MB write) before each rep, CUDA events; {mp.utc_now()}")

    @staticmethod
    def _triton():
        try:
            import triton
            return triton.__version__
        except Exception:  # noqa: BLE001
            return "unknown"

    # ---- block mask

    def _selections(self, shape, first):
        """Full KV blocks per (sequence x KV head, group): [BH, n, cap] int32 ascending, and counts."""
        torch = self.torch
        BH, n, K, W = shape.B * shape.hkv, first.numel(), shape.K, shape.W
        n_e = torch.clamp(first - W, min=0)  # eligible pages per group (same for every sequence)
        win_lo = torch.clamp(first - W, min=0)
        cap = K + W
        out = torch.empty((BH, n, cap), dtype=torch.int32, device=self.dev)
        big = torch.iinfo(torch.int32).max
        nmax = max(int(n_e.max()), 1)
        chunk = max(1, (1 << 27) // max(1, n * nmax))
        j = torch.arange(nmax, device=self.dev)
        w = torch.arange(W, device=self.dev)
        win = win_lo[:, None] + w[None, :]  # [n, W]
        win = torch.where(win < first[:, None], win, torch.full_like(win, big))
        for b0 in range(0, BH, chunk):
            b1 = min(BH, b0 + chunk)
            u = torch.rand((b1 - b0, n, nmax), device=self.dev)
            u = torch.where(j[None, None, :] < n_e[None, :, None], u, torch.full_like(u, -1.0))
            kk = min(K, nmax)
            val, idx = torch.topk(u, kk, dim=-1, sorted=False)
            idx = torch.where(val >= 0, idx, torch.full_like(idx, big))
            both = torch.cat([idx, win[None].expand(b1 - b0, n, W)], dim=-1)
            both, _ = torch.sort(both, dim=-1)
            both = both[..., :cap]
            if both.shape[-1] < cap:
                pad = torch.full((b1 - b0, n, cap - both.shape[-1]), big, device=self.dev,
                                 dtype=both.dtype)
                both = torch.cat([both, pad], dim=-1)
            out[b0:b1] = both.to(torch.int32)
        count = (out != big).sum(dim=-1).to(torch.int32)
        out = torch.where(out != big, out, torch.zeros_like(out))
        return out, count

    def _block_mask(self, shape, form):
        """(BlockMask, mask description) for one form; Q block = one QShare group."""
        torch = self.torch
        c, G, r, s = shape.c, shape.G, shape.r, shape.s
        BH, n, nkv = shape.B * shape.hkv, shape.groups, shape.L // c
        g = torch.arange(n, device=self.dev)
        t0 = s + g * G
        first, last = t0 // c, (t0 + G - 1) // c
        full, full_num = self._selections(shape, first)
        full_idx = torch.zeros((BH, 1, n, nkv), dtype=torch.int32, device=self.dev)
        keep = min(full.shape[-1], nkv)  # entries past a row's count are 0 and unused
        full_idx[:, 0, :, :keep] = full[..., :keep]
        del full
        ntail = int((last - first).max()) + 1
        part = torch.zeros((n, nkv), dtype=torch.int32, device=self.dev)
        tails = first[:, None] + torch.arange(ntail, device=self.dev)[None, :]
        part[:, :ntail] = torch.minimum(tails, last[:, None]).to(torch.int32)
        part_num = (last - first + 1).to(torch.int32)
        part_idx = part[None, None].expand(BH, 1, n, nkv).contiguous()
        part_num = part_num[None, None].expand(BH, 1, n).contiguous()
        rows_per_pos = r if form == FLEX_FORMS[0] else 1
        q_len = shape.P * rows_per_pos
        q_block = G * rows_per_pos if shape.phase != "decode" else 16

        kw = {"compute_q_blocks": False} if self.no_q_blocks else {}
        bm = self.BlockMask.from_kv_blocks(part_num, part_idx, full_num[:, None], full_idx,
                                           BLOCK_SIZE=(q_block, c),
                                           mask_mod=self._causal(s, rows_per_pos),
                                           seq_lengths=(q_len, shape.L), **kw)
        return bm, q_block, (full_idx, full_num, part_idx, part_num)

    def _causal(self, s, rows_per_pos):
        """The causal mask_mod for new positions s.. (one function object per (s, rows), so shapes
        that differ only in K reuse the compiled graph)."""
        key = (s, rows_per_pos)
        if key not in self.masks:
            def causal(b, h, q_idx, kv_idx):
                return kv_idx <= s + q_idx // rows_per_pos
            self.masks[key] = causal
        return self.masks[key]

    def _kernel_options(self, shape, q_block):
        if shape.phase == "decode":
            cands = [{"BLOCK_N": 16}, {"BLOCK_M": 16, "BLOCK_N": 16},
                     {"BLOCK_M": 16, "BLOCK_N": 16, "num_stages": 2, "num_warps": 4}]
        else:
            cands = [{"BLOCK_M": m, "BLOCK_N": 16} for m in (min(q_block, 128), min(q_block, 64), 16)]
            cands.append({"BLOCK_M": 16, "BLOCK_N": 16, "num_stages": 2, "num_warps": 4})
        out = []
        for o in cands:
            if o not in out and q_block % o.get("BLOCK_M", 16) == 0:
                out.append(o)
        return out

    # ---- reference

    def _check(self, shape, form, q, k, v, out, tensors):
        """Worst ||out - ref|| / ||ref|| over groups 0 and n-1 of sequence 0, KV head 0."""
        torch = self.torch
        full_idx, full_num, part_idx, part_num = tensors
        c, G, r, s, d = shape.c, shape.G, shape.r, shape.s, shape.d
        worst = 0.0
        for g in sorted({0, shape.groups - 1}):
            pages = torch.cat([full_idx[0, 0, g, : int(full_num[0, g])],
                               part_idx[0, 0, g, : int(part_num[0, 0, g])]]).long()
            tok = (pages[:, None] * c + torch.arange(c, device=self.dev)[None, :]).reshape(-1)
            kk, vv = k[0, 0, tok].float(), v[0, 0, tok].float()
            pos = s + g * G + torch.arange(G, device=self.dev)  # [G]
            if form == FLEX_FORMS[0]:
                qq = q[0, 0, g * G * r:(g + 1) * G * r].float()  # rows (position, head)
                oo = out[0, 0, g * G * r:(g + 1) * G * r].float()
                rowpos = pos.repeat_interleave(r)
            else:
                qq = q[0, :, g * G:(g + 1) * G].float().transpose(0, 1).reshape(G * r, d)
                oo = out[0, :, g * G:(g + 1) * G].float().transpose(0, 1).reshape(G * r, d)
                rowpos = pos.repeat_interleave(r)
            sc = (qq @ kk.T) / math.sqrt(d)
            sc = sc.masked_fill(tok[None, :] > rowpos[:, None], float("-inf"))
            ref = torch.softmax(sc, dim=-1) @ vv
            err = float(torch.linalg.norm(oo - ref) / torch.linalg.norm(ref))
            worst = max(worst, err if math.isfinite(err) else float("inf"))
        return worst

    # ---- one shape

    def _alloc_kv(self, shape):
        torch = self.torch
        kv_key = (shape.B, shape.hkv, shape.L, shape.d)
        if kv_key == self.kv_key:
            return
        self._free_cache()
        need = shape.cache_bytes() + shape.query_bytes() + 4 * shape.B * shape.hkv * \
            shape.groups * (shape.L // shape.c) * 4 + (2 << 30)
        free, _ = torch.cuda.mem_get_info(self.dev)
        if need > free:
            raise mp.Skip(f"needs ~{need / 2**30:.1f} GiB, {free / 2**30:.1f} GiB free")
        torch.manual_seed(0)
        BH = shape.B * shape.hkv
        try:
            self.k = torch.randn(BH, 1, shape.L, shape.d, dtype=torch.bfloat16, device=self.dev)
            self.v = torch.randn_like(self.k)
        except Exception as e:  # noqa: BLE001
            self._free_cache()
            raise mp.Skip(f"allocation failed: {' '.join(str(e).split())[:160]}") from e
        self.kv_key = kv_key

    def measure(self, shape):
        torch = self.torch
        self._alloc_kv(shape)
        best, notes = None, []
        for form in shape.forms():
            try:
                res = self._one_form(shape, form, notes)
            except Exception as e:  # noqa: BLE001 - a form Flex refuses is expected
                notes.append(f"{form}: failed: {' '.join(str(e).split())[:200]}")
                try:
                    torch.cuda.synchronize()
                except Exception:  # noqa: BLE001
                    pass
                res = None
            torch.cuda.empty_cache()
            if res is not None and (best is None or res[1] < best[1]):
                best = res
        if best is None:
            raise mp.Skip("no FlexAttention form ran: " + "; ".join(notes))
        return best[0], best[1], notes

    def _one_form(self, shape, form, notes):
        torch = self.torch
        BH, r, P, d = shape.B * shape.hkv, shape.r, shape.P, shape.d
        torch.manual_seed(1 + shape.K + 7 * shape.G)
        bm, q_block, tensors = self._block_mask(shape, form)
        if form == FLEX_FORMS[0]:
            q = torch.randn(BH, 1, P * r, d, dtype=torch.bfloat16, device=self.dev)
            gqa = False
        else:
            q = torch.randn(BH, r, P, d, dtype=torch.bfloat16, device=self.dev)
            gqa = True
        k, v = self.k, self.v
        for opts in self._kernel_options(shape, q_block):
            t0 = time.time()
            try:
                out = self.flex(q, k, v, block_mask=bm, enable_gqa=gqa, kernel_options=opts)
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001
                notes.append(f"{form} {opts}: {' '.join(str(e).split())[:160]}")
                continue
            compile_s = time.time() - t0
            err = self._check(shape, form, q, k, v, out, tensors)
            del out
            if not err <= CHECK_TOLERANCE:
                notes.append(f"{form} {opts}: wrong output (relative error {err:.3g}), rejected")
                return None
            fn = lambda: self.flex(q, k, v, block_mask=bm, enable_gqa=gqa, kernel_options=opts)  # noqa: E731
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            self.flush.fill_(7)
            torch.cuda._sleep(mp.QUEUE_CYCLES)  # queued, as mp's timer
            a.record()
            fn()
            b.record()
            b.synchronize()
            once = a.elapsed_time(b)
            ms = once if once > SINGLE_CALL_MS else self._time(fn)
            reps = "1 call" if once > SINGLE_CALL_MS else f"median of {self.reps}"
            notes.append(f"{form} {ms:.4f} ms ({reps}; kernel_options {opts}; first call with "
                         f"compile {compile_s:.1f} s; check {err:.2g})")
            return form, ms
        return None


# ---------------------------------------------------------------------------------------------


def load(path, need_flex):
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    try:
        cols = read_points(path)
    except ValueError as e:
        raise InputError(str(e)) from e
    except OSError as e:
        raise InputError(f"{path}: not a readable HDF5 file ({e})") from e
    need = mp.SHAPE_COLUMNS + ["meas_ms_attention_dense"] + (FLEX_COLUMNS if need_flex else [])
    for c in need:
        if c not in cols:
            raise InputError(f"{path}: /points has no column '{c}' (needed: {', '.join(need)})")
    if cols["phase"].dtype != object:
        raise InputError(f"{path}: /points/phase is not a text column")
    for c in need[1:]:
        if cols[c].dtype.kind not in "fiu" or cols[c].ndim != 1:
            raise InputError(f"{path}: /points/{c} is not a 1-D numeric column")
    return cols


def make_timer(impl, a):
    if a.dry_run_timer is not None:
        return (mp.DryRunTimer if impl != "flex" else DryRunFlexTimer)(a.dry_run_timer)
    if impl == "flex":
        return FlexTimer(a.reps, kernel_check=not a.no_kernel_check)
    return mp.CudnnTimer(a.reps, kernel_check=not a.no_kernel_check, backend=IMPLS[impl][1])


def time_shapes(impl, timer, shapes, n):
    """(values per row, lines per shape, table rows)."""
    vals = np.full(n, np.nan)
    lines, table = [], []
    todo = [s for s, _ in shapes.values() if not s.why_not()]
    t0, done = time.time(), 0
    for s, rows in shapes.values():
        why = s.why_not()
        if why:
            lines.append(f"{s}: not timed: {why}")
            table.append((s, len(rows), "not timed", math.nan))
            continue
        done += 1
        try:
            form, ms, notes = timer.measure(s)
        except mp.Skip as e:
            lines.append(f"{s}: skipped: {e}")
            table.append((s, len(rows), "skipped", math.nan))
            log(f"[{impl} {done}/{len(todo)}] {s}: skipped: {e}")
            continue
        vals[rows] = ms
        lines.append(f"{s} -> {form} {ms:.4f} ms (candidates: {'; '.join(notes)})")
        table.append((s, len(rows), form, ms))
        el = time.time() - t0
        log(f"[{impl} {done}/{len(todo)}] {s}: {form} {ms:.4f} ms ({el:.0f} s elapsed, "
            f"ETA {el / done * (len(todo) - done):.0f} s)")
    return vals, lines, table


def merged_provenance(path, impl, text):
    """impl_measurement with this implementation's line replaced (others kept)."""
    import h5py
    old = ""
    with h5py.File(path, "r") as f:
        if "impl_measurement" in f.attrs:
            v = f.attrs["impl_measurement"]
            old = v.decode("utf-8") if isinstance(v, bytes) else str(v)
    keep = [ln for ln in old.splitlines() if ln and not ln.startswith(f"{impl}: ")]
    return "\n".join(sorted(keep + [f"{impl}: {text}"]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result", help="cisa-sim result file (.h5); columns are added in place")
    ap.add_argument("--impls", default="cudnn,fa2,flex",
                    help="comma-separated subset of cudnn, fa2, flex (default: all, in that order)")
    ap.add_argument("--rows", choices=["measured", "all"], default="measured",
                    help="measured (default): rows with a finite meas_ms_attention_dense; all: every row")
    ap.add_argument("--reps", type=int, default=5, help="timed repetitions per form (median; default 5)")
    ap.add_argument("--dry-run-timer", type=float, metavar="CONST_MS",
                    help="no GPU: every shape 'takes' CONST_MS (tests); torch is not imported")
    ap.add_argument("--no-kernel-check", action="store_true",
                    help="accept an SDPA form without checking (torch.profiler) which backend ran")
    a = ap.parse_args(argv)
    impls = [x.strip() for x in a.impls.split(",") if x.strip()]
    bad = [x for x in impls if x not in IMPLS]
    if bad or not impls or len(set(impls)) != len(impls):
        ap.error(f"--impls: expected a comma-separated subset of {', '.join(IMPLS)}; got '{a.impls}'")
    if a.reps < 1:
        ap.error("--reps must be >= 1")
    if a.dry_run_timer is not None and not (math.isfinite(a.dry_run_timer) and a.dry_run_timer > 0):
        ap.error("--dry-run-timer must be a positive number of ms")

    try:
        cols = load(a.result, "flex" in impls)
    except InputError as e:
        log(f"measure_impls.py: error: {e}")
        return 2
    n = len(cols["phase"])
    selected = np.isfinite(cols["meas_ms_attention_dense"]) if a.rows == "measured" else np.ones(n, bool)
    print(f"{int(selected.sum())} selected rows (--rows {a.rows}) of {n} in {a.result}; "
          f"implementations: {', '.join(impls)}")
    dry = a.dry_run_timer is not None
    for impl in impls:
        column, _, what = IMPLS[impl]
        shapes = flex_shapes_of(cols, selected) if impl == "flex" else mp.shapes_of(cols, selected)
        try:
            timer = make_timer(impl, a)
        except mp.InputError as e:
            log(f"measure_impls.py: error: {e}")
            return 2
        log(f"measure_impls.py: {impl}: {len(shapes)} distinct shapes; {timer.provenance}")
        try:
            vals, lines, table = time_shapes(impl, timer, shapes, n)
        finally:
            timer.close()
        desc = (f"{'DRY RUN, not a measurement (constant from --dry-run-timer)' if dry else what}"
                f"{'' if dry else f', measured on {timer.device} by analysis/measure_impls.py'}; "
                f"fastest form per shape in the impl_forms_{impl} attribute (versions, date, reps in "
                f"impl_measurement); "
                + ("contiguous BF16 K/V cache of L tokens per sequence; "
                   if impl != "flex" else "contiguous BF16 K/V, 16-token KV blocks; ")
                + f"NaN: row not selected (--rows {a.rows}) or shape not timed (reason in "
                  f"impl_forms_{impl})")
        attrs = {"impl_measurement": merged_provenance(a.result, impl, timer.provenance
                                                       + f"; rows {a.rows}; analysis/measure_impls.py"),
                 f"impl_forms_{impl}": "\n".join(lines) if lines else "no rows selected"}
        try:
            add_columns(a.result, {column: (vals, "ms", desc)}, attrs)
        except OSError as e:
            log(f"measure_impls.py: error: {a.result}: cannot write ({e})")
            return 2
        timed = sum(1 for t in table if math.isfinite(t[3]))
        print(f"\n{impl}: {timed} of {len(table)} shapes timed -> {column}" + (" (DRY RUN)" if dry else ""))
        print("| shape | rows | form | ms |\n|---|---:|---|---:|")
        for s, nrows, form, ms in table:
            print(f"| {s} | {nrows} | {form} | {ms:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
