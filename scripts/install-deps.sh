#!/usr/bin/env bash
# Installs the Debian packages cisa-sim needs, only those missing. Idempotent and quiet when
# everything is present; on machines without apt (e.g. the GPU machine) it only checks.
set -euo pipefail
pkgs=(cmake ninja-build g++ libeigen3-dev libboost-program-options-dev libfmt-dev libhdf5-dev
      catch2 libyaml-cpp-dev libdeflate-dev clang libclang-rt-dev python3 python3-h5py python3-numpy python3-matplotlib python3-pandas)
if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: no apt on this machine; assuming dependencies are provided" >&2
  exit 0
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then exit 0; fi
echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
