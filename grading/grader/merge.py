"""The class outputs of a grading done in pieces (`--merge`): the workers of `--gpus`, the tasks of a
Slurm array, or runs stopped and resumed, all write signed per-student records into one OUT; this
builds from them exactly what a single run writes at its end (reports.write_class_outputs), then
the plots, and says which students are not graded yet.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import reports, signing
from .manifest import Lab
from .records import StudentRecord

PLOTS = Path(__file__).resolve().parents[2] / "plots" / "reduction_plots.py"
PLOT_COMMAND = Path(__file__).resolve().parents[2] / "tools" / "plot.sh"   # it finds a Python with matplotlib


@dataclass
class MergeResult:
    records: list[StudentRecord] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)   # roster students with no complete signed record
    plots: str = ""                                       # what became of the plots, in words


def _sandbox_of(records: list[StudentRecord]) -> str:
    """The class is as sandboxed as its least sandboxed record."""
    for record in records:
        if reports.unsandboxed(record):
            return record.sandbox
    return records[0].sandbox if records else ""


def draw_plots(out: Path) -> str:
    timings = out / "timings.csv"
    if not timings.is_file() or timings.stat().st_size == 0:
        return "no plots: no timings"
    if not PLOTS.is_file():
        return "no plots: plots/ is not part of this installation"
    if importlib.util.find_spec("matplotlib") is None:
        return (f"no plots: matplotlib is not installed for {sys.executable}; draw them with "
                f"bash {PLOT_COMMAND} {timings} --out {out / 'plots'}")
    result = subprocess.run([sys.executable, str(PLOTS), str(timings), "--out", str(out / "plots")],
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        return f"plots failed (exit {result.returncode}): {(result.stderr or result.stdout).strip()[-300:]}"
    return f"plots: {out / 'plots'}"


def merge(out: Path, labs: list[Lab], roster: list[str], plots: bool = True, leaderboard: bool = False) -> MergeResult:
    out = Path(out)
    key = signing.load_key(out)
    complete = reports.load_records(out, roster, key)
    result = MergeResult()
    result.records = reports.write_class_outputs(out, labs, roster, key, _sandbox_of(complete), leaderboard)
    done = {record.student for record in result.records}
    result.unfinished = [name for name in roster if name not in done]
    result.plots = draw_plots(out) if plots else "no plots (not asked for)"
    return result
