#!/usr/bin/env bash
# One call on a GPU machine: configure + build (solutions preset), the test suites (default and
# large labels), compute-sanitizer on every reference's small cases, the A/A check and a
# benchmark of the references. Full logs go to $OUT (default ./device-out); a short table last.
#
#   bash grading/device_check.sh [--quick] [--labs 02,05] [--sizes 2^24,2^28]
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/device-out}
logs=$out/logs
mkdir -p "$logs"
quick=0 labs="" sizes="2^24,2^28"
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --labs) labs=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
build=$here/build/solutions
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
step() {  # step NAME LOG COMMAND...: runs, logs, records PASS/FAIL and seconds
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  if "$@" >"$logs/$log" 2>&1; then note "PASS  $name ($((SECONDS - t0)) s)"; return 0; fi
  note "FAIL  $name ($((SECONDS - t0)) s, log: $log)"; tail -n 40 "$logs/$log"; return 1
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee "$logs/gpu.txt"
py=$(command -v python3)
step configure configure.log cmake --preset solutions -DREDUCTION_PYTHON="$py" || exit 1
step build build.log cmake --build --preset solutions -j 16 || exit 1
step ctest ctest.log ctest --preset solutions -j 4 --timeout 1800
[ $quick = 1 ] || step ctest-large ctest-large.log ctest --preset solutions-large -j 2 --timeout 1800

# compute-sanitizer on the references' small cases (a selection, to keep it to minutes).
filter='Small.int_mixed_sign_n2049:Small.float_uniform_positive_n1025:Small.int_small_integers_n33:Small.float_mixed_sign_n65535:Contract.EmptyInputGivesZero_*'
for module in "$build"/solutions/lab*.so; do
  lab=$(basename "$module" .so)
  [ -n "$labs" ] && ! echo ",$labs," | grep -q ",${lab:3:2}," && continue
  for tool in memcheck racecheck synccheck initcheck; do
    step "sanitize $lab $tool" "sanitize-$lab-$tool.log" \
      compute-sanitizer --tool $tool --error-exitcode 99 "$build/grading/reduction_lab_tests" --lab="$module" \
      --gtest_filter="$filter"
  done
done

bench=$build/common/bench/reduction_bench
lab_args=()
[ -n "$labs" ] && lab_args=(--labs "$labs")
step "A/A check" aa.log "$bench" --aa "${lab_args[@]}" --sizes 2^24 --types float,int --budget 1
grep "A/A check" "$logs/aa.log" | tee -a "$summary"
step bench bench.log "$bench" --references-only "${lab_args[@]}" --sizes "$sizes" --types float,int --budget 1 \
  --csv "$out/bench.csv" --json "$out/bench.json" && cp "$logs/bench.log" "$out/bench.log"
# Few files come back from a device call: the logs travel as one archive.
tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$logs"
echo
echo "== summary =="
cat "$summary"
echo
sed -n '/^who/,$p' "$out/bench.log" 2>/dev/null || true
