#!/usr/bin/env bash
# The exit status of a test that cannot run here, from its one home: grading/contract.json,
# "skip_code" (CTest's SKIP_RETURN_CODE). Sourced, it sets $skip_code; run, it prints it. Bash
# builtins only: a test may run a script on a PATH that holds nothing else.
skip_code=""
while IFS= read -r line || [ -n "$line" ]; do
  if [[ $line =~ \"skip_code\":\ *([0-9]+) ]]; then skip_code=${BASH_REMATCH[1]}; fi
done <"${BASH_SOURCE[0]%/*}/../grading/contract.json"
if [ -z "$skip_code" ]; then
  echo "tools/skip_code.sh: no \"skip_code\" in grading/contract.json" >&2
  return 1 2>/dev/null || exit 1
fi
if [ "${BASH_SOURCE[0]}" = "$0" ]; then echo "$skip_code"; fi
