#!/usr/bin/env bash
# Install what mlugen's build, tests and flow need, only if it is missing.
#
# Idempotent and quick when everything is present (a few `command -v`
# checks). On Debian/Ubuntu as root it installs the missing tools with
# apt-get (running `apt-get update` only when something must be installed);
# elsewhere it names what is missing and fails. Rust is installed with rustup
# only when cargo is missing. Finally the Nangate45 Liberty library is fetched
# (scripts/fetch-nangate45.sh, if present; it is idempotent too).
#
# Usable both ways: `./scripts/setup.sh` or `source scripts/setup.sh` (the
# latter also leaves ~/.cargo/bin on PATH in the caller's shell).

_mlugen_setup() {
    local repo
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

    # command -> Debian package that provides it.
    local -a need=(
        "verilator:verilator"
        "yosys:yosys"
        "berkeley-abc:berkeley-abc"
        "sta:opensta"
        "iverilog:iverilog"
        "g++:g++"
        "cc:gcc"
        "make:make"
        "pip3:python3-pip"
        "unzip:unzip"
        "curl:curl"
    )
    local -a missing=()
    local item
    for item in "${need[@]}"; do
        command -v "${item%%:*}" >/dev/null 2>&1 || missing+=("${item##*:}")
    done
    # Rust's TLS (rustup) and pip need CA certificates.
    [ -e /etc/ssl/certs/ca-certificates.crt ] || missing+=("ca-certificates")

    if [ "${#missing[@]}" -gt 0 ]; then
        echo "setup: missing: ${missing[*]}" >&2
        if ! command -v apt-get >/dev/null 2>&1; then
            echo "setup: error: apt-get not found; install these packages with your package manager: ${missing[*]}" >&2
            return 1
        fi
        local sudo=""
        if [ "$(id -u)" -ne 0 ]; then
            if command -v sudo >/dev/null 2>&1; then
                sudo="sudo"
            else
                echo "setup: error: not root and no sudo; install as root: apt-get install ${missing[*]}" >&2
                return 1
            fi
        fi
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q || return 1
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" || return 1
        local still=()
        for item in "${need[@]}"; do
            command -v "${item%%:*}" >/dev/null 2>&1 || still+=("${item%%:*}")
        done
        if [ "${#still[@]}" -gt 0 ]; then
            echo "setup: error: still missing after apt-get install: ${still[*]}" >&2
            return 1
        fi
    fi

    if ! command -v cargo >/dev/null 2>&1; then
        if [ -x "$HOME/.cargo/bin/cargo" ]; then
            export PATH="$HOME/.cargo/bin:$PATH"
        else
            echo "setup: cargo not found: installing Rust (stable) with rustup" >&2
            curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal || return 1
            export PATH="$HOME/.cargo/bin:$PATH"
        fi
    fi

    if [ -f "$repo/scripts/fetch-nangate45.sh" ]; then
        bash "$repo/scripts/fetch-nangate45.sh" >/dev/null || return 1
    fi
    return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    _mlugen_setup
else
    _mlugen_setup || return 1
fi
