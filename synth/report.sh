#!/bin/sh
# Regenerates synth/reports/mlb_sweep.{md,json}: every synthesis job of the
# committed report (docs/synth.md), two at a time, each writing its JSON into
# build/synth-parts/, then one report from all of them (CYCLES measured
# cycles per energy workload, default 100). About 30 minutes on
# two cores. Run from the repository root: synth/report.sh
set -e
M=${MLUGEN:-target/release/mlugen}
P=build/synth-parts
O=build/synth-report
mkdir -p "$P"
rm -f "$P"/*.json
run() { name=$1; shift; "$M" synth --json --out "$O" --energy-cycles "${CYCLES:-100}" "$@" > "$P/$name.json.part" && mv "$P/$name.json.part" "$P/$name.json"; }
# The plain MLB (one-stage, PLRU, clock-gated), every size; the block split for 16.
( run n45_mlb  --lib nangate45 --entries 1,2,4,8,32 --no-blocks
  run n45_mlb16 --lib nangate45 --entries 16
  run n45_var --lib nangate45 --entries 8,16 --hit-latency 2 --no-blocks
  run n45_ungated --lib nangate45 --entries 8,16 --clock-gating off --no-blocks
  run n45_rr --lib nangate45 --entries 8,16 --config synth/rr.json --no-blocks
  run n45_mlu --lib nangate45 --top mlu --entries 8,16 ) &
( run a7_mlb  --lib asap7 --entries 1,2,4,8,32 --no-blocks
  run a7_mlb16 --lib asap7 --entries 16
  run a7_var --lib asap7 --entries 8,16 --hit-latency 2 --no-blocks
  run a7_ungated --lib asap7 --entries 8,16 --clock-gating off --no-blocks
  run a7_rr --lib asap7 --entries 8,16 --config synth/rr.json --no-blocks
  run a7_mlu --lib asap7 --top mlu --entries 8,16 ) &
wait
for f in n45_mlb n45_mlb16 n45_var n45_ungated n45_rr n45_mlu a7_mlb a7_mlb16 a7_var a7_ungated a7_rr a7_mlu; do
  test -f "$P/$f.json" || { echo "synth/report.sh: job $f failed (see its log above)" >&2; exit 1; }
done
"$M" synth --report-from "$P" --report synth/reports
