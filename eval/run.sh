#!/usr/bin/env bash
# Regenerates the whole evaluation report (eval/README.md, eval/*.json,
# eval/*.csv, eval/svg/*.svg) from the four traces in traces/:
#   eval/run.sh            (from the repository root or anywhere)
# Every number in README.md comes from the sweeps below; nothing is typed in.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
cargo build --release -q
bin="$repo/target/release/mlugen"
traces=(traces/resnet50_infer.jsonl.gz traces/bert_infer.jsonl.gz traces/resnet50_train.jsonl.gz traces/gpt2_train.jsonl.gz)
out=eval
mkdir -p "$out/svg" "$out/svg-l1"
# 1. The full sweep at the default parameters (metadata reads at DRAM latency).
"$bin" sweep --trace "${traces[@]}" --json $out/sweep.json --csv $out/sweep.csv --svg $out/svg >/dev/null 2>$out/sweep.log
# 2. Sensitivity: metadata nodes hit in the L1 (30-cycle reads), data still at 400.
"$bin" sweep --trace "${traces[@]}" --meta-latency 30 --json $out/sweep_l1.json --csv $out/sweep_l1.csv --svg $out/svg-l1 >/dev/null 2>$out/sweep_l1.log
# 3. The extensions (compiler mode), each alone and both, at both metadata latencies.
for lat in 400 30; do
    "$bin" sweep --trace "${traces[@]}" --mode compiler --entries 0,8,16,32 --meta-latency $lat --host-locations --json $out/ext_host_$lat.json >/dev/null 2>>$out/ext.log
    "$bin" sweep --trace "${traces[@]}" --mode compiler --entries 0,8,16,32 --meta-latency $lat --hit-under-miss --json $out/ext_hum_$lat.json >/dev/null 2>>$out/ext.log
    "$bin" sweep --trace "${traces[@]}" --mode compiler --entries 0,8,16,32 --meta-latency $lat --host-locations --hit-under-miss --json $out/ext_both_$lat.json >/dev/null 2>>$out/ext.log
done
python3 eval/report.py eval
tail -n 1 $out/sweep.log
