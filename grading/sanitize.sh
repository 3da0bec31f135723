#!/usr/bin/env bash
# One compute-sanitizer run over a lab module's small test cases, for the CTest label `sanitize`.
#   sanitize.sh TOOL RUNNER MODULE [--expect-hazard]
# Exit 0: clean (or, with --expect-hazard, the tool found what it must find); the skip code
# (grading/contract.json): skipped because this machine has no CUDA GPU; 1: a hazard (the tool's
# report is in the output) or a missed one.
set -uo pipefail
tool=$1 runner=$2 module=$3 expect=${4:-}
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no CUDA device present: compute-sanitizer $tool test skipped (it runs on a GPU machine)"
  . "${0%/*}/../tools/skip_code.sh" && exit "$skip_code"
fi
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ ! -x "$sanitizer" ]; then
  echo "compute-sanitizer not found on PATH or in /usr/local/cuda/bin: cannot run the $tool check"
  exit 1
fi
# Small cases only: warp, block and tail edges, each type; the sanitizers slow kernels 10-100x.
# Lab 11 adds its calls back to back (the ticket and the last block, across launches).
filter='Small.int_mixed_sign_n33:Small.int_mixed_sign_n2049:Small.float_uniform_positive_n1025:Small.int_small_integers_n65535:Small.float_mixed_sign_n65535:Contract.EmptyInputGivesZero_*:Lab11.BackToBackCallsWithoutHostSyncAreEachRight_*'
# The Lab12 patterns (every operator at one and two blocks, and empty) match only lab 12's tests.
filter+=':Lab12.*_n33:Lab12.*_n4097:Lab12.Empty*'
export REDUCTION_CALL_TIMEOUT_S=600
"$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 20 "$runner" --lab="$module" --gtest_filter="$filter"
status=$?
if [ "$expect" = --expect-hazard ]; then
  if [ $status = 99 ]; then echo "compute-sanitizer $tool found the hazard this module plants, as it must"; exit 0; fi
  echo "compute-sanitizer $tool did NOT report the hazard this module plants (exit $status)"; exit 1
fi
[ $status = 0 ] && exit 0
echo "compute-sanitizer $tool: exit $status on $(basename "$module") (99 means hazards, reported above)"
exit 1
