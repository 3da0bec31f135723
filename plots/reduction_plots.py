"""Draw the reduction-labs figures (by lab, speedup ladder, per student, size sweep, status, leaderboard; on
request lab 10's coarsening study) from a timings CSV: the command line. Loading is plotting/timings.py, each
figure its own module."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor

from plotting.by_lab import plot_by_lab
from plotting.coarsening import plot_coarsening
from class_files.names import student_file_name
from plotting.ladder import plot_ladder
from plotting.leaderboard import DEFAULT_TOP, plot_leaderboard
from plotting.per_student import plot_student
from plotting.status import plot_status
from plotting.sweep import plot_sweep
from plotting.timings import (DEFAULT_N, add_grader_verdicts, DEFAULT_TYPE, ELEMENT_BYTES, REFERENCE, NoDataError, RunInfo,  # noqa: F401
                              Timing, TimingsError, bandwidth_gbps, find_sidecar, lab_order, ladder_speedups,
                              load_sidecar, load_timings, run_info, student_names)

import matplotlib  # noqa: E402

FIGURES = ("status", "by-lab", "ladder", "per-student", "sweep", "leaderboard")
# Drawn only when named: their rows come from one study's CSV, not from a class or a benchmark run.
ON_REQUEST = ("coarsening",)
FORMATS = ("png", "svg", "pdf")


def save_figure(figure, out_dir, stem, formats=("png", "svg")) -> list[str]:
    """Write the figure once per format; text stays text in SVG and dates are left out so reruns diff cleanly."""
    paths = []
    for fmt in formats:
        path = os.path.join(out_dir, f"{stem}.{fmt}")
        metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(fmt, {})
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "reduction-labs"}):
            figure.savefig(path, format=fmt, dpi=150, bbox_inches="tight", metadata=metadata)
        paths.append(path)
    return paths


def _comma_list(allowed=None):
    def parse(text):
        items = [item.strip() for item in text.split(",") if item.strip()]
        unknown = [item for item in items if allowed and item not in allowed]
        if not items or unknown:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(allowed or ['names'])}")
        return items
    return parse


def _element_count(text):
    """Accept 16777216, 2^24 or 1<<24: the course writes sizes all three ways."""
    match = re.fullmatch(r"\s*(?:(\d+)|2\s*\^\s*(\d+)|1\s*<<\s*(\d+))\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"expected an element count such as 16777216 or 2^24, got '{text}'")
    plain, power, shift = match.groups()
    return int(plain) if plain else 1 << int(power or shift)


def _usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Plot reduction-labs timings (see plots/README.md).")
    parser.add_argument("timings", help="timings.csv from a grading run or a student benchmark")
    parser.add_argument("--out", required=True, help="directory for the figures (created if missing)")
    parser.add_argument("--json", help="run metadata sidecar (default: the CSV's stem + .json, if present)")
    parser.add_argument("--figures", type=_comma_list(FIGURES + ON_REQUEST),
                        help=f"subset of {','.join(FIGURES)} (default: all), or {','.join(ON_REQUEST)} "
                             "(lab 10's coarsening study: grading/tools/coarsening_study.py)")
    parser.add_argument("--n", type=_element_count, default=DEFAULT_N, help="size for by-lab/ladder/per-student")
    parser.add_argument("--type", dest="dtype", choices=sorted(ELEMENT_BYTES), default=DEFAULT_TYPE)
    parser.add_argument("--anonymize", action="store_true", help="show students as 'student 1..k' (sorted order)")
    parser.add_argument("--student", help="overlay this student's times on the ladder")
    parser.add_argument("--labs", type=_comma_list(), help="labs for the size sweep (default: all references)")
    parser.add_argument("--metric", choices=("time", "gbps"), default="time", help="y axis of the size sweep")
    parser.add_argument("--top", type=int, default=DEFAULT_TOP, help="leaderboard: bars per lab (the fastest)")
    parser.add_argument("--formats", type=_comma_list(FORMATS), default=["png", "svg"])
    parser.add_argument("--jobs", type=int, default=_usable_cores(),
                        help="processes drawing the figures (default: the cores this may use)")
    return parser


def _figures_for(name, rows, args, info):
    """(file stem, figure) pairs for one --figures entry; figures are drawn lazily, one at a time."""
    common = {"n": args.n, "dtype": args.dtype, "info": info}
    if name == "status":
        yield "status", plot_status(rows, anonymize=args.anonymize, **common)
    elif name == "by-lab":
        yield "by_lab", plot_by_lab(rows, anonymize=args.anonymize, **common)
    elif name == "ladder":
        yield "ladder", plot_ladder(rows, student=args.student, anonymize=args.anonymize, **common)
    elif name == "per-student":
        for index, student in enumerate(student_names(rows), 1):
            yield _student_stem(args, index, student), plot_student(rows, student, anonymize=args.anonymize, **common)
    elif name == "sweep":
        yield "sweep", plot_sweep(rows, dtype=args.dtype, labs=args.labs, metric=args.metric, info=info)
    elif name == "leaderboard":  # never a name, with or without --anonymize
        yield "leaderboard", plot_leaderboard(rows, top=args.top, **common)
    elif name == "coarsening":
        yield f"coarsening_{args.dtype}", plot_coarsening(rows, dtype=args.dtype, info=info)


def _student_stem(args, index: int, student: str) -> str:
    return f"student_{index}" if args.anonymize else f"student_{student_file_name(student)}"


def _draw_students(rows, args, info, chunk: list[tuple[int, str]]) -> list[tuple[int, list[str]]]:
    """The per-student figures of `chunk` ((index, student) pairs), each saved: (index, its paths)."""
    drawn = []
    for index, student in chunk:
        figure = plot_student(rows, student, anonymize=args.anonymize, n=args.n, dtype=args.dtype, info=info)
        drawn.append((index, save_figure(figure, args.out, _student_stem(args, index, student), args.formats)))
    return drawn


def _draw_named(rows, args, info, name: str) -> list[str]:
    """One --figures entry other than per-student, drawn and saved: its paths."""
    return [path for stem, figure in _figures_for(name, rows, args, info)
            for path in save_figure(figure, args.out, stem, args.formats)]


def _draw_serially(rows, args, info, name: str) -> list[str]:
    if name == "per-student":
        return [path for pair in _draw_students(rows, args, info, list(enumerate(student_names(rows), 1)))
                for path in pair[1]]
    return _draw_named(rows, args, info, name)


def _draw_in_parallel(rows, args, info, names) -> dict[str, list[str]]:
    """Every figure by --jobs processes: each class figure a task, the per-student figures in chunks
    (a class of 16's figures: 12.7 s with one process, 8.4 s with two, on a 2-core VM; the class
    figures, 2 to 4 s each, had run one after another before the students' chunks began). The
    class figures go first: they are the longest tasks. Returns {name: its paths, as one process
    would list them}; a figure that raised raises here, when its result is read."""
    students = list(enumerate(student_names(rows), 1))
    jobs = max(1, args.jobs)
    chunks = [chunk for chunk in (students[k::jobs] for k in range(jobs)) if chunk]
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        named = {name: pool.submit(_draw_named, rows, args, info, name) for name in names if name != "per-student"}
        per_student = ([pool.submit(_draw_students, rows, args, info, chunk) for chunk in chunks]
                       if "per-student" in names else [])
        drawn = {}
        for name in names:
            if name != "per-student":
                drawn[name] = _result(named[name].result, args, name)
                continue
            pairs = _result(lambda: dict(pair for future in per_student for pair in future.result()), args, name)
            drawn[name] = [path for index, _ in students for path in pairs.get(index, [])] if pairs else []
    return drawn


def _result(result, args, name):
    """result(); a figure without data is skipped with one warning unless it was asked for by name."""
    try:
        return result()
    except NoDataError as exc:
        if args.figures:  # asked for by name: not drawing it is an error
            raise
        print(f"warning: skipping {name}: {exc}", file=sys.stderr)
        return []


def _run(args) -> list[str]:
    rows = add_grader_verdicts(load_timings(args.timings), args.timings)
    sidecar_path = args.json or find_sidecar(args.timings)
    info = run_info(rows, load_sidecar(sidecar_path) if sidecar_path else None)
    if args.student is not None and args.student not in student_names(rows):
        raise TimingsError(f"student '{args.student}' is not in {args.timings}")
    os.makedirs(args.out, exist_ok=True)
    names = args.figures or FIGURES
    if args.jobs > 1:
        drawn = _draw_in_parallel(rows, args, info, names)
        written = [path for name in names for path in drawn[name]]
    else:
        written = []
        for name in names:
            written += _result(lambda: _draw_serially(rows, args, info, name), args, name)
    if not written:
        raise TimingsError(f"{args.timings}: nothing to plot")
    return written


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.top < 1:
        build_parser().error("--top must be at least 1")
    try:
        written = _run(args)
    except (TimingsError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
