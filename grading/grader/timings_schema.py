"""The timings.csv schema, defined once in plots/plotting/timings.py (the plots read what the grader
writes), and the formula-safe CSV cell (plots/plotting/csv_cells.py: gradebook.csv's and timings.csv's,
which the plots read back), imported from there: the grader stays standard-library only, and so are
those modules."""

from __future__ import annotations

import sys
from pathlib import Path

_PLOTS = Path(__file__).resolve().parents[2] / "plots"
if str(_PLOTS) not in sys.path:
    sys.path.insert(0, str(_PLOTS))

from plotting.timings import BASELINE, COLUMNS as TIMINGS_COLUMNS, REFERENCE  # noqa: E402,F401
from plotting.csv_cells import FORMULA_STARTS, csv_cell, csv_text  # noqa: E402,F401
