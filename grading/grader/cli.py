"""Command line of grading/grade.py."""

from __future__ import annotations

import argparse
import os
import re
import secrets
import signal
import sys
import threading
from pathlib import Path

from . import class_outputs, signing
from .class_folder import REFUSED_FILE, ClassFolder, not_graded_lines, scan, selected, warnings, write_refused
from .cpu_share import CpuShare
from .engine import NO_GPU_MESSAGE, PUBLIC_SEED, Grader, Options
from .manifest import GraderError, check_programs, ensure_build, load_manifest
from .merge import merge
from .policy import Policy
from .records import StudentRecord
from .reports import summary_table
from .student_names import shown
from .process import kill_all
from .sandbox import Limits, Sandbox
from .sanitizer_findings import FINDINGS
from .toolchain import Toolchain
from .toolkit import toolkit_of
from .verdicts import NOT_RUN, PASSED
from .workers import list_gpus, run_workers

GRADING_DIR = Path(__file__).resolve().parent.parent
REPO = GRADING_DIR.parent
SELF_NAME = "self"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_NO_SANDBOX, EXIT_UNFINISHED, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 5, 130
EXIT_REFUSED = 6   # a class grading that refused a folder of the class folder (a link, a name no student can have)
SHARD = re.compile(r"(\d+)/(\d+)")

DESCRIPTION = """Grades reduction-labs submissions: compiles each student's lab files against the official
skeletons, runs the tests, compute-sanitizer and the benchmark, and writes the gradebook.

  class:  grade.py SUBMISSIONS_DIR --build-dir BUILD --out OUT [options]
  self:   grade.py --self [LABS_DIR] --build-dir BUILD --out OUT    (check your own labs/ first)

A class of any size: --gpus all (one worker per GPU of this host), or --shard K/N on N machines
sharing OUT, then --merge; a Slurm cluster: grade.py --slurm ... (docs/slurm.md).
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grade.py", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", nargs="?", type=Path,
                        help="folder with one folder per student (<student>/labs/NN_name/<file>)")
    parser.add_argument("--self", dest="self_dir", nargs="?", const=REPO / "labs", type=Path, metavar="LABS_DIR",
                        help="grade your own lab files (default: this checkout's labs/) instead of a class")
    parser.add_argument("--build-dir", type=Path, help="CMake build tree (configured and built if it has no "
                        "reduction_labs.json); --self default: build/student")
    parser.add_argument("--out", type=Path, help="output folder; --self default: <build>/self-check")
    parser.add_argument("--policy", type=Path,
                        help="grading policy (default: grading/policy.toml)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel compiles (default: cores)")
    parser.add_argument("--labs", help="only these labs, e.g. 02,05 (default: all)")
    parser.add_argument("--student", action="append", help="only this student (repeatable, or a,b,c; a value that "
                        "is a student's whole name is that student: --student='Doe, Jane')")
    parser.add_argument("--no-sanitizer", action="store_true", help="skip compute-sanitizer")
    parser.add_argument("--no-bench", action="store_true", help="skip the benchmark (no performance points)")
    parser.add_argument("--large", action="store_true", help="also run the Large.* tests (n > 2^31)")
    parser.add_argument("--force", action="store_true", help="regrade students that are already complete")
    parser.add_argument("--no-plots", action="store_true", help="draw no figures when the grading or the merge ends "
                        "(the class report then says so)")
    parser.add_argument("--no-build", action="store_true",
                        help="use BUILD as it is: never run CMake (for callers inside a build, e.g. grade-example)")
    parser.add_argument("--require-sandbox", action="store_true",
                        help=f"refuse to grade (exit status {4}) when student code cannot be sandboxed here")
    parser.add_argument("--seed", type=int, help="the inputs' seed (default: a new one each run; --self: the "
                        f"public {PUBLIC_SEED}); a report names the seed its failures replay with")
    parser.add_argument("--in-flight", type=int, help="students graded at the same time on one GPU: compiles and tests "
                        "overlap, timing runs alone (default: [pipeline] students of the policy)")
    parser.add_argument("--gpus", help="all, or GPU indices/UUIDs (0,1): one worker per GPU, students spread over them, "
                        "then the class outputs (default: the one GPU CUDA picks)")
    parser.add_argument("--shard", help="K/N: grade only the students at positions K, K+N, K+2N, ... of the sorted class "
                        "(0 <= K < N); shards share OUT, and --merge builds the class outputs")
    parser.add_argument("--merge", action="store_true", help="grade nothing: build the class outputs and plots from the "
                        f"complete records in OUT; exit status {EXIT_UNFINISHED} while students are left")
    parser.add_argument("--worker", help=argparse.SUPPRESS)   # set by --gpus on the workers it starts
    return parser


def parse_shard(text: str) -> tuple[int, int]:
    match = SHARD.fullmatch(text.strip())
    if not match or not 0 <= int(match.group(1)) < int(match.group(2)):
        raise GraderError(f"--shard {text!r}: give K/N with 0 <= K < N, e.g. 0/4")
    return int(match.group(1)), int(match.group(2))


def without_option(argv: list[str], name: str) -> list[str]:
    """argv without `name VALUE` and `name=VALUE`."""
    kept, skip = [], False
    for item in argv:
        if skip:
            skip = False
        elif item == name:
            skip = True
        elif not item.startswith(name + "="):
            kept.append(item)
    return kept


def skeleton_dirs(manifest) -> list[Path]:
    """Official skeletons: the release keeps pristine copies in grading/skeletons (a student's own
    labs/ holds their edits); the course repository's labs/ is pristine."""
    dirs = [GRADING_DIR / "skeletons", manifest.source_dir / "labs"]
    return [d for d in dirs if d.is_dir()]


def print_self_details(record: StudentRecord) -> None:
    for folder, entry in record.labs.items():
        print(f"\n{folder}: {entry.verdict}")
        if entry.verdict != PASSED and entry.detail:
            print("  " + entry.detail.replace("\n", "\n  "))
        if entry.compile.output and not entry.compile.ok:
            print("  compiler output:\n    " + entry.compile.output[-3000:].replace("\n", "\n    "))
        for finding in entry.sanitizer.findings:
            if finding["status"] in FINDINGS:
                print(f"  {finding['tool']}: {finding['count']} finding(s) {finding['note']}".rstrip())
                for line in finding["report"][:6]:
                    print("    " + line)
        for note in entry.notes + entry.score.notes:
            print("  " + note.replace("\n", "\n  "))


def self_check_status(record: StudentRecord) -> int:
    """0: every lab passed; 3: the rest was not run (no GPU here), nothing failed; 1: a lab failed."""
    verdicts = [entry.verdict for entry in record.labs.values()]
    if all(v == PASSED for v in verdicts):
        print("\nself-check: every lab passed")
        return EXIT_OK
    if all(v in (PASSED, NOT_RUN) for v in verdicts):
        print(f"\nself-check incomplete: {verdicts.count(NOT_RUN)} GPU lab(s) not run ({NO_GPU_MESSAGE}); "
              "run it on a machine with a GPU (exit status 3)")
        return EXIT_INCOMPLETE
    failed = [folder for folder, entry in record.labs.items() if entry.verdict not in (PASSED, NOT_RUN)]
    print(f"\nself-check: {len(failed)} lab(s) not passed: {', '.join(failed)}")
    return EXIT_FAILED


def not_graded_summary(out: Path, folder: ClassFolder, status: bool = True) -> str:
    """The end of a class run's console: what of the class folder was not graded, and why. With
    `status`, the run ends with EXIT_REFUSED when a folder was refused (a shard or a --gpus worker
    leaves that to the merge that completes the class)."""
    if not folder.not_graded:
        return ""
    lines = [f"\nnot graded: {len(folder.refused)} folder(s) of the class folder refused, "
             f"{len(folder.not_graded) - len(folder.refused)} ignored ({out}/{REFUSED_FILE}, the class report):",
             *not_graded_lines(folder)]
    if folder.refused and status:
        lines.append(f"a refused folder may be a student's: rename or replace it and grade again (exit status "
                     f"{EXIT_REFUSED})")
    return "\n".join(lines)


def merge_class(out: Path, manifest, folder: ClassFolder, labs, policy: Policy, plots: bool = True) -> int:
    roster = [name for name, _ in folder.students]
    merged = merge(out, manifest.labs, roster, plots, leaderboard=bool(policy.section("gradescope")["leaderboard"]))
    print(summary_table(merged.records, labs))
    print(f"\nclass outputs: {out}/gradebook.csv, timings.csv, junit.xml, gradescope/; {merged.plots}")
    if folder.not_graded:
        print(not_graded_summary(out, folder, status=not merged.unfinished))
    if merged.unfinished:
        print(f"\n{len(merged.unfinished)} of {len(roster)} student(s) not graded yet: "
              f"{', '.join(map(shown, merged.unfinished))}; run the grading again to grade them "
              f"(exit status {EXIT_UNFINISHED})")
        return EXIT_UNFINISHED
    print(f"\nall {len(roster)} students graded")
    return EXIT_REFUSED if folder.refused else EXIT_OK


def on_gpus(args, argv, out: Path, manifest, options: Options, folder: ClassFolder, students, policy: Policy,
            worker_command: list[str] | None = None) -> int:
    """One worker process per GPU over `students` (workers.py), then the class outputs."""
    gpus = list_gpus(args.gpus)
    seed = options.seed if options.seed is not None else secrets.randbits(62)   # the same inputs on every GPU
    signing.load_key(out)   # made once here, not raced for by the workers
    grade_args = without_option(without_option(list(sys.argv[1:] if argv is None else argv), "--gpus"), "--seed")
    grade_args += ["--seed", str(seed), "--no-build", "--build-dir", str(manifest.binary_dir), "--out", str(out)]
    # One run id for the workers: with --force each redoes what an earlier run graded, not what a sibling just did.
    run = "@" + secrets.token_hex(8)
    log = lambda text: print(text, flush=True)  # noqa: E731
    jobs = max(1, options.jobs // len(gpus))
    failed = run_workers(grade_args, gpus, len(students), jobs, log, run, worker_command)
    status = merge_class(out, manifest, folder, options.labs, policy, plots=not args.no_plots)
    print(f"\ninputs: seed {seed} (replay a failure with --seed {seed})")
    if failed:
        print(f"{len(failed)} worker(s) failed: " + ", ".join(f"GPU {gpu} (exit {code})" for gpu, code in failed))
        return status if status not in (EXIT_OK, EXIT_REFUSED) else EXIT_FAILED   # a failed worker comes first
    return status


def _stop(signum, frame):
    kill_all()
    raise KeyboardInterrupt


def main(argv=None, toolchain=None, manifest=None, worker_command=None) -> int:
    """The command line; tests pass a ready manifest and a simulated toolchain (no build, no GPU), and
    for --gpus the command its workers run (grader_tests/simulated_grade.py)."""
    args = build_parser().parse_args(argv)
    log = lambda text: print(text, flush=True)  # noqa: E731
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stop)  # `timeout` and job schedulers: stop the runs, keep the results
    try:
        if (args.submissions is None) == (args.self_dir is None):
            raise GraderError("give either SUBMISSIONS_DIR or --self [LABS_DIR] (see --help)")
        self_check = args.self_dir is not None
        build_dir = args.build_dir or (REPO / "build" / "student" if self_check else None)
        if build_dir is None or (args.out is None and not self_check):
            raise GraderError("--build-dir and --out are required (see --help)")
        out = args.out or build_dir / "self-check"
        default_policy = GRADING_DIR / "policy.toml"
        policy = Policy.load(args.policy or (default_policy if default_policy.is_file() else None))
        if manifest is None and args.no_build:
            manifest = load_manifest(build_dir)
            check_programs(manifest)
        if manifest is None:
            manifest = ensure_build(REPO, build_dir, log=log)
        labs = manifest.select(args.labs.split(",") if args.labs else None)
        in_flight = args.in_flight if args.in_flight is not None else int(policy.section("pipeline")["students"])
        options = Options(labs=labs, jobs=max(1, args.jobs), sanitizer=not args.no_sanitizer,
                          bench=not args.no_bench, force=args.force or self_check, large=args.large,
                          self_check=self_check, in_flight=1 if self_check else max(1, in_flight),
                          seed=args.seed if args.seed is not None else (PUBLIC_SEED if self_check else None))
        roster, folder = None, None
        if self_check:
            labs_dir = args.self_dir
            if not labs_dir.is_dir():
                raise GraderError(f"{labs_dir}: not a folder")
            students = [(SELF_NAME, labs_dir)]
        else:
            folder = scan(args.submissions)
            for line in ([] if args.worker else warnings(folder)):   # a --gpus worker's parent says it once
                log(line)
            if not folder.students:
                raise GraderError(f"{shown(str(args.submissions))}: no student folders")
            students = selected(folder, args.student)
            # The class files list the whole class, also when only some students are graded now.
            roster = [name for name, _ in folder.students]
            write_refused(out, folder)   # the class report lists the folders not graded, and why
        if self_check and (args.merge or args.gpus or args.shard):
            raise GraderError("--merge, --gpus and --shard are for a class, not --self")
        if args.merge:
            return merge_class(out, manifest, folder, labs, policy, plots=not args.no_plots)
        if args.shard:
            index, count = parse_shard(args.shard)
            students = [s for s in students if roster.index(s[0]) % count == index]
            options.run_tag = f"shard-{index}-of-{count}"
            if not students:
                log(f"--shard {index}/{count}: no student of this class falls in it; nothing to grade")
                return EXIT_OK
        if args.worker:
            tag, _, run = args.worker.partition("@")
            tag = re.sub(r"[^A-Za-z0-9-]", "-", tag)[:80]
            options.run_tag, options.class_outputs, options.run = f"worker-{tag}", False, run
        if args.gpus:
            return on_gpus(args, argv, out, manifest, options, folder, students, policy, worker_command)
        if toolchain is None:
            # Nothing the grader owns is visible to student code: the repository (solutions/), the build
            # tree (reference modules), the outputs and the other submissions.
            hidden = [REPO, manifest.source_dir, manifest.binary_dir, out, manifest.reference_dir or REPO,
                      args.submissions or args.self_dir]
            limits = policy.section("sandbox")
            large = options.large or policy.section("tests")["large"]
            # The CUDA toolkit's libraries are looked for too, wherever it is (outside /usr and /opt, say).
            toolkit = [toolkit_of(manifest.nvcc).root] if manifest.nvcc else []
            toolchain = Toolchain(manifest, Sandbox.detect((Path(p).resolve() for p in hidden), toolkit),
                                  Limits(file_bytes=int(limits["output_mib"]) << 20, processes=int(limits["processes"]),
                                         memory_bytes=int(limits["large_memory_gib" if large else "memory_gib"]) << 30),
                                  allow_cccl=bool(policy.section("compile")["allow_cccl"]),
                                  cpu_share=CpuShare.detect())
        if args.require_sandbox and toolchain.sandbox_status().startswith("UNSANDBOXED"):
            print(f"error: --require-sandbox: {toolchain.sandbox_status()}", file=sys.stderr)
            return EXIT_NO_SANDBOX
        if hasattr(toolchain, "hidden_libraries"):  # the real one: find every CUB and Thrust before the first compile
            try:                                      # (which also checks that nvcc runs in the compile's view)
                toolchain.hidden_libraries()
            except RuntimeError as exc:
                raise GraderError(f"cannot prepare the students' compiles (CUB and Thrust hidden, in the compile's "
                                  f"view): {exc}") from exc
        grader = Grader(manifest, policy, toolchain, out, options,
                        skeleton_dirs=skeleton_dirs(manifest), log=log)
        result = grader.grade_class(students, roster)
    except GraderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        kill_all()
        print("\ninterrupted: completed students are saved; rerun to resume", file=sys.stderr)
        return EXIT_INTERRUPTED

    graded = [r for r in result.records if r.student in {name for name, _ in students}]
    print()
    print(summary_table(graded, labs))
    if result.no_gpu:
        print(f"\n{NO_GPU_MESSAGE}: GPU labs that compiled are NOT_RUN (blank in the gradebook, not 0) and "
              "totals are left blank; lab 01, compile errors and missing labs are graded.")
    if result.sanitizer_missing:
        why = result.sanitizer_note or "compute-sanitizer is not on PATH"
        print(f"\nsanitizer not available ({why}): no sanitizer checks, no penalty.")
    if result.skipped:
        print(f"\n{len(result.skipped)} student(s) already graded were skipped (--force to regrade).")
    print(f"\ninputs: seed {result.seed} (replay a failure with --seed {result.seed}); student code: {result.sandbox}")
    print(f"reports: {out}/gradebook.csv, timings.csv, junit.xml, students/, gradescope/")
    if options.class_outputs:
        names = roster or [name for name, _ in students]
        print(class_outputs.finish(out, manifest.labs, names, result.records, plots=not args.no_plots))
    if self_check and graded:
        print_self_details(graded[0])
        return self_check_status(graded[0])
    ends_class = not (args.shard or args.worker)   # a shard's or a worker's merge says it, and sets the status
    if folder is not None and folder.not_graded and not args.worker:
        print(not_graded_summary(out, folder, status=ends_class))
    return EXIT_REFUSED if ends_class and folder is not None and folder.refused else EXIT_OK
