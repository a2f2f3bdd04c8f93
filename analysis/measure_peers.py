#!/usr/bin/env python3
"""Measures the dense cuDNN SDPA peer for the rows of a cisa-sim result file and adds the columns.

    measure_peers.py RESULT.h5 [--rows all|measured] [--reps N] [--dry-run-timer CONST_MS]
                     [--no-kernel-check]

For each distinct dense shape (phase, context L, batch B, q_heads, kv_heads, head_dim, new
positions P) of the selected rows, PyTorch's scaled_dot_product_attention is timed with the cuDNN
backend only, over a contiguous BF16 K/V cache of L tokens per sequence (the peer gets the easier
unpaged layout; cisa-sim's own dense and CISA kernels read a paged cache). Every SDPA form that
kernels/bench/peers.py found competitive is timed and the fastest that runs a cuDNN kernel is kept:

  terminal_prefill  the last P positions attend to the L tokens, causal, bottom-right aligned
    gqa-folded non-causal          Q [B, Hkv, r*P, d]: heads of a group folded into the query
                                   length, no mask; also computes the P(P-1)/2 masked scores per
                                   head (the FLOP share is recorded per shape)
    causal_lower_right enable_gqa  exact; runs only where the cuDNN backend accepts the mask
    enable_gqa non-causal          Q [B, Hq, P, d], no mask (same extra share as folded)
  decode            one position attends to the L tokens (exact in both forms)
    gqa-folded                     Q [B, Hkv, r, d]
    enable_gqa                     Q [B, Hq, 1, d]

full_prefill and mtp rows get NaN (reason in the peer_forms attribute). Timing as in
kernels/bench/peers.py: warm-up, 256 MB L2 flush before each repetition, CUDA events, median.

Adds to /points (atomically, through h5_columns.add_columns): meas_ms_attention_dense_peer,
meas_speedup_attention_vs_peer, meas_speedup_busy_vs_peer, err_attention_dense_peer; file
attributes peer_measurement and peer_forms. --dry-run-timer replaces every timing with a constant
(for tests; never imports torch). Exit codes: 0 ok, 2 bad input or no GPU / no torch (the file is
left unchanged), 1 internal error.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    from h5_columns import add_columns, read_points
except ImportError as e:
    sys.stderr.write(f"measure_peers.py: Python module missing for {sys.executable}: {e}\n"
                     "Install python3-numpy and python3-h5py (scripts/install-deps.sh).\n")
    sys.exit(2)

SHAPE_COLUMNS = ["phase", "context_tokens", "batch", "q_heads", "kv_heads", "head_dim", "prefill_tokens"]
VALUE_COLUMNS = ["meas_ms_attention_dense", "meas_ms_attention_cisa", "meas_ms_busy_cisa",
                 "pred_ms_attention_dense"]

PREFILL_FORMS = ["gqa-folded non-causal", "causal_lower_right enable_gqa", "enable_gqa non-causal"]
DECODE_FORMS = ["gqa-folded", "enable_gqa"]
NOT_TIMED = {
    "full_prefill": "full_prefill is not measured by cisa-sim's kernels either; the peer is timed "
                    "for terminal_prefill and decode only",
    "mtp": "mtp (several draft positions per step) has no peer form here; the peer is timed for "
           "terminal_prefill and decode only",
}
# kernel-name fragments of the FlashAttention and memory-efficient SDPA backends
OTHER_BACKEND_KERNELS = ("flash_fwd", "fmha_cutlass", "efficient_attention", "mem_eff")
# SDPA backends a timer can pin: name -> (SDPBackend member, label, fragments of its kernel names,
# fragments of the kernels of the backends it must not fall back to)
SDPA_BACKENDS = {
    "cudnn": ("CUDNN_ATTENTION", "cuDNN", ("cudnn",), OTHER_BACKEND_KERNELS),
    "flash": ("FLASH_ATTENTION", "FlashAttention-2", ("flash",),
              ("cudnn", "fmha_cutlass", "efficient_attention", "mem_eff")),
}
FLUSH_BYTES = 256 << 20
WARMUP = 3
# After the flush, a spin kernel of about 1 ms (torch.cuda._sleep, in GPU cycles at ~2 GHz), so
# the call is submitted before the GPU reaches it and its events hold GPU time, not the host's
# dispatch (as this project's measure path since session 12; results/h200/session12_other).
QUEUE_CYCLES = 2_000_000


class InputError(Exception):
    """Bad input or a missing dependency: exit code 2, the file is not touched."""


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def log(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


# ---------------------------------------------------------------------------------------------
# Shapes


class Shape:
    """One dense attention problem; rows with equal shapes share one timing."""

    def __init__(self, phase, L, B, hq, hkv, d, P):
        self.phase, self.L, self.B, self.hq, self.hkv, self.d = phase, L, B, hq, hkv, d
        # decode is one new position whatever the file stores in prefill_tokens
        self.P = 1 if phase == "decode" else P

    def key(self):
        return (self.phase, self.L, self.B, self.hq, self.hkv, self.d, self.P)

    def __str__(self):
        return (f"{self.phase} L={self.L} B={self.B} Hq={self.hq} Hkv={self.hkv} d={self.d} "
                f"P={self.P}")

    @property
    def r(self):
        return self.hq // self.hkv

    def why_not(self):
        """Reason this shape is not timed, or '' when it can be."""
        if self.phase in NOT_TIMED:
            return NOT_TIMED[self.phase]
        if self.phase not in ("terminal_prefill", "decode"):
            return f"unknown phase '{self.phase}'"
        if min(self.L, self.B, self.hq, self.hkv, self.d, self.P) <= 0:
            return "a non-positive size"
        if self.hq % self.hkv:
            return f"q_heads {self.hq} is not a multiple of kv_heads {self.hkv}"
        if self.P > self.L:
            return f"prefill_tokens {self.P} > context_tokens {self.L}"
        return ""

    def extra_flop_share(self):
        """Extra share of attention FLOPs (QK^T and PV alike) of the non-causal prefill forms over the exact causal one:
        the P(P-1)/2 masked scores of the triangle, per head."""
        if self.phase != "terminal_prefill":
            return 0.0
        tri = self.P * (self.P - 1) / 2
        return tri / (self.P * self.L - tri)

    def cache_bytes(self):
        return 2 * self.B * self.hkv * self.L * self.d * 2  # K and V, BF16

    def query_bytes(self):
        return 2 * self.B * self.hq * self.P * self.d * 2 + self.B * self.hq * self.P * 4  # Q, O, LSE


def shapes_of(cols, selected):
    """{key: (Shape, [row indices])} for the selected rows, ordered so that shapes sharing a
    K/V cache (same B, Hkv, L, d) follow each other and reuse it."""
    out = {}
    for i in np.flatnonzero(selected):
        vals = []
        for c in SHAPE_COLUMNS[1:]:
            v = float(cols[c][i])
            vals.append(int(v) if math.isfinite(v) else -1)
        s = Shape(str(cols["phase"][i]), *vals)
        out.setdefault(s.key(), (s, []))[1].append(int(i))
    order = sorted(out, key=lambda k: (out[k][0].B, out[k][0].hkv, out[k][0].L, out[k][0].d, k))
    return {k: out[k] for k in order}


# ---------------------------------------------------------------------------------------------
# Timers: measure(shape) -> (form, ms, notes) where notes lists every candidate's outcome;
# raises Skip(reason) when the shape cannot be timed.


class Skip(Exception):
    pass


class DryRunTimer:
    """Every shape 'takes' a constant time, named after the form a real run most likely picks."""

    def __init__(self, const_ms):
        self.const_ms = const_ms
        self.device = "no device (dry run)"
        self.provenance = (f"dry run, not a measurement: every shape given {const_ms:g} ms "
                           f"(--dry-run-timer); torch not imported; {utc_now()}")

    def measure(self, shape):
        form = PREFILL_FORMS[0] if shape.phase == "terminal_prefill" else DECODE_FORMS[0]
        return form, self.const_ms, [f"{form} {self.const_ms:g} ms (dry run)"]

    def close(self):
        pass


class CudnnTimer:
    """cuDNN SDPA (or, with backend="flash", FlashAttention-2 SDPA) through PyTorch on the first
    CUDA device."""

    def __init__(self, reps, kernel_check=True, backend="cudnn"):
        try:
            import torch
        except ImportError as e:
            raise InputError(f"PyTorch is not importable by {sys.executable} ({e}); install torch "
                             "with CUDA, or use --dry-run-timer for a test run") from e
        if not torch.cuda.is_available():
            raise InputError(f"no CUDA GPU visible to torch {torch.__version__} "
                             "(torch.cuda.is_available() is False)")
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
        except ImportError as e:
            raise InputError(f"torch {torch.__version__} has no torch.nn.attention.sdpa_kernel "
                             "(needs torch >= 2.3)") from e
        import torch.nn.functional as F
        self.torch, self.F = torch, F
        member, self.label, self.own_kernels, self.other_kernels = SDPA_BACKENDS[backend]
        self.cudnn_only = lambda: sdpa_kernel(getattr(SDPBackend, member))
        self.reps, self.kernel_check = reps, kernel_check
        self.dev = torch.device("cuda")
        self.device = torch.cuda.get_device_name(self.dev)
        self.flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device=self.dev)
        self.kv_key, self.k, self.v = None, None, None
        self.provenance = (
            f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {self.device}; "
            f"{self.label} SDPA backend only (sdpa_kernel(SDPBackend.{member})); median of "
            f"{reps} reps after {WARMUP} warm-up calls, L2 flushed ({FLUSH_BYTES >> 20} MB write) "
            f"before each rep, each queued behind a ~1 ms spin kernel, CUDA events; contiguous BF16 K/V; "
            f"{utc_now()}")

    def _time(self, fn):
        torch = self.torch
        for _ in range(WARMUP):
            fn()
        torch.cuda.synchronize()
        ts = []
        for i in range(self.reps):
            self.flush.fill_(i & 0xFF)  # before the start event: the flush is not timed
            torch.cuda._sleep(QUEUE_CYCLES)  # the call below queued behind it
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b))
        return float(np.median(ts))

    def _kernels(self, fn):
        """Names of the GPU kernels one call launches, or None where the profiler gives none."""
        torch = self.torch
        try:
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            names = {e.name for e in prof.events()
                     if str(getattr(e, "device_type", "")).endswith("CUDA")}
            return sorted(names) or None
        except Exception:  # noqa: BLE001 - the check is best effort; the timing stands
            return None

    def _free_cache(self):
        self.k = self.v = None
        self.kv_key = None
        self.torch.cuda.empty_cache()

    def measure(self, shape):
        torch = self.torch
        kv_key = (shape.B, shape.hkv, shape.L, shape.d)
        if kv_key != self.kv_key:  # consecutive shapes often share the cache (prefill, decode)
            self._free_cache()
        need = shape.query_bytes() + (0 if kv_key == self.kv_key else shape.cache_bytes())
        free, _ = torch.cuda.mem_get_info(self.dev)
        margin = 1 << 30  # cuDNN workspace, the allocator's slack
        if need + margin > free:
            self._free_cache()
            raise Skip(f"needs {(need + margin) / 2**30:.1f} GiB, {free / 2**30:.1f} GiB free")
        torch.manual_seed(0)
        B, hq, hkv, P, d = shape.B, shape.hq, shape.hkv, shape.P, shape.d
        try:
            if kv_key != self.kv_key:
                self.k = torch.randn(B, hkv, shape.L, d, dtype=torch.bfloat16, device=self.dev)
                self.v = torch.randn_like(self.k)
                self.kv_key = kv_key
            q = torch.randn(B, hq, P, d, dtype=torch.bfloat16, device=self.dev)
        except Exception as e:  # noqa: BLE001 - out of memory despite the check
            self._free_cache()
            raise Skip(f"allocation failed: {' '.join(str(e).split())[:160]}") from e
        try:
            best, notes = self._best_form(shape, q, self.k, self.v)
        finally:
            del q
            torch.cuda.empty_cache()
        if best is None:
            raise Skip(f"no {self.label} SDPA form ran: " + "; ".join(notes))
        return best[0], best[1], notes

    def _best_form(self, shape, q, k, v):
        """(fastest (form, ms) or None, notes on every candidate)."""
        torch, F = self.torch, self.F
        B, hkv, r, P, d = shape.B, shape.hkv, shape.r, shape.P, shape.d
        # Q heads h*r .. h*r+r-1 share KV head h, so [B, Hq, P, d] folds to [B, Hkv, r*P, d]
        qf = q.view(B, hkv, r * P, d)
        sdpa = F.scaled_dot_product_attention
        if shape.phase == "terminal_prefill":
            from torch.nn.attention.bias import causal_lower_right
            mask = causal_lower_right(P, shape.L)
            forms = [(PREFILL_FORMS[0], lambda: sdpa(qf, k, v)),
                     (PREFILL_FORMS[1], lambda: sdpa(q, k, v, attn_mask=mask, enable_gqa=True)),
                     (PREFILL_FORMS[2], lambda: sdpa(q, k, v, enable_gqa=True))]
        else:
            forms = [(DECODE_FORMS[0], lambda: sdpa(qf, k, v)),
                     (DECODE_FORMS[1], lambda: sdpa(q, k, v, enable_gqa=True))]
        best, notes = None, []
        with self.cudnn_only():
            for name, fn in forms:
                try:
                    out = fn()
                    if not bool(torch.isfinite(out).all()):
                        notes.append(f"{name}: non-finite output, rejected")
                        continue
                    del out
                    names = self._kernels(fn) if self.kernel_check else None
                    if names is not None:
                        log(f"  {name}: kernels {', '.join(names)[:300]}")
                    # the exact-mask form may bypass the backend choice (CausalBias dispatches to
                    # FlashAttention or memory-efficient attention itself): reject those kernels
                    mine = [n for n in names or [] if any(t in n.lower() for t in self.own_kernels)]
                    if names is not None and not mine and \
                            any(o in n.lower() for n in names for o in self.other_kernels):
                        notes.append(f"{name}: ran another backend ({', '.join(names)[:120]}), rejected")
                        continue
                    ms = self._time(fn)
                    if names is None:
                        kern = " [kernels not checked]" if self.kernel_check else ""
                    else:
                        kern = f" [{(mine or names)[0][:80]}]"
                    notes.append(f"{name} {ms:.4f} ms{kern}")
                    if best is None or ms < best[1]:
                        best = (name, ms)
                except Exception as e:  # noqa: BLE001 - a form the backend refuses is expected
                    notes.append(f"{name}: failed: {' '.join(str(e).split())[:160]}")
                    try:
                        torch.cuda.synchronize()
                    except Exception:  # noqa: BLE001
                        pass
                    torch.cuda.empty_cache()
        return best, notes

    def close(self):
        self._free_cache()


# ---------------------------------------------------------------------------------------------


def load(path):
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    try:
        cols = read_points(path)
    except ValueError as e:
        raise InputError(str(e)) from e
    except OSError as e:
        raise InputError(f"{path}: not a readable HDF5 file ({e})") from e
    for c in SHAPE_COLUMNS + VALUE_COLUMNS:
        if c not in cols:
            raise InputError(f"{path}: /points has no column '{c}' (needed: "
                             f"{', '.join(SHAPE_COLUMNS + VALUE_COLUMNS)})")
    if cols["phase"].dtype != object:
        raise InputError(f"{path}: /points/phase is not a text column")
    if "dense_impl" not in cols or cols["dense_impl"].dtype != object:
        raise InputError(f"{path}: /points has no text column 'dense_impl' (the dense baseline's profile)")
    for c in SHAPE_COLUMNS[1:] + VALUE_COLUMNS:
        if cols[c].dtype.kind not in "fiu" or cols[c].ndim != 1:
            raise InputError(f"{path}: /points/{c} is not a 1-D numeric column")
    return cols


def cudnn_error(peer, cols):
    """measured cuDNN / the model's cuDNN prediction - 1, at rows whose baseline is the cudnn profile."""
    is_cudnn = np.array([str(x) == "cudnn" for x in cols["dense_impl"]])
    return np.where(is_cudnn, ratio(peer, cols["pred_ms_attention_dense"]) - 1.0, np.nan)


def ratio(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(a, dtype=np.float64) / np.asarray(b, dtype=np.float64)
    out[~np.isfinite(out)] = np.nan
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result", help="cisa-sim result file (.h5); columns are added in place")
    ap.add_argument("--rows", choices=["measured", "all"], default="measured",
                    help="measured (default): rows with a finite meas_ms_attention_dense; all: every row")
    ap.add_argument("--reps", type=int, default=15, help="timed repetitions per form (median; default 15)")
    ap.add_argument("--dry-run-timer", type=float, metavar="CONST_MS",
                    help="no GPU: every shape 'takes' CONST_MS (tests); torch is not imported")
    ap.add_argument("--no-kernel-check", action="store_true",
                    help="accept a form without checking (torch.profiler) that it ran a cuDNN kernel")
    a = ap.parse_args(argv)
    if a.reps < 1:
        ap.error("--reps must be >= 1")
    if a.dry_run_timer is not None and not (math.isfinite(a.dry_run_timer) and a.dry_run_timer > 0):
        ap.error("--dry-run-timer must be a positive number of ms")

    try:
        cols = load(a.result)
        n = len(cols["phase"])
        selected = np.isfinite(cols["meas_ms_attention_dense"]) if a.rows == "measured" else np.ones(n, bool)
        shapes = shapes_of(cols, selected)
        timer = DryRunTimer(a.dry_run_timer) if a.dry_run_timer is not None else CudnnTimer(
            a.reps, kernel_check=not a.no_kernel_check)
    except InputError as e:
        log(f"measure_peers.py: error: {e}")
        return 2

    print(f"{len(shapes)} distinct dense shapes for {int(selected.sum())} selected rows "
          f"(--rows {a.rows}) of {n} in {a.result}")
    log(f"measure_peers.py: {timer.provenance}")
    peer = np.full(n, np.nan)
    lines, table = [], []
    todo = [(s, rows) for s, rows in shapes.values() if not s.why_not()]
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
        except Skip as e:
            lines.append(f"{s}: skipped: {e}")
            table.append((s, len(rows), "skipped", math.nan))
            log(f"[{done}/{len(todo)}] {s}: skipped: {e}")
            continue
        peer[rows] = ms
        share = s.extra_flop_share()
        extra = f", non-causal: +{100 * share:.3f}% attention FLOPs over exact causal" if "non-causal" in form else ""
        lines.append(f"{s} -> {form} {ms:.4f} ms{extra} (candidates: {'; '.join(notes)})")
        table.append((s, len(rows), form, ms))
        el = time.time() - t0
        eta = el / done * (len(todo) - done)
        log(f"[{done}/{len(todo)}] {s}: {form} {ms:.4f} ms ({el:.0f} s elapsed, ETA {eta:.0f} s)")
    timer.close()

    dry = isinstance(timer, DryRunTimer)
    shares = [s.extra_flop_share() for s, _ in todo if s.phase == "terminal_prefill"]
    share_txt = (f"; the non-causal prefill forms also compute the P(P-1)/2 masked scores per head "
                 f"(at most +{100 * max(shares):.3f}% attention FLOPs here)" if shares else "")
    what = ("DRY RUN, not a measurement (constant from --dry-run-timer)" if dry else
            f"dense attention with cuDNN SDPA through PyTorch, measured on {timer.device} by "
            "analysis/measure_peers.py (versions and date in peer_measurement)")
    columns = {
        "meas_ms_attention_dense_peer": (
            peer, "ms",
            f"{what}; contiguous BF16 K/V cache of L tokens per sequence (the peer gets the easier "
            f"unpaged layout); fastest cuDNN SDPA form per shape, named in the peer_forms attribute"
            f"{share_txt}; NaN: row not selected (--rows {a.rows}) or shape not timed (reason in peer_forms)"),
        "meas_speedup_attention_vs_peer": (
            ratio(peer, cols["meas_ms_attention_cisa"]), "x",
            "meas_ms_attention_dense_peer / meas_ms_attention_cisa (cuDNN dense attention / CISA attention)"
            + (" - DRY RUN" if dry else "")),
        "meas_speedup_busy_vs_peer": (
            ratio(peer, cols["meas_ms_busy_cisa"]), "x",
            "meas_ms_attention_dense_peer / meas_ms_busy_cisa (cuDNN dense attention / CISA GPU busy)"
            + (" - DRY RUN" if dry else "")),
        "err_attention_dense_peer": (
            cudnn_error(peer, cols), "fraction",
            "meas_ms_attention_dense_peer / pred_ms_attention_dense - 1 where dense_impl is cudnn (the model's "
            "error on the cuDNN profile; NaN where the baseline is another profile: scripts/rescore_h200.sh "
            "compares with the cudnn prediction at every point)" + (" - DRY RUN" if dry else "")),
    }
    attrs = {
        "peer_measurement": timer.provenance + f"; rows {a.rows}; analysis/measure_peers.py",
        "peer_forms": "\n".join(lines) if lines else "no rows selected",
    }
    try:
        add_columns(a.result, columns, attrs)
    except OSError as e:
        log(f"measure_peers.py: error: {a.result}: cannot write ({e})")
        return 2

    print("\n| shape | rows | peer form | peer ms | dense ms (own) | pred baseline ms |")
    print("|---|---:|---|---:|---:|---:|")
    for s, nrows, form, ms in table:
        _, rows = shapes[s.key()]
        own = float(cols["meas_ms_attention_dense"][rows[0]])
        pred = float(cols["pred_ms_attention_dense"][rows[0]])
        print(f"| {s} | {nrows} | {form} | {ms:.4f} | {own:.4f} | {pred:.4f} |")
    timed = sum(1 for t in table if math.isfinite(t[3]))
    print(f"\n{timed} of {len(table)} shapes timed; columns written to {a.result}"
          + (" (DRY RUN)" if dry else ""))
    if todo and timed == 0:
        log("measure_peers.py: warning: no shape could be timed (reasons in the peer_forms attribute)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
