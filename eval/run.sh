#!/usr/bin/env bash
# Regenerates the evaluation report: eval/README.md, eval/sweep.json,
# eval/sweep.csv and eval/svg/*.svg, from the four traces in traces/ (format
# version 2 with their Nsight Compute counters), in one command:
#   eval/run.sh            (from the repository root or anywhere)
# Every number in README.md comes from this run; nothing is typed in.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
cargo build --release -q
traces=(traces/resnet50_infer.jsonl.gz traces/resnet50_train.jsonl.gz traces/gpt2_train.jsonl.gz traces/bert_infer.jsonl.gz)
mkdir -p eval/svg
target/release/mlugen sweep --trace "${traces[@]}" --json eval/sweep.json --csv eval/sweep.csv --svg eval/svg \
    --report eval/README.md >/dev/null 2>eval/sweep.log
tail -n 1 eval/sweep.log
