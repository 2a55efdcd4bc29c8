#!/usr/bin/env bash
# The main job: install what is missing, build, generate the MLU as an SM
# unit in its committed shape (synth/unit8.json: 8 entries, bst, 4 walkers,
# 32 lanes, two MLB search and two lane-check stages), cosimulate it under
# Verilator against its golden twin, check the scenario corpus on the golden
# model, synthesize, and print a short report.
#
# Each stage runs `mlugen` subcommands with their output in
# build/run/<stage>.log. A subcommand that still answers "not implemented yet"
# is reported as SKIPPED, so stages slot in as they are written; any other
# failure is FAILED and makes the script exit non-zero after the report.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
source scripts/setup.sh

logdir="$repo/build/run"
mkdir -p "$logdir"

echo "run: building mlugen (release)" >&2
cargo build --release --quiet --bin mlugen
mlugen="$repo/target/release/mlugen"

report=()
failed=0

# record NAME STATUS TEXT
record() { report+=("$(printf '%-9s %-8s %s' "$1" "$2" "$3")"); }

# stage NAME [PATTERN] -- ARGS...: one mlugen run. The summary is the first
# log line matching PATTERN (an extended regex), else the last line.
stage() {
    local name="$1" pattern=""
    shift
    if [ "$1" != "--" ]; then pattern="$1"; shift; fi
    shift
    local log="$logdir/$name.log" rc=0 line=""
    echo "run: [$name] mlugen $*" >&2
    "$mlugen" "$@" >"$log" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ]; then
        [ -n "$pattern" ] && line="$(grep -E -m1 "$pattern" "$log" || true)"
        [ -n "$line" ] || line="$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)"
        record "$name" ok "$(echo "$line" | sed 's/^[[:space:]]*//' | cut -c1-160)"
    elif grep -q "not implemented yet" "$log"; then
        record "$name" SKIPPED "mlugen $1: not implemented yet"
    else
        record "$name" FAILED "exit $rc, see build/run/$name.log"
        tail -n 20 "$log" >&2
        failed=1
    fi
}

# Every corpus scenario on the golden model, each verdict compared with the
# hand-written `expect` of its event (`--verify` exits non-zero on a mismatch).
check_corpus() {
    local log="$logdir/check.log" total=0 bad=0 rc f
    : >"$log"
    for f in testbench/scenarios/*.json; do
        total=$((total + 1))
        rc=0
        "$mlugen" check --scenario "$f" --engine model --verify >"$logdir/check-$(basename "$f" .json).json" 2>>"$log" || rc=$?
        if [ "$rc" -ne 0 ]; then
            if grep -q "not implemented yet" "$log"; then
                record check SKIPPED "mlugen check: not implemented yet"
                return
            fi
            echo "$f: exit $rc" >>"$log"
            bad=$((bad + 1))
        fi
    done
    if [ "$bad" -eq 0 ]; then
        record check ok "$total corpus scenarios, every verdict as expected"
    else
        record check FAILED "$bad of $total corpus scenarios disagree, see build/run/check.log"
        failed=1
    fi
}

stage generate -- generate --config synth/unit8.json
# The unit's Verilog under Verilator against its golden twin, every output
# every cycle (the test suite runs 1 M requests per committed unit), and a
# one-lane unit in HWONLY mode.
stage cosim "mismatches" -- cosim --top mlu --config synth/unit8.json --transactions 200000
stage cosim-hwonly "mismatches" -- cosim --top mlu --entries 8 --structure bst --mode hwonly --transactions 100000
check_corpus
# The published workload traces (spec section 9), validated and summarised.
traces="${MLUGEN_TRACES:-$repo/traces}"
if compgen -G "$traces/*.jsonl.gz" >/dev/null; then
    stage traces -- trace "$traces"/*.jsonl.gz
    if [ "${report[-1]:10:2}" = "ok" ]; then
        summary="$(python3 -c '
import json, sys
t = json.load(sys.stdin)["traces"]
print("; ".join("%s %d kernels, max live %d, max %d blocks/op" % (x["workload"], x["kernels"], x["max_live_allocations"], x["max_blocks_per_kernel"]) for x in t))
' <"$logdir/traces.log")"
        report[-1]="$(printf '%-9s %-8s %s' traces ok "$summary")"
    fi
else
    record traces SKIPPED "no *.jsonl.gz in $traces"
fi
stage synth "min period|slack" -- synth
# The unit itself in Nangate45 (area and timing; its energy and block split
# are the synthesis report's, synth/report.sh).
stage synth-mlu "min period|slack" -- synth --top unit --config synth/unit8.json --no-energy --no-blocks

echo
echo "mlugen run report ($(date -u '+%Y-%m-%d %H:%M UTC'), logs in build/run/)"
printf '%s\n' "${report[@]}"
exit "$failed"
