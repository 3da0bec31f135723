"""A grading run as data: one `GradingJob`, versioned JSON, that every way of running a grading reads.

The command line makes one from its options (`from_args`); `--gpus` writes one per worker (its GPU
and its share of the compiles set) and starts `grade.py --job FILE`; `--slurm` writes one for the
array's tasks and one for the merge; the throughput benchmark writes them too. Nobody rebuilds a
command line: a launcher changes fields of a job and hands the file on.

    {"format": "reduction-grading-job", "version": 1, "submissions": "/class", "build_dir": "/b",
     "out": "/o", "seed": 42, "labs": ["02", "05"], "sanitizer": true, ...}
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..contract import JOB_FORMAT, JOB_VERSION
from ..manifest import GraderError

SHARD = re.compile(r"(\d+)/(\d+)")


@dataclass
class GradingJob:
    build_dir: str
    out: str
    submissions: str | None = None     # a class folder: one folder per student
    self_dir: str | None = None        # or a student's own labs/ (--self)
    policy: str | None = None          # None: grading/policy.toml
    labs: list[str] | None = None      # None: every lab
    students: list[str] | None = None  # None: every student of the class folder
    seed: int | None = None            # None: a new one for this run
    run: str = ""                      # the run's id, shared by its workers ("": a new one)
    sanitizer: bool = True
    bench: bool = True
    large: bool = False
    force: bool = False
    plots: bool = True
    build: bool = True                 # configure and build build_dir when it has no manifest
    require_sandbox: bool = False
    in_flight: int | None = None       # None: the policy's [pipeline] students
    jobs: int | None = None            # parallel compiles (None: this machine's cores)
    shard: tuple[int, int] | None = None   # (K, N): the students at roster positions K, K+N, ...
    gpu: str | None = None             # set on one worker of a --gpus run: its GPU (the launcher sets CUDA_VISIBLE_DEVICES)
    merge: bool = False                # grade nothing: build the class outputs from OUT's records

    def to_json(self) -> dict:
        data = dataclasses.asdict(self)
        data["shard"] = list(self.shard) if self.shard else None
        return {"format": JOB_FORMAT, "version": JOB_VERSION, **data}

    @classmethod
    def from_json(cls, data: dict) -> "GradingJob":
        if not isinstance(data, dict) or data.get("format") != JOB_FORMAT:
            raise GraderError("not a grading job (no \"format\": \"%s\")" % JOB_FORMAT)
        if data.get("version") != JOB_VERSION:
            raise GraderError(f"a grading job of version {data.get('version')!r}: this grader reads version {JOB_VERSION}")
        values = {key: value for key, value in data.items() if key not in ("format", "version")}
        known = {f.name for f in dataclasses.fields(cls)}
        if set(values) - known:
            raise GraderError(f"a grading job with unknown fields: {', '.join(sorted(set(values) - known))}")
        if values.get("shard") is not None:
            values["shard"] = tuple(values["shard"])
        try:
            job = cls(**values)
        except TypeError as exc:
            raise GraderError(f"a grading job without a field it needs ({exc})") from None
        job.check()
        return job

    def check(self) -> None:
        """Types and ranges, once, where the job is made or read."""
        for name in ("sanitizer", "bench", "large", "force", "plots", "build", "require_sandbox", "merge"):
            if not isinstance(getattr(self, name), bool):
                raise GraderError(f"grading job: {name} must be true or false")
        for name in ("in_flight", "jobs"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int) and value >= 1):
                raise GraderError(f"grading job: {name} must be 1 or more")
        if self.seed is not None and not isinstance(self.seed, int):
            raise GraderError("grading job: seed must be an integer")
        if self.shard is not None:
            index, count = self.shard
            if not (isinstance(index, int) and isinstance(count, int) and 0 <= index < count):
                raise GraderError(f"--shard {index}/{count}: give K/N with 0 <= K < N, e.g. 0/4")
        if (self.submissions is None) == (self.self_dir is None):
            raise GraderError("give either SUBMISSIONS_DIR or --self [LABS_DIR] (see --help)")
        if self.self_dir is not None and (self.merge or self.shard or self.gpu is not None):
            raise GraderError("--merge, --gpus and --shard are for a class, not --self")

    @property
    def self_check(self) -> bool:
        return self.self_dir is not None

    @property
    def run_tag(self) -> str:
        """This grader's own folder under the run's, when graders share OUT (never a shared file)."""
        if self.gpu is not None:
            return "worker-gpu" + re.sub(r"[^A-Za-z0-9-]", "-", self.gpu)[:80]
        if self.shard:
            return f"shard-{self.shard[0]}-of-{self.shard[1]}"
        return ""

    def write(self, path: Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        os.replace(partial, path)
        return path


def load(path: Path) -> GradingJob:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GraderError(f"{path}: cannot read the grading job ({exc})") from None
    return GradingJob.from_json(data)


def parse_shard(text: str) -> tuple[int, int]:
    match = SHARD.fullmatch(text.strip())
    if not match or not 0 <= int(match.group(1)) < int(match.group(2)):
        raise GraderError(f"--shard {text!r}: give K/N with 0 <= K < N, e.g. 0/4")
    return int(match.group(1)), int(match.group(2))


def add_selection(parser: argparse.ArgumentParser) -> None:
    """The options that choose what a grading grades and how (grade.py and grade.py --slurm alike)."""
    parser.add_argument("--policy", type=Path, help="grading policy (default: grading/policy.toml)")
    parser.add_argument("--labs", help="only these labs, e.g. 02,05 (default: all)")
    parser.add_argument("--seed", type=int, help="the inputs' seed (default: a new one each run; --self: the "
                        "public one); a report names the seed its failures replay with")
    parser.add_argument("--no-sanitizer", action="store_true", help="skip compute-sanitizer")
    parser.add_argument("--no-bench", action="store_true", help="skip the benchmark (no performance points)")
    parser.add_argument("--large", action="store_true", help="also run the Large.* tests (n > 2^31)")
    parser.add_argument("--require-sandbox", action="store_true",
                        help="refuse to grade (exit status 4) when student code cannot be sandboxed here")


def from_args(args: argparse.Namespace, **paths) -> GradingJob:
    """The job of a parsed command line (`paths`: the resolved build_dir, out, submissions or self_dir)."""
    job = GradingJob(
        policy=str(args.policy.resolve()) if args.policy else None,
        labs=args.labs.split(",") if args.labs else None,
        seed=args.seed, sanitizer=not args.no_sanitizer, bench=not args.no_bench, large=args.large,
        require_sandbox=args.require_sandbox,
        students=getattr(args, "student", None), force=getattr(args, "force", False),
        plots=not getattr(args, "no_plots", False), build=not getattr(args, "no_build", False),
        in_flight=getattr(args, "in_flight", None), jobs=getattr(args, "jobs", None),
        shard=parse_shard(args.shard) if getattr(args, "shard", None) else None,
        merge=getattr(args, "merge", False), **{key: str(value) if value is not None else None
                                                for key, value in paths.items()})
    job.check()
    return job


def replace(job: GradingJob, **changes) -> GradingJob:
    changed = dataclasses.replace(job, **changes)
    changed.check()
    return changed

