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
