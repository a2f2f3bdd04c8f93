#!/usr/bin/env bash
# Fault tests of the output writer (issue 12): whatever happens to a write, the target path holds
# either the old file, byte for byte, or the complete new one; never a half-written file, and no
# temp file is left behind for long.
#   fault.sh EXE INJECT_SO WORKDIR FAMILY
# FAMILY: kill9 | signals | sigpipe | efbig | enospc | unwritable | symlink | targets | stale
# Prints "FAMILY: runs=N crashes=N wrong_exit=N files_lost=N" and exits 1 when any count but
# runs is non-zero.
set -uo pipefail
EXE=$1 INJECT=$2 WORK=$3 FAMILY=$4
SCEN=$(cd "$(dirname "$0")" && pwd)/big_sweep.yaml
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
runs=0 crashes=0 wrong=0 lost=0

note() { echo "  $*" >&2; }
fail_rc() { wrong=$((wrong + 1)); note "wrong exit: $*"; }
lose() { lost=$((lost + 1)); note "file lost/corrupt: $*"; }
# A run's exit code: 128+n for a signal we did not send is a crash (ASan aborts are signals too).
crashed() { [ "$1" -gt 128 ] && [ "$1" -ne "${2:-0}" ]; }

# Rows in a result file (cisa-sim reads it back with the validating reader), "" when unreadable.
rows_of() {
  local out
  out=$("$EXE" merge "$1" -o "$WORK/.check.h5" 2>/dev/null) || { echo ""; return; }
  rm -f "$WORK/.check.h5"
  sed -n 's/^merged 1 files, \([0-9]*\) points.*/\1/p' <<<"$out"
}
temps() { ls -1 "$WORK" | grep -c 'tmp-cisa' || true; }
write_old() {  # a small, valid old file at $1; prints its checksum
  "$EXE" --scenario "$SCEN" --set sweep.batch=[1] --out "$1" --format none >/dev/null 2>&1 || note "cannot write old file"
  sha256sum "$1" | cut -d' ' -f1
}
# The target holds the old bytes or a complete new file of $3 rows.
old_or_new() {
  local f=$1 old_sum=$2 want=$3
  [ -f "$f" ] || { lose "$f missing"; return; }
  [ "$(sha256sum "$f" | cut -d' ' -f1)" = "$old_sum" ] && return
  local n
  n=$(rows_of "$f")
  [ "$n" = "$want" ] || lose "$f is neither the old file nor a complete new one (rows '$n', want $want)"
}
full_rows() { "$EXE" --scenario "$SCEN" --no-hdf5 --format csv 2>/dev/null | tail -n +2 | wc -l; }

case "$FAMILY" in
kill9)  # kill -9 at random points of a large write
  want=$(full_rows)
  old=$(write_old out.h5)
  start=$(date +%s%N)
  "$EXE" --scenario "$SCEN" --out timing.h5 --format none >/dev/null 2>&1
  dur_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  for i in $(seq 1 12); do
    runs=$((runs + 1))
    "$EXE" --scenario "$SCEN" --out out.h5 --format none >/dev/null 2>&1 &
    pid=$!
    sleep "$(awk -v d="$dur_ms" -v s="$RANDOM" 'BEGIN { srand(s); printf "%.3f", rand() * d * 1.2 / 1000 }')"
    kill -9 "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    crashed "$rc" 137 && { crashes=$((crashes + 1)); note "run $i: exit $rc"; }
    old_or_new out.h5 "$old" "$want"
  done
  # The next writer removes the temps the killed ones left, and succeeds.
  runs=$((runs + 1))
  "$EXE" --scenario "$SCEN" --out out.h5 --format none >/dev/null 2>&1 || fail_rc "run after kill -9"
  [ "$(rows_of out.h5)" = "$want" ] || lose "out.h5 after the final run"
  [ "$(temps)" -eq 0 ] || lose "stale temp files left after a later run: $(ls "$WORK" | grep tmp-cisa | tr '\n' ' ')"
  ;;
signals)  # SIGINT / SIGTERM / SIGHUP while writing remove the temp file
  want=$(full_rows)
  for sig in INT TERM HUP; do
    old=$(write_old out.h5)
    runs=$((runs + 1))
    "$EXE" --scenario "$SCEN" --out out.h5 --format none >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1 400); do [ "$(temps)" -gt 0 ] && break; sleep 0.01; done
    kill -"$sig" "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    crashed "$rc" $((128 + $(kill -l "$sig"))) && { crashes=$((crashes + 1)); note "SIG$sig: exit $rc"; }
    old_or_new out.h5 "$old" "$want"
    [ "$(temps)" -eq 0 ] || lose "SIG$sig left a temp file"
  done
  ;;
sigpipe)  # | head -1: the file is complete before stdout is written, or untouched
  for fmt in csv json table; do
    runs=$((runs + 1))
    rm -f p.h5
    "$EXE" --scenario "$SCEN" --set sweep.batch=[1,2] --out p.h5 --format "$fmt" 2>/dev/null | head -1 >/dev/null
    rc=${PIPESTATUS[0]}
    crashed "$rc" 141 && { crashes=$((crashes + 1)); note "$fmt: exit $rc"; }
    n=$(rows_of p.h5)
    [ -n "$n" ] && [ "$n" -gt 0 ] || lose "p.h5 unreadable after | head -1 ($fmt)"
    [ "$(temps)" -eq 0 ] || lose "temp left after SIGPIPE ($fmt)"
  done
  ;;
efbig|enospc|eio|fsync)  # the disk refuses: non-zero exit with the OS error, old file kept, no temp
  case "$FAMILY" in
    efbig) msg="File too large" ;;
    enospc) msg="No space left on device" ;;
    *) msg="Input/output error" ;;
  esac
  for cmd in run merge plan text; do
    for after in 0 5000 200000; do
      [ "$FAMILY" = fsync ] && [ "$after" != 0 ] && continue
      [ "$cmd" = text ] && [ "$after" != 0 ] && continue  # the summary is smaller than that
      old=$(write_old out.h5)
      cp out.h5 in.h5
      printf 'old text\n' >out.txt
      old_txt=$(sha256sum out.txt | cut -d' ' -f1)
      match=""
      case $cmd in
        run) args=(--scenario "$SCEN" --set sweep.batch=[1,2,3] --out out.h5 --format none) target=out.h5 ;;
        merge) args=(merge in.h5 -o out.h5) target=out.h5 ;;
        plan) args=(plan --out out.h5 --format none) target=out.h5 ;;
        text) args=(route --synthetic --tokens 2048 --positions 8 --budget 16 --out r.h5 --summary out.txt) target=out.txt match=out.txt.tmp-cisa. ;;
      esac
      runs=$((runs + 1))
      if [ "$FAMILY" = efbig ]; then
        err=$( (ulimit -f $(( (after + 4096) / 512 )); trap '' XFSZ; exec "$EXE" "${args[@]}") 2>&1 >/dev/null)
        rc=$?
        [ "$cmd" = text ] && [ "$rc" = 0 ] && continue  # the summary fits under the limit
      elif [ "$FAMILY" = fsync ]; then
        err=$(CISA_FAULT_FSYNC=EIO ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" LD_PRELOAD="$INJECT" "$EXE" "${args[@]}" 2>&1 >/dev/null)
        rc=$?
      else
        e=ENOSPC; [ "$FAMILY" = eio ] && e=EIO
        err=$(CISA_FAULT_MATCH=$match CISA_FAULT_ERRNO=$e CISA_FAULT_AFTER=$after ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" \
              LD_PRELOAD="$INJECT" "$EXE" "${args[@]}" 2>&1 >/dev/null)
        rc=$?
      fi
      crashed "$rc" && { crashes=$((crashes + 1)); note "$cmd after $after: exit $rc: $err"; continue; }
      if [ "$rc" != 1 ] || ! grep -q "$msg" <<<"$err" || grep -q "internal error" <<<"$err"; then
        fail_rc "$cmd after $after bytes: exit $rc, stderr: $(head -c 400 <<<"$err")"
      fi
      if [ "$target" = out.txt ]; then
        [ "$(sha256sum out.txt | cut -d' ' -f1)" = "$old_txt" ] || lose "out.txt changed"
      else
        [ "$(sha256sum out.h5 | cut -d' ' -f1)" = "$old" ] || lose "out.h5 changed ($cmd after $after)"
      fi
      [ "$(temps)" -eq 0 ] || lose "temp left ($cmd after $after)"
    done
  done
  ;;
unwritable)  # a folder we may not write into: exit 2 before any work, nothing created
  mkdir ro && chmod 555 ro
  as_user=()
  if [ "$(id -u)" = 0 ]; then
    chmod o+rx "$WORK"
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    "${as_user[@]}" test -x "$EXE" || { echo "$FAMILY: skipped (the binary is not executable by uid 65534)"; exit 0; }
  fi
  for args in "--out ro/x.h5 --format none" "--out ro/sub/x.h5 --format none" "plan --out ro/p.h5 --format none"; do
    runs=$((runs + 1))
    # shellcheck disable=SC2086
    err=$("${as_user[@]}" "$EXE" $args 2>&1 >/dev/null)
    rc=$?
    crashed "$rc" && crashes=$((crashes + 1))
    [ "$rc" = 2 ] && grep -q "Permission denied" <<<"$err" || fail_rc "$args: exit $rc: $err"
  done
  [ -z "$(ls -A ro)" ] || lose "files appeared in the unwritable folder"
  ;;
symlink)  # a symlink is followed and its target replaced atomically; the link stays a link
  mkdir real
  old=$(write_old real/r.h5)
  ln -s real/r.h5 link.h5
  ln -s link.h5 link2.h5
  ln -s real/new.h5 dangling.h5
  for t in link.h5 link2.h5 dangling.h5; do
    runs=$((runs + 1))
    "$EXE" --scenario "$SCEN" --set sweep.batch=[1,2] --out "$t" --format none >/dev/null 2>&1 || fail_rc "--out $t"
    [ -L "$t" ] || lose "$t is no longer a symlink"
  done
  n=$(rows_of real/r.h5)
  [ -n "$n" ] && [ "$(sha256sum real/r.h5 | cut -d' ' -f1)" != "$old" ] || lose "real/r.h5 not replaced"
  [ -n "$(rows_of real/new.h5)" ] || lose "dangling link's target not created"
  [ "$(temps)" -eq 0 ] && [ -z "$(ls real | grep tmp-cisa)" ] || lose "temp left"
  ;;
targets)  # --out naming something that is not a regular file: exit 2, untouched
  mkdir folder
  mkfifo fifo
  for t in folder folder/ fifo /dev/null -; do
    runs=$((runs + 1))
    before=$(stat -c %F "$t" 2>/dev/null || echo none)
    err=$(timeout 20 "$EXE" --out "$t" --format none 2>&1 >/dev/null)
    rc=$?
    crashed "$rc" && crashes=$((crashes + 1))
    [ "$rc" = 2 ] || fail_rc "--out $t: exit $rc: $err"
    [ "$t" = - ] || [ "$(stat -c %F "$t")" = "$before" ] || lose "$t changed type"
  done
  for t in folder fifo /dev/null; do  # merge and plan too
    for cmd in "plan --format none --out" "merge $SCEN -o"; do
      runs=$((runs + 1))
      # shellcheck disable=SC2086
      timeout 20 "$EXE" $cmd "$t" >/dev/null 2>&1
      rc=$?
      [ "$rc" = 2 ] || fail_rc "$cmd $t: exit $rc"
    done
  done
  # The default name is sanitised: `name: ../../escaped` stays under out/.
  mkdir -p deep/a/b && cd deep/a/b || exit 1
  runs=$((runs + 1))
  "$EXE" --scenario "$SCEN" --set 'name=../../escaped' --set sweep.batch=[1] --format none >/dev/null 2>&1 || fail_rc "name ../../escaped"
  [ -z "$(find "$WORK/deep" -maxdepth 3 -name '*escaped*' -not -path '*/out/*')" ] || lose "a file escaped out/"
  ls out/*escaped*.h5 >/dev/null 2>&1 || lose "no sanitised default file under out/"
  ;;
stale)  # temps of dead writers of the same target are removed; live writers' temps are kept
  dead=999999
  while kill -0 "$dead" 2>/dev/null; do dead=$((dead - 1)); done
  touch "out.h5.tmp-cisa.$dead.0" "out.h5.tmp.$dead" "out.h5.tmp-cisa.$$.0" "other.h5.tmp-cisa.$dead.0"
  runs=$((runs + 1))
  "$EXE" --scenario "$SCEN" --set sweep.batch=[1] --out out.h5 --format none >/dev/null 2>&1 || fail_rc "run"
  [ ! -e "out.h5.tmp-cisa.$dead.0" ] && [ ! -e "out.h5.tmp.$dead" ] || lose "stale temps of a dead writer kept"
  [ -e "out.h5.tmp-cisa.$$.0" ] || lose "a live writer's temp was removed"
  [ -e "other.h5.tmp-cisa.$dead.0" ] || lose "another target's temp was removed"
  ;;
*) echo "unknown family $FAMILY" >&2; exit 2 ;;
esac
echo "$FAMILY: runs=$runs crashes=$crashes wrong_exit=$wrong files_lost=$lost"
[ $((crashes + wrong + lost)) -eq 0 ]
