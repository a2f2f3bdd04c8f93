#!/usr/bin/env bash
# Re-scores the H100 measurements (results/h100/, session 20 on: an H100 80GB HBM3 SXM lent as the
# device) against the current model with every point priced for h100_sxm. Usage:
#   scripts/rescore_h100.sh [BIN]        (no GPU needed; writes <s>_measured.h5 / <s>_report.txt)
# Since session 21 the h100_sxm preset holds the H100's own calibration (models/calibration/
# h100_sxm.yaml, from results/h100/session20_call1/): these scores are MEAS, on sets already inspected.
# The cross-card (XFER) scores of session 20 are kept in each folder's fidelity_xfer_s20.txt.
set -euo pipefail
BIN=${1:-build/release/cisa-sim}
PY=${PYTHON:-python3}
source "$(dirname "$0")/rescore_lib.sh"
H100="--set hardware=h100_sxm"
# Session 20 call 1 (session 16's kernels; the H100's first calibration, taken in the same call):
# held-out v25 (committed 64f5d6f before any change of session 20) measured once with cuDNN and FA2
# on its dense shapes; the peers' fit shapes (impl_fit) and the Flex sweep with all three peers.
rescore_dir results/h100/heldout25 "" $H100
rescore_dir results/h100/impls_s20 "" $H100
# Held-out v26 (committed b7e34fe before session 21's changes), measured once in session 22 (call 1)
# with session 16's kernels, cuDNN and FA2 on its dense shapes; the peers' fit shapes again.
rescore_dir results/h100/heldout26 "" $H100
rescore_dir results/h100/impls_s22 "" $H100
# Held-out v27 (committed ea3aed9 at the start of session 22), measured once in session 22 (call 2)
# with session 16's kernels and the CTA progress record, cuDNN and FA2 on its dense shapes: the
# held-out test of the peers' H100 figures (MEAS since session 22); ncu bytes at three points.
rescore_dir results/h100/heldout27 "" $H100
# Held-out v28 (committed b92b91a after session 22's top-k change), measured once in session 23
# (binary e4ecb78) with cuDNN and FA2 on its dense shapes: the held-out test of top-k's bounded
# in-L2 rate; the call's own calibration beside it (call_calibration.yaml, not installed).
rescore_dir results/h100/heldout28 "" $H100
# Held-out v29 (committed 14b2d42 before session 23's decode tile-class change), measured once in
# session 23 (binary c172a2a) with cuDNN and FA2 on its dense shapes, in the call whose calibration
# (with the 32-row decode grid) is installed since: the held-out test of that change.
rescore_dir results/h100/heldout29 "" $H100
# Held-out v30 (committed e670e9e before session 23's decode scoring grid fit), measured once in
# session 24 (binary e5acf07) with cuDNN and FA2 on its dense shapes, in the call whose calibration
# (the first with the decode scoring grid fit) is installed since: the held-out test of that fit.
rescore_dir results/h100/heldout30 "" $H100
# Held-out v31 (committed 3b00b6d in session 24), measured once in session 25 (binary f0acf5f, built
# from its tree before the commit: the calibration says 11fb44bc-dirty) with cuDNN and FA2 on its
# dense shapes, in the call whose calibration (the first with the per-CTA top-k output pass) is
# installed since: the held-out test of that change.
rescore_dir results/h100/heldout31 "" $H100
# Held-out v32 (committed 89c41fb in session 25, before session 26's schedule per tile class),
# measured once in session 26 (binary 3304961) with cuDNN and FA2 on its dense shapes: the held-out
# test of that schedule; scored against the calibration installed in session 25 (the call's own
# beside it, call_calibration.yaml, not installed). Flex's third fit shape and second sweep, same
# machine (impls_s26): the flex profile's 32-row question, before any refit.
rescore_dir results/h100/heldout32 "" $H100
rescore_dir results/h100/impls_s26 "" $H100
# Held-out v33 (committed 15893e5 in session 27 with its predictions), measured once in session 27
# (binary 107f100) with cuDNN and FA2, and Flex on its decode shapes (flex/: its prefill groups of
# G x r rows are no multiple of 16, which Flex's block mask needs); scored once
# (fidelity_heldout.txt), then inspected: its r 11 dense point led to grid_fill (session 27).
rescore_dir results/h100/heldout33 "" $H100
rescore_dir results/h100/heldout33/flex "" $H100

# SUMMARY.md: every H100 set, fit shapes and held-out sets apart, scored against the current model.
{
  cat <<'TXT'
# Measured vs predicted on the H100 (issue 11)

An NVIDIA H100 80GB HBM3 SXM (700 W, driver 580.159) lent as the device in sessions 20 and 22-27.
Every point priced for `h100_sxm` (`--set hardware=h100_sxm`), whose card bench and `cisa_kernels`
figures are MEAS since session 21 (`models/calibration/h100_sxm.yaml`: `session20_call1/` until
session 23, `heldout29/call_calibration.yaml` in session 23, with the 32-row decode figures,
`heldout30/call_calibration.yaml` in session 24, with the decode scoring grid fit,
`heldout31/call_calibration.yaml` since session 25, with the per-CTA top-k output pass), and the
cuDNN, FA2 and Flex figures MEAS since session 22 from their fit shapes (impl_fit, timed in sessions
20 and 22). `scripts/rescore_h100.sh` re-scores the runs (`<s>_device_run.h5`) against the committed
model: `<s>_measured.h5`, `<s>_report.txt`, this file. Median / worst |measured / predicted - 1|,
share of points inside their band [lo / 1.05, hi x 1.05], median band width hi / lo.

Sets, and what they are to the model:
- **peer fit shapes** (`impls_s20/impl_fit`, `impls_s22/impl_fit`): the only points the cudnn, fa2
  and flex H100 figures are fitted on.
- **held-out v25** (`heldout25/`): measured in session 20 and scored then against the XFER preset
  (`fidelity_xfer_s20.txt`); inspected since (session 21: the CISA attention band's low end).
- **held-out v26** (`heldout26/`): measured once in session 22 and scored against the model as it
  stood (`fidelity_heldout.txt`, the held-out figures); inspected since (session 22: the peers' H100
  figures).
- **held-out v27** (`heldout27/`): measured once in session 22 after the peers' H100 figures became
  MEAS (their held-out test) and scored (`fidelity_heldout.txt`); inspected since (session 22:
  top-k's in-L2 rate).
- **held-out v28** (`heldout28/`): measured once in session 23 after top-k's change (its held-out
  test) and scored (`fidelity_heldout.txt`); inspected since (session 23: the decode attention's
  32-row tile class).
- **held-out v29** (`heldout29/`): measured once in session 23 after the decode tile-class change,
  in the call whose calibration was installed then (its held-out test), and scored
  (`fidelity_heldout.txt`); inspected since (session 26: the schedule of selected pages per tile
  class).
- **held-out v30** (`heldout30/`): measured once in session 24, in the call whose calibration (the
  first with the decode scoring grid fit) was installed then (its held-out test), and scored
  (`fidelity_heldout.txt`; `fidelity_without_change.txt` with the calibration before it, for
  comparison); inspected since (session 26: the schedule of selected pages per tile class).
- **held-out v31** (`heldout31/`): measured once in session 25, in the call whose calibration (the
  first with the per-CTA top-k output pass) is installed (its held-out test), and scored
  (`fidelity_heldout.txt`; `fidelity_without_change.txt` with the calibration and form before it);
  inspected since (session 26: the schedule of selected pages per tile class).
- **held-out v32** (`heldout32/`): committed in session 25 before session 26's schedule of shared
  selected pages per tile class, its predictions recorded before measurement (`predicted_s26.csv`),
  measured once in session 26 with cuDNN and FA2 and scored against the calibration installed in
  session 25 (`fidelity_heldout.txt`; the call's own calibration beside it, not installed); used for
  nothing else.
- **held-out v33** (`heldout33/`): committed in session 27 with its predictions
  (`predicted_s27.csv`), measured once in session 27 with cuDNN and FA2 (and Flex on its decode
  shapes, `heldout33/flex/`), scored once (`fidelity_heldout.txt`, the model at 107f100); inspected
  since (its r 11 dense point led to session 27's fill of tail-split grids).
- **Flex fit shape and second sweep** (`impls_s26/`: impl_fit_flex, flex_sweep2), session 26: the
  flex profile's 32-row visit cost; impl_fit_flex is a fit shape since session 27, flex_sweep2
  inspected (scored once before the refit).
- **Flex sweep** (`impls_s20/flex_sweep`, `impls_s22/flex_sweep`): Flex's validation set (inspected on
  the H200 in session 5).
TXT
  for pair in "impls_s20|peer fit shapes and Flex sweep, session 20" \
              "impls_s22|peer fit shapes and Flex sweep, session 22" \
              "heldout25|held-out v25 (session 20), inspected" \
              "heldout26|held-out v26 (session 22), inspected after its held-out scoring" \
              "heldout27|held-out v27 (session 22), inspected after its held-out scoring" \
              "heldout28|held-out v28 (session 23), inspected after its held-out scoring" \
              "heldout29|held-out v29 (session 23), inspected after its held-out scoring (fidelity_heldout.txt)" \
              "heldout30|held-out v30 (session 24), inspected after its held-out scoring (fidelity_heldout.txt)" \
              "heldout31|held-out v31 (session 25), inspected after its held-out scoring (fidelity_heldout.txt)" \
              "heldout32|held-out v32 (session 26), scored once (fidelity_heldout.txt)" \
              "impls_s26|Flex fit shape (a fit shape since session 27) and flex_sweep2 (session 26), inspected" \
              "heldout33|held-out v33 (session 27), inspected after its held-out scoring (fidelity_heldout.txt)" \
              "heldout33/flex|held-out v33's decode shapes with Flex (session 27)"; do
    dir=results/h100/${pair%%|*}
    if ls $dir/*_measured.h5 >/dev/null 2>&1; then
      $PY analysis/fidelity.py --markdown --set "${pair#*|}=$(ls $dir/*_measured.h5 | tr '\n' ',')"
    fi
  done
} > results/h100/SUMMARY.md
