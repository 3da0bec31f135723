#!/usr/bin/env bash
# The test command: checks (or, as root, installs) the prerequisites, then configures, builds
# and tests, and ends with the tests that failed, if any (each with a command that runs it
# again), then a line that counts the skipped tests and says why they were skipped
# (tools/skip_summary.sh): CTest's own last lines say "100% tests passed" even when every test
# it ran was skipped. Its exit status is CTest's (the workflow's).
#   bash tools/test.sh                          # the `ci` workflow (every lab as skeleton and
#                                               #   solution); in a student release, `student`
#   bash tools/test.sh student                  # the `student` workflow: your labs/ and their tests
#   bash tools/test.sh student -L lab02         # a test preset and CTest's arguments: builds the
#   bash tools/test.sh student-large -L lab02   #   preset's tree (configures it the first time),
#   bash tools/test.sh sanitize -R lab07        #   then ctest --preset PRESET ARGS...
#   bash tools/test.sh --dry-run student -L lab02   # says what it would run and stops (nothing
#                                                   #   checked, installed or built)
# A name with nothing after it runs the workflow preset of that name when there is one, and
# otherwise the test preset of that name (student-large, student-sanitize, solutions-large, sanitize).
set -euo pipefail
cd "$(dirname "$0")/.."
dry_run=0
if [ "${1:-}" = --dry-run ]; then dry_run=1; shift; fi

# How to run NAME (empty: the default, `ci` where CMakePresets.json has that workflow, else
# `student`): "NAME workflow" when there are no CTest arguments and a workflow preset has that
# name; else "NAME test CONFIGURE" for the test preset of that name (its tree: build/CONFIGURE,
# its build preset: CONFIGURE); "NAME test" when there is no such test preset.
preset_plan() {
  python3 - "$@" <<'EOF'
import json, sys
name, with_args = sys.argv[1], sys.argv[2] != "0"
presets = json.load(open("CMakePresets.json", encoding="utf-8"))
workflows = [p["name"] for p in presets.get("workflowPresets", [])]
name = name or ("ci" if "ci" in workflows else "student")
if not with_args and name in workflows:
    print(name, "workflow")
else:
    print(" ".join([name, "test"] + [p.get("configurePreset", "") for p in presets.get("testPresets", [])
                                     if p["name"] == name][:1]))
EOF
}

plan=$(preset_plan "${1:-}" $(($# > 1 ? $# - 1 : 0)))
preset=${plan%% *}
plan=${plan#* }
shift $(($# > 0 ? 1 : 0))
configure=${plan#test}
configure=${configure# }
if [ "$plan" != workflow ] && [ -z "$configure" ]; then
  echo "tools/test.sh: '$preset' is no test preset of CMakePresets.json (ctest --list-presets lists them)" >&2
  exit 2
fi
if [ "$dry_run" = 1 ]; then
  if [ "$plan" = workflow ]; then
    echo "tools/test.sh: would run: cmake --workflow --preset $preset"
  else
    echo "tools/test.sh: would run: cmake --build --preset $configure && ctest --preset $preset $*"
  fi
  exit 0
fi

source tools/bootstrap.sh
if [ "$preset" = ci ]; then reduction_bootstrap browser; else reduction_bootstrap; fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
if [ "$plan" = workflow ]; then
  build=build/$preset
  cmake --workflow --preset "$preset" 2>&1 | tee "$log" || status=$?
else
  build=build/$configure
  {
    { [ -f "$build/CMakeCache.txt" ] || cmake --preset "$configure"; } &&
      cmake --build --preset "$configure" &&
      ctest --preset "$preset" "$@"
  } 2>&1 | tee "$log" || status=$?
fi
bash tools/skip_summary.sh "$log" "$build"
exit "$status"
