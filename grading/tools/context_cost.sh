#!/bin/bash
# What one CUDA process costs a grading, and whether a second GPU shares that cost. It starts many
# short processes of the course's lab test binary (one lab's small cases each: the shape of a
# grading's test runs) and times them in six ways:
#   warm-up   P at a time, dealt over every GPU named (not to compare)
#   A         P at a time, all on the first GPU
#   B         P at a time, dealt round robin over every GPU named
#   C         2P at a time, dealt over every GPU named
#   D         2P at a time, all on the first GPU
#   E         one at a time, on the first GPU
# If B takes as long as A, what limits the processes is global to the host (the cores, or the
# driver's work to create and end a context), not a GPU: a second GPU then adds little to a
# grading made of such processes, and only fewer processes per student help.
#
#   bash grading/tools/context_cost.sh [BUILD_DIR]   (default build/solutions, a built solutions preset)
# Environment: GPUS (default "0 1"), AT_ONCE (P, default 8), RUNS_PER_LAB (default 4: 44 processes
# over labs 02-12), REDUCTION_LAB_TESTS (the test binary; default BUILD_DIR/grading/reduction_lab_tests),
# CONNECTIONS (default "default 1": each configuration once per value of CUDA_DEVICE_MAX_CONNECTIONS,
# "default" leaving it unset: the driver's 8 hardware queues; [tests] cuda_connections of the policy),
# WRAP (a command put before each process, e.g. "compute-sanitizer --tool memcheck": what a
# grading's sanitizer runs cost; default none). A bare CUDA process (a context, one kernel, exit) was
# measured to cost an H200 VM's host as much as a lab's small cases (2026-11-28, a probe, not this tool).
# Each line: wall seconds of the configuration, then a process's mean elapsed, sys and user seconds.
set -uo pipefail
build=${1:-build/solutions}
tests=${REDUCTION_LAB_TESTS:-$build/grading/reduction_lab_tests}
read -r -a gpus <<<"${GPUS:-0 1}"
at_once=${AT_ONCE:-8}
runs_per_lab=${RUNS_PER_LAB:-4}
read -r -a connections <<<"${CONNECTIONS:-default 1}"
modules=$(ls "$build"/solutions/lab{02,03,04,05,06,07,08,09,10,11,12}_*.so 2>/dev/null)
[ -x "$tests" ] || { echo "context_cost: no test binary at $tests (build the solutions preset first)" >&2; exit 2; }
[ -n "$modules" ] || { echo "context_cost: no lab modules in $build/solutions" >&2; exit 2; }
times=$(mktemp -d)
trap 'rm -rf "$times"' EXIT
export tests times WRAP

one() {  # one GPU MODULE: one process on that GPU, its elapsed, sys and user seconds to a file of its own
  local TIMEFORMAT="%R %S %U"
  # shellcheck disable=SC2086  # WRAP is a command and its arguments
  { time CUDA_VISIBLE_DEVICES=$1 ${WRAP:-} "$tests" --lab="$2" --gtest_filter='Small.*' >/dev/null 2>&1; } 2>"$(mktemp "$times/t.XXXXXX")"
}
export -f one

deal() {  # deal GPU...: every run, one line "GPU MODULE" each, the GPUs in turn
  local i=0 round module
  for ((round = 0; round < runs_per_lab; round++)); do
    for module in $modules; do
      echo "${@:$((i % $# + 1)):1} $module"
      i=$((i + 1))
    done
  done
}

configuration() {  # configuration NAME AT_ONCE GPU...
  local name=$1 parallel=$2 start end
  shift 2
  rm -f "$times"/t.*
  start=$(date +%s.%N)
  deal "$@" | xargs -P "$parallel" -L 1 bash -c 'one "$0" "$1"'
  end=$(date +%s.%N)
  cat "$times"/t.* | awk -v name="$name" -v start="$start" -v end="$end" '
    { elapsed += $1; sys += $2; user += $3; runs++ }
    END { printf "%-34s wall %6.2f s  runs %d  mean elapsed %.3f s  sys %.3f  user %.3f\n",
                 name, end - start, runs, elapsed / runs, sys / runs, user / runs }'
}

first=${gpus[0]}
[ -n "${WRAP:-}" ] && echo "each process wrapped in: $WRAP"
configuration "warm-up (not to compare)" "$at_once" "${gpus[@]}"
for queues in "${connections[@]}"; do
  if [ "$queues" = default ]; then unset CUDA_DEVICE_MAX_CONNECTIONS; else export CUDA_DEVICE_MAX_CONNECTIONS=$queues; fi
  echo "CUDA_DEVICE_MAX_CONNECTIONS: $queues"
  configuration "A: $at_once at a time, GPU $first" "$at_once" "$first"
  configuration "B: $at_once at a time, GPUs ${gpus[*]}" "$at_once" "${gpus[@]}"
  configuration "C: $((2 * at_once)) at a time, GPUs ${gpus[*]}" "$((2 * at_once))" "${gpus[@]}"
  configuration "D: $((2 * at_once)) at a time, GPU $first" "$((2 * at_once))" "$first"
  configuration "E: 1 at a time, GPU $first" 1 "$first"
done
