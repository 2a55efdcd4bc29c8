#!/usr/bin/env bash
# Every test of the workspace: install what is missing, then
# `cargo test --release --workspace` (extra arguments are passed to cargo).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
exec cargo test --release --workspace "$@"
