#!/usr/bin/env bash
# Area, flip-flops, timing and power of the hit-under-miss MLU against the
# blocking MLU it extends (eval/README.md "Beyond the paper"): the committed
# tops mlu8_bst / mlu8_bst_hum and mlu16_bst / mlu16_bst_hum, synthesized with
# `mlugen synth` (Yosys/ABC + OpenSTA, docs/synth.md) in Nangate45 and ASAP7
# at the flow's default clocks. Writes eval/ext_synth/<top>_<lib>.json (the
# flow's own JSON report) and then re-renders eval/README.md.
#   eval/ext_synth.sh      (from anywhere; ~30 min on 2 loaded cores)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
cargo build --release -q
bin="$repo/target/release/mlugen"
out=eval/ext_synth
mkdir -p "$out"
for lib in nangate45 asap7; do
    for n in 8 16; do
        for top in mlu${n}_bst mlu${n}_bst_hum; do
            "$bin" synth --verilog verilog_out/$top.v --top-module $top --entries $n --lib $lib --no-energy --json \
                --out build/synth_hum > "$out/${top}_${lib}.json"
        done
    done
done
python3 eval/report.py eval
