#!/usr/bin/env bash
# The main job: checks (or, as root, installs) the prerequisites, then builds everything, grades
# the example class and draws its plots into build/solutions/grading-example/.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/bootstrap.sh
reduction_bootstrap
cmake --workflow --preset grade-example
