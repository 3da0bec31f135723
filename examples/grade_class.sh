#!/usr/bin/env bash
# Grades a class end to end with the real grader, sandboxed, and checks every verdict, the points
# and the class-level invariants (examples/check_class.py), then the class report in a browser
# (examples/check_report.py; skipped, saying why, where no browser is installed):
#
#   bash examples/grade_class.sh attacks|example BUILD_DIR
#   REDUCTION_GRADE_ARGS="--in-flight 8" bash examples/grade_class.sh ...   # more options for grade.py
#   REDUCTION_GRADE_RESUME=1 bash examples/grade_class.sh ...   # go on with a grading that was cut off
#   REDUCTION_GRADE_LIMIT_S=600 bash examples/grade_class.sh ...  # a hang's limit (default 2400 s): past
#                                       # it, the grader's processes and threads' stacks, then it stops
#
# A grading cut off (a machine lent for a few minutes at a time) goes on where it stopped with
# REDUCTION_GRADE_RESUME=1: the students already graded keep their records (grade.py without --force)
# and the check looks for the same secrets as the first part, kept in BUILD_DIR/classes/<class>.secrets.
#
# The class is written from its recipes into BUILD_DIR/classes/<class>, the grading goes to
# BUILD_DIR/grading-<class>. Without a GPU the check expects what a machine without one must give
# (GPU labs NOT_RUN). The attack class is graded only inside the sandbox (root and bubblewrap):
# elsewhere this exits with the skip code (grading/contract.json), skipped, because unsandboxed
# its students would harm the machine.
set -uo pipefail
kind=${1:?usage: grade_class.sh attacks|example BUILD_DIR}
build=$(cd "${2:?usage: grade_class.sh attacks|example BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
py=${REDUCTION_PYTHON:-python3}
. "$here/tools/skip_code.sh"   # $skip_code, CTest's SKIP_RETURN_CODE
class=$build/classes/$kind
out=$build/grading-$kind

"$py" "$here/examples/make_examples.py" --class "$kind" --out "$class" >/dev/null || exit 1
secrets=$build/classes/$kind.secrets
resume=${REDUCTION_GRADE_RESUME:-0}
if [ "$resume" = 1 ] && [ -f "$secrets" ] && [ -d "$out" ]; then
  . "$secrets"
  force=()
  echo "resuming the grading in $out (the students graded there keep their records)"
else
  [ "$resume" = 1 ] && echo "nothing to resume in $out: grading from the start"
  # A value the grader has and student code must never see: check_class.py looks for it in every report.
  REDUCTION_TEST_SECRET="secret-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
  # A key of the grader's session keyring (examples/with_session_key.py): no report may hold it either.
  REDUCTION_KEY_SECRET="grader-key-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
  printf 'REDUCTION_TEST_SECRET=%s\nREDUCTION_KEY_SECRET=%s\n' "$REDUCTION_TEST_SECRET" "$REDUCTION_KEY_SECRET" >"$secrets"
  force=(--force)
  rm -rf "$out"
fi
export REDUCTION_TEST_SECRET REDUCTION_KEY_SECRET
# The sandbox users' processes from before (another service's, another grading's): not this one's leftovers.
running_before=$("$py" "$here/examples/check_class.py" --sandbox-pids || true)
# A grading still running after REDUCTION_GRADE_LIMIT_S (default 2400, under CTest's 3000) is a hang:
# its process tree and every thread's stack (grade.py's SIGUSR1) are printed, then it is stopped.
limit=${REDUCTION_GRADE_LIMIT_S:-2400}
"$py" "$here/examples/with_session_key.py" -- \
  "$py" "$here/grading/grade.py" "$class" --build-dir "$build" --out "$out" --no-build "${force[@]}" --require-sandbox \
  ${REDUCTION_GRADE_ARGS:-} &
grader=$!
trap 'kill -TERM $grader 2>/dev/null' INT TERM
waited=0
while kill -0 $grader 2>/dev/null && [ $waited -lt "$limit" ]; do sleep 1; waited=$((waited + 1)); done
if kill -0 $grader 2>/dev/null; then
  echo "grade.py did not end within $limit s (REDUCTION_GRADE_LIMIT_S); what it runs:"
  ps --deselect --ppid 2 -p 2 -o pid,ppid,user,stat,etime,wchan:24,args --forest | cut -c1-200 | head -150
  kill -USR1 $grader; sleep 3; kill -TERM $grader; sleep 20; kill -KILL $grader 2>/dev/null
  wait $grader
  echo "grade.py did not end within $limit s: its threads' stacks and processes are above"
  exit 1
fi
wait $grader
status=$?
trap - INT TERM
if [ $status = 4 ]; then
  echo "SKIPPED: the $kind class is graded only in the sandbox (run as root with bubblewrap installed)"
  exit "$skip_code"
fi
# 0, or 6 when the grading refused a folder (the attack class has folders to refuse: check_class.py
# checks that the status is the one the class calls for, with the rest)
[ $status = 0 ] || [ $status = 6 ] || { echo "grade.py exited with status $status"; exit 1; }
"$py" "$here/examples/check_class.py" "$class" "$out" --detect-gpu --running-before "$running_before" \
  --exit-status "$status"
verdicts=$?
# The class report in a browser (the skip code: none here, and it said so; the verdicts above
# still decide). Its own limits bound each browser command; this bounds the whole.
timeout -k 30 900 "$py" "$here/examples/check_report.py" "$out"
report=$?
[ $report = 124 ] && echo "check_report.py did not end within 900 s"
[ $report = "$skip_code" ] && report=0
[ $verdicts = 0 ] && [ $report = 0 ]
