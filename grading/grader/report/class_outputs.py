"""The class outputs, kept current as a grading goes and finished when it ends: the files of
reports.py (gradebook, timings, JUnit, Gradescope) and the class report (report/site/), then at the
end the figures (plots/reduction_plots.py) and the report once more, with them inline.

Used by a grading run (engine.py after each student, cli.py at its end) and by `--merge`, so both
write exactly the same files.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from . import reports
from ..manifest import Lab
from ..outputs.record_store import RecordStore
from ..outputs.records import StudentRecord
from ..paths import REPO
from .site import write_site

PLOTS = REPO / "plots" / "reduction_plots.py"
PLOT_COMMAND = REPO / "tools" / "plot.sh"   # it finds a Python with matplotlib
PLOTS_TIMEOUT_S = 600


def publish(out: Path, labs: list[Lab], names: list[str], key: bytes, sandbox: str = "",
            leaderboard: bool = False, graded: set[str] | None = None,
            store: RecordStore | None = None) -> list[StudentRecord]:
    """Rewrites the class files and the report from the signed, complete records of `names`; of the
    report's student pages and Gradescope files only those of `graded` when given (the student just
    graded). `store`: the grading's record store, which keeps what it has read between calls."""
    records = reports.write_class_outputs(out, labs, names, key, sandbox, leaderboard, store, only=graded)
    write_site(out, labs, names, records, only=graded)
    return records


def draw_plots(out: Path) -> str:
    """OUT/plots/ from OUT/timings.csv, by a Python with matplotlib; what became of them, in words."""
    timings = out / "timings.csv"
    if not timings.is_file() or len(timings.read_text(encoding="utf-8", errors="replace").splitlines()) < 2:
        return "no plots: no timings (nothing was timed: no GPU, or no lab passed)"
    if not PLOTS.is_file():
        return "no plots: plots/ is not part of this installation"
    if importlib.util.find_spec("matplotlib") is None:
        return (f"no plots: matplotlib is not installed for {sys.executable}; draw them with "
                f"bash {PLOT_COMMAND} {timings} --out {out / 'plots'}")
    result = subprocess.run([sys.executable, str(PLOTS), str(timings), "--out", str(out / "plots")],
                            capture_output=True, text=True, timeout=PLOTS_TIMEOUT_S)
    if result.returncode != 0:
        return f"plots failed (exit {result.returncode}): {(result.stderr or result.stdout).strip()[-300:]}"
    return f"plots: {out / 'plots'}"


def finish(out: Path, labs: list[Lab], names: list[str], records: list[StudentRecord], plots: bool = True) -> str:
    """The figures, then the report with them: what became of both, in words."""
    drawn = draw_plots(Path(out)) if plots else "no plots (not asked for)"
    index = write_site(Path(out), labs, names, records, "" if drawn.startswith("plots:") else drawn)
    return f"{drawn}; report: {index}"
