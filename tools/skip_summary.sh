#!/usr/bin/env bash
# One line after a CTest run: how many tests were skipped, and why (CTest itself only lists
# them, and "100% tests passed" reads as if they ran).
#   bash tools/skip_summary.sh CTEST_OUTPUT BUILD_DIR
set -euo pipefail
output=$1 build=$2
skipped=$(grep -cE '^[[:space:]]*[0-9]+ - .* \(Skipped\)$' "$output" || true)
total=$(sed -nE 's/.* tests? failed out of ([0-9]+).*/\1/p' "$output" | tail -1)
[ -n "$total" ] || exit 0        # no test step ran (the build failed): nothing to count
if [ "$skipped" -eq 0 ]; then
  echo "all $total tests ran; none skipped"
elif grep -q "no CUDA device present" "$build/Testing/Temporary/LastTest.log" 2>/dev/null; then
  echo "$skipped of $total tests skipped: no CUDA device on this machine (they run on a machine with a GPU)"
else
  echo "$skipped of $total tests skipped (see CTest's list above and $build/Testing/Temporary/LastTest.log)"
fi
