#!/usr/bin/env bash
# One call on a GPU machine: configure + build (solutions preset), then the stages asked for:
#   test      ctest, default labels            large     ctest, label large (2^31 + 7)
#   sanitize  ctest, label sanitize            aa        the A/A checks at 2^24: in one process, and the grader's
#   bench     the references, CUB and the roof  grade     the grader over the example class, checked
#   attacks   the grader over the attack class, checked (sandboxed: root and bubblewrap)
#   profile   ncu on a few labs' references     classic   racecheck on the racy lab 07 fixture
#   beyond    labs 10, 11 and CUB from 2^16 to 2^28, lab 12's operators, the tail-launch recursion
#   scale     grading/tools/bench_throughput.py: a synthetic class of 60, one GPU and every GPU, solo runs
#             (SCALE_ARGS: its options, e.g. "--students 40 --solo 1"; SCALE_TIMEOUT: its limit)
# The grader runs student code under bubblewrap: a GPU machine without network gets it from a
# .deb in .debs/ (here: `apt-get download bubblewrap` into .debs/, git-ignored; carry .debs), and
# libseccomp2 (its seccomp filter) the same way where the machine lacks libseccomp.so.2.
# Full logs go to $OUT/logs.tar.gz (default ./device-out); a short table is printed last.
#
#   bash grading/device_check.sh [--stages test,sanitize,aa,bench] [--labs 02,05] [--sizes 2^24,2^28]
# GRADE_TIMEOUT (seconds, default 900) bounds each class's grading; REDUCTION_GRADE_RESUME=1 goes on
# with a grading a call's time limit cut off (examples/grade_class.sh), on the same machine.
# CTEST_EXCLUDE (a ctest -E pattern) for the test stage: by default grader.attacks (the attacks
# stage grades that class), and grader.example too when the grade stage runs (it grades the same
# class and checks it the same way: examples/grade_class.sh). CTEST_JOBS: ctest -j (default 8).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/device-out}
logs=$out/logs
mkdir -p "$logs"
stages="test,sanitize,aa,bench" labs="" sizes="2^24,2^28" profile_labs="04,05,07,10"
while [ $# -gt 0 ]; do
  case $1 in
    --stages) stages=$2; shift ;;
    --labs) labs=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --profile-labs) profile_labs=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
wants() { echo ",$stages," | grep -q ",$1,"; }
build=$here/build/solutions
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
step() {  # step NAME LOG COMMAND...: runs, logs, records PASS/FAIL and seconds
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  if "$@" >"$logs/$log" 2>&1; then note "PASS  $name ($((SECONDS - t0)) s)"; return 0; fi
  note "FAIL  $name ($((SECONDS - t0)) s, log: $log)"; tail -n 30 "$logs/$log"; return 1
}
finish() {  # few files come back from a device call: the logs travel as one archive
  tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$logs"
  echo; echo "== summary =="; cat "$summary"
}
trap finish EXIT

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee "$logs/gpu.txt"
# Before the tests: grader.unit runs the sandbox for real, and a release's bootstrap wants bwrap.
if ! command -v bwrap >/dev/null; then
  for deb in "$here"/.debs/bubblewrap*.deb; do [ -f "$deb" ] && dpkg -x "$deb" / && note "bubblewrap from $(basename "$deb")"; done
fi
# Its seccomp filter is built with the system's libseccomp.so.2 (apt depends on it; a bare image may lack it).
if ! ldconfig -p 2>/dev/null | grep -q 'libseccomp[.]so[.]2 '; then
  for deb in "$here"/.debs/libseccomp2_*.deb; do
    [ -f "$deb" ] && dpkg -x "$deb" / && ldconfig && note "libseccomp2 from $(basename "$deb")"
  done
fi
# The build finds and checks its Python (common/cmake/FindPythonWithMatplotlib.cmake); an empty
# REDUCTION_PYTHON makes it search again rather than keep an earlier configure's choice.
step configure configure.log cmake --preset solutions -DREDUCTION_PYTHON= || exit 1
py=$(sed -n 's/^REDUCTION_PYTHON:[A-Z]*=//p' "$build/CMakeCache.txt")
py=${py:-$(command -v python3)}   # none has matplotlib (configure warned): the grader needs only the standard library
step build build.log cmake --build --preset solutions -j 16 || exit 1
if wants test; then  # and which tests were skipped, each with its reason (tools/skip_summary.sh)
  # ci.student_run and ci.release_run read the checkout through git: a copy whose commit lags its
  # files (a machine that got the files but an older .git) tests the commit. Say so before they fail.
  changed=$(git -C "$here" status --porcelain 2>/dev/null | grep -c .)
  [ "${changed:-0}" -gt 0 ] && note "note: $changed path(s) differ from the checkout's commit ($(git -C "$here" log -1 --format=%h 2>/dev/null)): the ci.* tests read the commit"
  exclude='^grader[.]attacks$'
  wants grade && exclude='^grader[.](attacks|example)$'
  step ctest ctest.log ctest --preset solutions -j "${CTEST_JOBS:-8}" --timeout 1800 --output-on-failure \
    -E "${CTEST_EXCLUDE:-$exclude}"
  bash "$here/tools/skip_summary.sh" "$logs/ctest.log" "$build" | tee -a "$summary"
  # Every test's output, passed ones too (--output-on-failure shows only the failed): where a test's time went.
  cp "$build/Testing/Temporary/LastTest.log" "$logs/ctest-all-output.log" 2>/dev/null
fi
wants sanitize && { step "ctest sanitize" ctest-sanitize.log ctest --preset sanitize -j 4 --timeout 1800 --output-on-failure;
                    grep -E "Test +#|tests passed" "$logs/ctest-sanitize.log" | grep -v Passed >>"$summary"; }
wants large && step "ctest large" ctest-large.log ctest --preset solutions-large -j 3 --timeout 1800

bench=$build/common/bench/reduction_bench
lab_args=()
[ -n "$labs" ] && lab_args=(--labs "$labs")
if wants aa; then
  step "A/A check" aa.log "$bench" --aa "${lab_args[@]}" --sizes 2^24 --types float,int --budget 1
  grep "A/A check" "$logs/aa.log" | tee -a "$summary"
  # The grader's own: each reference timed as a student's (sandboxed) between trusted runs.
  step "grader A/A check" aa-grader.log "$py" grading/tools/aa_timing.py --build-dir "$build" --labs "${labs:-01,05,09,10}" \
    --rounds 4
  grep -E "^(student side|A/A over)" "$logs/aa-grader.log" | tee -a "$summary"
fi
if wants bench; then
  step bench bench.log "$bench" --references-only "${lab_args[@]}" --sizes "$sizes" --types float,int --budget 0.5 \
    --csv "$out/bench.csv" --json "$out/bench.json"
  sed -n '/^who/,$p' "$logs/bench.log" >>"$summary"
fi
if wants beyond; then  # issue 13's tables: lab 11 against CUB, lab 12's operators, dynamic parallelism
  step "lab 11 sweep" beyond-11.log "$bench" --references-only --labs 10,11 --sizes 2^16,2^20,2^22,2^24,2^26,2^28 \
    --types float,int --csv "$out/lab11-sweep.csv"
  sed -n '/^who/,$p' "$logs/beyond-11.log" >>"$summary"
  step "lab 12 operators" beyond-12.log "$bench" --references-only --labs 10,12 --operators all --sizes 2^24,2^28 \
    --types float,int --csv "$out/lab12-operators.csv"
  sed -n '/^who/,$p' "$logs/beyond-12.log" >>"$summary"
  step "recursive tail launch" beyond-dp.log "$bench" --student-dir "$build/docs/code/modules" --student-name recursive \
    --labs 10 --sizes 2^16,2^20,2^24,2^28 --types float,int
  sed -n '/^who/,$p' "$logs/beyond-dp.log" >>"$summary"
fi
for class in grade attacks; do  # stage "grade" grades the example class
  wants $class || continue
  kind=$([ $class = grade ] && echo example || echo attacks)
  t0=$SECONDS
  step "grade $kind class" "grade-$kind.log" timeout "${GRADE_TIMEOUT:-900}" bash examples/grade_class.sh "$kind" "$build"
  note "grading the $kind class took $((SECONDS - t0)) s for $(ls -d "$build/classes/$kind"/*/ | wc -l) folders"
  grep -E "total .* \(compile" "$logs/grade-$kind.log" | sed -E 's/^\[student [0-9/]+\] //' >>"$logs/steps-$kind.txt"
  grep -m1 "^inputs:" "$logs/grade-$kind.log" >>"$summary"
  grep -ho "the first [a-z ]* failed for a resource ([^)]*)[^;]*; run again alone: [A-Za-z_]*" \
    "$build/grading-$kind"/students/*.json | sort | uniq -c >>"$summary"
  sed -n '/^student  /,/^P passed/p' "$logs/grade-$kind.log" >>"$summary"
  sed -n '/^Failed checks:/,/checks hold/p' "$logs/grade-$kind.log" | head -n 30 >>"$summary"
  grep -E "checks hold" "$logs/grade-$kind.log" | tail -n 1 >>"$summary"
  if [ $kind = example ]; then
    REDUCTION_PYTHON=$py bash tools/plot.sh "$build/grading-example/timings.csv" --out "$build/grading-example/plots" \
      >>"$logs/plots.log" 2>&1
  fi
  tar -czf "$out/grade-$kind.tar.gz" -C "$build" "grading-$kind"
done
if wants scale; then  # issue 12's figures: seconds per student on one GPU, the speedup on every GPU
  # SCALE_ARGS: bench_throughput.py's own options (e.g. "--students 40 --solo 1"); SCALE_TIMEOUT (s,
  # default 900) bounds it, and what it wrote comes back: its summary and the workers' ledgers.
  read -r -a scale_args <<<"${SCALE_ARGS:-}"
  step "grading throughput" scale.log timeout "${SCALE_TIMEOUT:-900}" "$py" grading/tools/bench_throughput.py \
    --build-dir "$build" --out "$build/bench-throughput" "${scale_args[@]}"
  cp "$build/bench-throughput/summary.md" "$out/throughput-summary.md" 2>/dev/null
  find "$build/bench-throughput" -name ledger.jsonl | tar -czf "$out/throughput-ledgers.tar.gz" -T - 2>/dev/null
  sed -n '/^run /,$p' "$logs/scale.log" | head -n 40 >>"$summary"
fi
if wants classic; then  # what a student sees from racecheck on the classic volatile-only last warp
  compute-sanitizer --tool racecheck --print-limit 6 "$build/grading/reduction_lab_tests" \
    --lab="$build/grading/fixtures/lab07_classic_volatile.so" --gtest_filter=Small.int_mixed_sign_n2049 \
    >"$out/racecheck_classic.txt" 2>&1
  note "classic volatile last warp under racecheck: exit $? ($(grep -c 'Error: Race' "$out/racecheck_classic.txt") race reports shown)"
fi
if wants profile; then
  for lab in ${profile_labs//,/ }; do
    step "profile lab $lab" "profile-$lab.log" "$py" grading/tools/profile_lab.py --lab "$lab" --build-dir "$build" --who reference
    cat "$logs/profile-$lab.log" >>"$summary"
  done
fi
