#!/usr/bin/env bash
# The CLI on the corrupt-HDF5 corpus that test_corrupt_hdf5 leaves in CORPUS: `merge`,
# `--measurements` and (when python3 has h5py) `report` exit 2 with a message naming the file,
# never 1 (internal error) and never a crash; a merge never leaves a file at its target.
#   corrupt_cli.sh EXE CORPUS SOURCE_DIR
set -uo pipefail
EXE=$1 CORPUS=$2 SRC=$3
WORK=$CORPUS/../cli_work
rm -rf "$WORK" && mkdir -p "$WORK"
runs=0 crashes=0 wrong=0 lost=0
have_report=0
for py in "${CISA_PYTHON:-}" python3 /usr/bin/python3; do
  if [ -n "$py" ] && "$py" -c "import h5py, numpy, matplotlib" 2>/dev/null; then
    export CISA_PYTHON=$(command -v "$py") have_report=1
    break
  fi
done
check() {  # check NAME RC ALLOWED_RCS STDERR
  local name=$1 rc=$2 allowed=$3 err=$4
  runs=$((runs + 1))
  if [ "$rc" -gt 128 ]; then
    crashes=$((crashes + 1)); echo "  crash: $name: exit $rc" >&2
  elif ! grep -qw "$rc" <<<"$allowed"; then
    wrong=$((wrong + 1)); echo "  wrong exit: $name: exit $rc (allowed $allowed): $(head -c 300 <<<"$err")" >&2
  elif [ "$rc" = 2 ] && ! grep -q "$(basename "$f")" <<<"$err"; then
    wrong=$((wrong + 1)); echo "  message does not name the file: $name: $err" >&2
  fi
}
for f in "$CORPUS"/*.h5; do
  base=$(basename "$f")
  case $base in
    good.h5|good_deflated.h5|f32_u8_vlen.h5) allowed="0" ;;
    flipped.h5|flipped_deflated.h5) allowed="0 2" ;;  # the last flip of the sample: data or metadata
    *) allowed="2" ;;
  esac
  # report (h5py) is lenient where nothing is corrupt: other dtypes, attributes, sub-groups.
  case $base in
    enum.h5|bitfield.h5|float_index.h5|int_attr.h5|points_total_text.h5|subgroup.h5|unit_int.h5|unwritten.h5 \
      |opaque.h5|array.h5) report_allowed="0 2" ;;
    *) report_allowed=$allowed ;;
  esac
  rm -f "$WORK/m.h5"
  err=$("$EXE" merge "$f" -o "$WORK/m.h5" 2>&1 >/dev/null); rc=$?
  check "merge $base" "$rc" "$allowed" "$err"
  [ "$rc" = 0 ] || [ ! -e "$WORK/m.h5" ] || { lost=$((lost + 1)); echo "  merge $base left a file" >&2; }
  # --measurements: none of these is a measurement of the default scenario.
  err=$("$EXE" --measurements "$f" --no-hdf5 --format none 2>&1 >/dev/null); rc=$?
  check "--measurements $base" "$rc" "2" "$err"
  if [ $have_report = 1 ] && [ "$report_allowed" != 0 ]; then
    err=$("$EXE" report "$f" --out "$WORK/report" 2>&1 >/dev/null); rc=$?
    check "report $base" "$rc" "$report_allowed" "$err"
  fi
done
ls "$WORK" | grep -q tmp-cisa && { lost=$((lost + 1)); echo "  temp files left" >&2; }
echo "corrupt_cli: runs=$runs crashes=$crashes wrong_exit=$wrong files_lost=$lost (report checked: $have_report)"
