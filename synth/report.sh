#!/bin/sh
# Regenerates synth/reports/mlb_sweep.{md,json} (docs/synth.md).
#
#   synth/report.sh                 every job below (about an hour on two cores)
#   synth/report.sh a7_mlb a7_unit8 only those jobs
#
# Each job is one `mlugen synth --json` run whose output is committed as
# synth/reports/parts/<job>.json; the report is then rebuilt from every part
# there, so rerunning some jobs keeps the others' committed results. Jobs run
# two at a time (JOBS=1 for one), each in its own work directory
# build/synth-report/<job>/. CYCLES measured cycles per energy workload
# (default 100). A failed job keeps its old part, and the script exits
# non-zero without rebuilding the report. Run from the repository root.
set -e
M=${MLUGEN:-target/release/mlugen}
P=synth/reports/parts
O=build/synth-report
# Longest first, so two lanes finish close together.
ALL="a7_unit16 a7_unit8 n45_unit16 n45_unit8 a7_unit16_noheap a7_unit8_noheap a7_mlb n45_mlb a7_mlb16 a7_var a7_ungated a7_rr n45_mlb16 n45_var n45_ungated n45_rr n45_canary a7_canary n45_canary_tagged a7_canary_tagged"

# The mlugen synth arguments of each job.
job_args() {
  case $1 in
    # The plain MLB (one-stage, PLRU, clock-gated), every size; the block split for 16.
    n45_mlb)     echo "--lib nangate45 --entries 1,2,4,8,32 --no-blocks" ;;
    n45_mlb16)   echo "--lib nangate45 --entries 16" ;;
    n45_var)     echo "--lib nangate45 --entries 8,16 --hit-latency 2 --no-blocks" ;;
    n45_ungated) echo "--lib nangate45 --entries 8,16 --clock-gating off --no-blocks" ;;
    n45_rr)      echo "--lib nangate45 --entries 8,16 --config synth/rr.json --no-blocks" ;;
    a7_mlb)      echo "--lib asap7 --entries 1,2,4,8,32 --no-blocks" ;;
    a7_mlb16)    echo "--lib asap7 --entries 16" ;;
    a7_var)      echo "--lib asap7 --entries 8,16 --hit-latency 2 --no-blocks" ;;
    a7_ungated)  echo "--lib asap7 --entries 8,16 --clock-gating off --no-blocks" ;;
    a7_rr)       echo "--lib asap7 --entries 8,16 --config synth/rr.json --no-blocks" ;;
    # The committed MLU unit tops (the MLU as an SM unit): mlu8_bst_k4_l32_p2_c2
    # and mlu16_bst_k4_l32_p2_c2; workloads recorded from the golden model
    # and checked on the RTL (verif::energy_workload::unit_workloads),
    # replayed into the gate netlist (docs/synth.md). The canary top's are
    # recorded on its RTL.
    n45_unit8)   echo "--lib nangate45 --top unit --config synth/unit8.json" ;;
    n45_unit16)  echo "--lib nangate45 --top unit --config synth/unit16.json" ;;
    a7_unit8)    echo "--lib asap7 --top unit --config synth/unit8.json" ;;
    a7_unit16)   echo "--lib asap7 --top unit --config synth/unit16.json" ;;
    # The same units without the heap window's lookup path (unit.heap_path
    # false), and the canary unit with tags: hw::generate::report_only_tops,
    # not kept in verilog_out/ (mlugen synth generates them). The path's
    # cost is the difference.
    a7_unit8_noheap)  echo "--lib asap7 --top unit --config synth/unit8_noheap.json" ;;
    a7_unit16_noheap) echo "--lib asap7 --top unit --config synth/unit16_noheap.json" ;;
    n45_canary)  echo "--lib nangate45 --top canary" ;;
    a7_canary)   echo "--lib asap7 --top canary" ;;
    # The tagged canary unit: area and timing only (its energy workloads'
    # model, verif::energy_workload::canary_params, is the untagged unit's).
    n45_canary_tagged) echo "--lib nangate45 --top canary --tag-seed 0xACE1 --no-energy" ;;
    a7_canary_tagged)  echo "--lib asap7 --top canary --tag-seed 0xACE1 --no-energy" ;;
    *) return 1 ;;
  esac
}

# Internal: one job (called by the xargs below).
if [ "$1" = "--one" ]; then
  name=$2
  args=$(job_args "$name")
  mkdir -p "$O/$name" "$P"
  log="$O/$name/log.txt"
  echo "synth/report.sh: $name: mlugen synth $args (log $log)" >&2
  # shellcheck disable=SC2086 # $args is a word list
  if "$M" synth --json --out "$O/$name" --energy-cycles "${CYCLES:-100}" $args > "$O/$name/part.json" 2> "$log"; then
    mv "$O/$name/part.json" "$P/$name.json"
    echo "synth/report.sh: $name: done" >&2
  else
    echo "synth/report.sh: job $name failed:" >&2
    tail -n 5 "$log" >&2
    exit 1
  fi
  exit 0
fi

JOBS_TO_RUN=${*:-$ALL}
for j in $JOBS_TO_RUN; do
  job_args "$j" > /dev/null || { echo "synth/report.sh: unknown job $j (jobs: $ALL)" >&2; exit 2; }
done
test -x "$M" || { echo "synth/report.sh: $M not built (cargo build --release)" >&2; exit 2; }
# xargs exits non-zero if any job did; the report is then not rebuilt.
if ! printf '%s\n' $JOBS_TO_RUN | xargs -n 1 -P "${JOBS:-2}" "$0" --one; then
  echo "synth/report.sh: a job failed; report not rebuilt (the committed parts of the others are unchanged)" >&2
  exit 1
fi
"$M" synth --report-from "$P" --report synth/reports
