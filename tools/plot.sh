#!/usr/bin/env bash
# The plot command, with a Python that has matplotlib: python3 on PATH may have none while
# Debian's python3-matplotlib serves /usr/bin/python3. The Python is the build's
# (tools/bootstrap.sh's reduction_python_with_matplotlib: the search of
# common/cmake/FindPythonWithMatplotlib.cmake), or REDUCTION_PYTHON when set. Every argument goes
# to plots/reduction_plots.py (plots/README.md).
#   bash tools/plot.sh OUT/timings.csv --out OUT/plots
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/tools/bootstrap.sh"
if ! python=$(reduction_python_with_matplotlib); then
  if [ -n "${REDUCTION_PYTHON:-}" ]; then
    echo "plot: REDUCTION_PYTHON=$REDUCTION_PYTHON cannot import matplotlib: install matplotlib for it," \
         "or unset REDUCTION_PYTHON to use the Python the build finds" >&2
  else
    echo "plot: no Python 3 with matplotlib here (tried python3 on PATH, /usr/bin/python3, /usr/local/bin/python3)." \
         "Install it: sudo apt-get install -y python3-matplotlib (Debian 12 / Ubuntu 24.04)," \
         "or python3 -m pip install matplotlib; or set REDUCTION_PYTHON to a python3 that has it" >&2
  fi
  exit 2
fi
exec "$python" "$here/plots/reduction_plots.py" "$@"
