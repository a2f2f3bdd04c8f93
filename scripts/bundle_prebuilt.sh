#!/usr/bin/env bash
# Packs a cisa-sim built on this (CPU) machine with the shared libraries it links, except glibc's
# own (libc, libm, libpthread, libdl, librt, the loader), into DIR/cisa-sim and DIR/lib, for
# `scripts/device_final.sh PREBUILT=DIR` on the GPU machine (carry DIR): the GPU image lacks the
# compiled Boost.Program_options and has other library versions.
#   scripts/bundle_prebuilt.sh [DIR (default .dev/cli)] [BIN (default build/release/cisa-sim)]
set -euo pipefail
DIR=${1:-.dev/cli}
BIN=${2:-build/release/cisa-sim}
[ -x "$BIN" ] || { echo "bundle_prebuilt.sh: no $BIN (build it first)" >&2; exit 2; }
rm -rf "$DIR" && mkdir -p "$DIR/lib"
cp "$BIN" "$DIR/cisa-sim"
ldd "$BIN" | awk '/=> \// {print $3}' |
  grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' | xargs -r -I{} cp -L {} "$DIR/lib/"
echo "bundle_prebuilt.sh: $DIR ($(du -sh "$DIR" | cut -f1)): $("$DIR/cisa-sim" --version 2>&1 | head -1)"
