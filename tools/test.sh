#!/usr/bin/env bash
# The test command: checks (or, as root, installs) the prerequisites, then configures, builds
# and tests, and ends with the tests that failed, if any (each with a command that runs it
# again), then a line that counts the skipped tests and says why they were skipped
# (tools/skip_summary.sh): CTest's own last lines say "100% tests passed" even when every test
# it ran was skipped. Its exit status is CTest's (the workflow's).
#   bash tools/test.sh                          # the `ci` workflow: every lab as skeleton and solution
#   bash tools/test.sh student                  # the `student` workflow: your labs/ and their tests
#   bash tools/test.sh student -L lab02         # a test preset and CTest's arguments: builds the
#   bash tools/test.sh student-large -L lab02   #   preset's tree (configures it the first time),
#   bash tools/test.sh sanitize -R lab07        #   then ctest --preset PRESET ARGS...
# A name with nothing after it runs the workflow preset of that name when there is one, and
# otherwise the test preset of that name (student-large, student-sanitize, solutions-large, sanitize).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/bootstrap.sh
preset=${1:-ci}
shift $(($# > 0 ? 1 : 0))
if [ "$preset" = ci ]; then reduction_bootstrap browser; else reduction_bootstrap; fi

# How to run NAME: "workflow" when there are no CTest arguments and a workflow preset has that
# name; else "test CONFIGURE" for the test preset of that name (its tree: build/CONFIGURE, its
# build preset: CONFIGURE); "test" alone when there is no such test preset.
preset_plan() {
  python3 - "$@" <<'EOF'
import json, sys
name, with_args = sys.argv[1], sys.argv[2] != "0"
presets = json.load(open("CMakePresets.json", encoding="utf-8"))
if not with_args and any(p["name"] == name for p in presets.get("workflowPresets", [])):
    print("workflow")
else:
    print(" ".join(["test"] + [p.get("configurePreset", "") for p in presets.get("testPresets", [])
                               if p["name"] == name][:1]))
EOF
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
plan=$(preset_plan "$preset" $#)
if [ "$plan" = workflow ]; then
  build=build/$preset
  cmake --workflow --preset "$preset" 2>&1 | tee "$log" || status=$?
else
  configure=${plan#test}
  configure=${configure# }
  if [ -z "$configure" ]; then
    echo "tools/test.sh: '$preset' is no test preset of CMakePresets.json (ctest --list-presets lists them)" >&2
    exit 2
  fi
  build=build/$configure
  {
    { [ -f "$build/CMakeCache.txt" ] || cmake --preset "$configure"; } &&
      cmake --build --preset "$configure" &&
      ctest --preset "$preset" "$@"
  } 2>&1 | tee "$log" || status=$?
fi
bash tools/skip_summary.sh "$log" "$build"
exit "$status"
