#!/usr/bin/env bash
# The test command: checks (or, as root, installs) the prerequisites, then configures, builds
# and tests with a CMake workflow preset, and ends with the tests that failed, if any (each with
# a command that runs it again), then a line that counts the skipped tests and says why they
# were skipped (tools/skip_summary.sh). Its exit status is the workflow's.
#   bash tools/test.sh            # the `ci` workflow: every lab as skeleton and solution
#   bash tools/test.sh student    # the `student` workflow: your labs/ and their tests
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/bootstrap.sh
preset=${1:-ci}
if [ "$preset" = ci ]; then reduction_bootstrap browser; else reduction_bootstrap; fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cmake --workflow --preset "$preset" 2>&1 | tee "$log" || status=$?
bash tools/skip_summary.sh "$log" "build/$preset"
exit "$status"
