#!/usr/bin/env bash
# After a CTest run: how many tests were skipped, and why (CTest itself only lists them, and
# "100% tests passed" reads as if they ran). The tests skipped for want of a GPU make one count;
# every other skipped test gets a line with its reason: the first line of its output that says
# "SKIPPED:" (grader.slurm, grader.attacks, ci.*), from the build's LastTest.log.
#   bash tools/skip_summary.sh CTEST_OUTPUT BUILD_DIR
set -euo pipefail
output=$1 build=$2
log=$build/Testing/Temporary/LastTest.log
total=$(sed -nE 's/.* tests? (failed|passed) out of ([0-9]+).*/\2/p' "$output" | tail -1)  # "..., M tests failed out of T", or "N% tests passed out of T" (newer CTest, none failed)
[ -n "$total" ] || exit 0        # no test step ran (the build failed): nothing to count
mapfile -t skipped < <(sed -nE 's/^[[:space:]]*[0-9]+ - (.*) \(Skipped\)$/\1/p' "$output")
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
