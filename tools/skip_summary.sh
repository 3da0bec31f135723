#!/usr/bin/env bash
# After a CTest run: first the tests that failed, each with a command that runs it again, and
# where their output is; then how many tests were skipped, and why (CTest itself only lists them,
# and "100% tests passed" reads as if they ran). The tests skipped for want of a GPU make one
# count; every other skipped test gets a line with its reason: the first line of its output that
# says "SKIPPED:" (grader.slurm, grader.attacks, ci.*), from the build's LastTest.log.
# Only CTest's own summary is read (from its last "N% tests passed" line on): a test's output
# above it may quote another CTest run's lists (ci.student_run runs one).
#   bash tools/skip_summary.sh CTEST_OUTPUT BUILD_DIR
set -euo pipefail
output=$1 build=$2
log=$build/Testing/Temporary/LastTest.log
summary=$(awk '/^[0-9]+% tests passed/ { block = "" } { block = block $0 "\n" } END { printf "%s", block }' "$output")
# "N% tests passed, M tests failed out of T", or "N% tests passed out of T" (newer CTest, none failed)
total=$(sed -nE '1s/.* out of ([0-9]+).*/\1/p' <<<"$summary")
[ -n "$total" ] || exit 0        # no test step ran (the build failed): nothing to count
# The lists' lines: "  94 - grader.attacks (Failed)", newer CTest adds the labels after them.
listed() { sed -nE "s/^[[:space:]]*[0-9]+ - (.+) \\(($1)\\)([[:space:]].*)?\$/\\1\\t\\2/p"; }
mapfile -t failed < <(sed -n '/^The following tests FAILED:/,/^$/p' <<<"$summary" | listed '[^()]+')
mapfile -t skipped < <(listed Skipped <<<"$summary" | cut -f1)

if [ ${#failed[@]} -gt 0 ]; then
  echo "${#failed[@]} of $total tests FAILED (their output: above, and in $log):"
  for line in "${failed[@]}"; do
    name=${line%%$'\t'*}
    echo "  $name (${line#*$'\t'}); again: ctest --test-dir $build --output-on-failure -R '^${name//./\\.}\$'"
  done
fi
if [ ${#skipped[@]} -eq 0 ]; then
  echo "all $total tests ran; none skipped"
  exit 0
fi

# "name<TAB>reason" for each test of the log whose output says why it skipped.
reasons=$(awk '
  /^[0-9]+\/[0-9]+ Test: / { name = $0; sub(/^[0-9]+\/[0-9]+ Test: /, "", name); output = 0; next }
  /^Output:$/ { output = 1; next }
  /^<end of output>$/ { output = 0; next }
  output && !(name in reason) && /SKIPPED: |no CUDA device present/ {
    line = $0; sub(/^.*SKIPPED: /, "", line); reason[name] = line; print name "\t" line
  }' "$log" 2>/dev/null || true)

gpu=0
others=()
for name in "${skipped[@]}"; do
  why=$(awk -F'\t' -v name="$name" '$1 == name { print $2; exit }' <<<"$reasons")
  if [[ $why == *"no CUDA device present"* ]]; then
    gpu=$((gpu + 1))
  else
    others+=("  $name: ${why:-no reason in its output (see $log)}")
  fi
done
if [ "$gpu" -gt 0 ]; then
  echo "${#skipped[@]} of $total tests skipped: $gpu for want of a GPU (no CUDA device on this machine;" \
       "they run on a machine with a GPU)${others:+, and these:}"
else
  echo "${#skipped[@]} of $total tests skipped:"
fi
[ ${#others[@]} -eq 0 ] || printf '%s\n' "${others[@]}"
