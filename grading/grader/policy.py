"""The grading policy: points, the performance credit curve, sanitizer penalties, limits.

Read from a TOML file (grading/policy.toml documents every key); anything the file leaves out
takes the default below, so an empty file is a valid policy.
"""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .libraries import CG_COLLECTIVES, CUB, THRUST, Library
from .manifest import GraderError, Lab

DEFAULTS: dict = {
    "points": {"correctness": 10.0, "performance": 10.0},
    "performance": {
        "full_credit_ratio": 1.2,
        "zero_credit_ratio": 10.0,
        "scale": "reference",        # above full_credit_ratio: credit = 1/ratio ("threshold": full/ratio)
        "statistic": "median",       # over the benchmarked (type, n) rows: "median", "mean", "max"
    },
    "labs": {"01_host_sum": {"performance": 0.0}, "11_single_pass": {"bonus": True},
             "12_any_operator": {"bonus": True}},
    "compile": {"timeout_s": 120.0, "allow_cccl": False, "refuse_cg_collectives": [2, 3, 4, 5, 6, 7, 8, 9, 10]},
    "tests": {"timeout_s": 300.0, "call_timeout_s": 20.0, "concurrency": 8, "large": False},
    "pipeline": {"students": 4, "retry_alone_s": 600.0},
    "sanitizer": {
        "tools": ["memcheck", "racecheck", "synccheck"],
        "cases": ["int mixed_sign 2049", "float uniform_positive 1025", "int small_integers 33", "float mixed_sign 65535"],
        "timeout_s": 90.0,
        "call_timeout_s": 60.0,
        "penalty": {"memcheck": 0.5, "racecheck": 0.5, "synccheck": 0.5},
    },
    "benchmark": {"sizes": ["2^24"], "types": ["float", "int"], "samples": 25, "host_samples": 200, "warmup": 3,
                  "timeout_s": 900.0, "call_timeout_s": 20.0, "clock_slack_us": 25.0, "clock_slack_ratio": 0.15},
    "sandbox": {"output_mib": 64, "processes": 512, "memory_gib": 8, "large_memory_gib": 48},
    "gradescope": {"leaderboard": False},   # per-lab time ratios in each results.json's "leaderboard"
    "slurm": {"tasks": 4, "partition": "", "account": "", "time": "04:00:00", "merge_time": "00:30:00",
              "gpus_per_task": 1, "cpus_per_task": 8, "sbatch_args": []},
}

SCALES = ("reference", "threshold")
STATISTICS = ("median", "mean", "max")


FREE_TABLES = ("labs.", "sanitizer.penalty.")  # tables whose keys are names (labs, tools), not settings


def _merge(base: dict, override: dict, where: str) -> dict:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        free = where in FREE_TABLES
        if not free and key not in merged:
            raise GraderError(f"policy: unknown key '{where}{key}' (see grading/policy.toml)")
        if isinstance(merged.get(key), dict) or (free and isinstance(value, dict)):
            if not isinstance(value, dict):
                raise GraderError(f"policy: '{where}{key}' must be a table")
            merged[key] = _merge(merged.get(key, {}), value, f"{where}{key}.") if not free else \
                {**merged.get(key, {}), **value}
        else:
            merged[key] = value
    return merged


@dataclass
class Policy:
    data: dict
    path: str = "(defaults)"

    @classmethod
    def load(cls, path: Path | None) -> "Policy":
        if path is None:
            return cls(copy.deepcopy(DEFAULTS))
        try:
            with open(path, "rb") as handle:
                override = tomllib.load(handle)
        except FileNotFoundError:
            raise GraderError(f"{path}: policy file not found") from None
        except tomllib.TOMLDecodeError as exc:
            raise GraderError(f"{path}: invalid TOML ({exc})") from None
        policy = cls(_merge(DEFAULTS, override, ""), str(path))
        policy.validate()
        return policy

    @classmethod
    def from_dict(cls, override: dict) -> "Policy":
        policy = cls(_merge(DEFAULTS, override, ""), "(inline)")
        policy.validate()
        return policy

    def validate(self) -> None:
        perf = self.data["performance"]
        if not 0 < perf["full_credit_ratio"] <= perf["zero_credit_ratio"]:
            raise GraderError("policy: need 0 < performance.full_credit_ratio <= performance.zero_credit_ratio")
        if perf["scale"] not in SCALES:
            raise GraderError(f"policy: performance.scale must be one of {', '.join(SCALES)}")
        if perf["statistic"] not in STATISTICS:
            raise GraderError(f"policy: performance.statistic must be one of {', '.join(STATISTICS)}")
        for key, value in self.data["labs"].items():
            if not isinstance(value, dict) or set(value) - {"correctness", "performance", "bonus"}:
                raise GraderError(f"policy: [labs.{key}] may set only 'correctness', 'performance' and 'bonus'")
            if not isinstance(value.get("bonus", False), bool):
                raise GraderError(f"policy: [labs.{key}] bonus must be true or false")
        bench = self.data["benchmark"]
        if not (all(isinstance(bench[key], int) and not isinstance(bench[key], bool) and 5 <= bench[key] <= 1000
                    for key in ("samples", "host_samples")) and 0 <= bench["warmup"] <= 100):
            raise GraderError("policy: benchmark.samples and benchmark.host_samples must be 5..1000 and "
                              "benchmark.warmup 0..100")
        if not all(isinstance(bench[key], (int, float)) and not isinstance(bench[key], bool) and bench[key] >= 0
                   for key in ("clock_slack_us", "clock_slack_ratio")):
            raise GraderError("policy: benchmark.clock_slack_us and benchmark.clock_slack_ratio must be numbers >= 0")
        if not isinstance(self.data["gradescope"]["leaderboard"], bool):
            raise GraderError("policy: gradescope.leaderboard must be true or false")
        students = self.data["pipeline"]["students"]
        if not (isinstance(students, int) and 1 <= students <= 64):
            raise GraderError("policy: pipeline.students must be an integer 1..64")
        compile_section = self.data["compile"]
        if not isinstance(compile_section["allow_cccl"], bool):
            raise GraderError("policy: compile.allow_cccl must be true or false")
        labs = compile_section["refuse_cg_collectives"]
        if not (isinstance(labs, list) and all(isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 99
                                               for n in labs)):
            raise GraderError("policy: compile.refuse_cg_collectives must be a list of lab numbers, e.g. [2, 3]")
        retry = self.data["pipeline"]["retry_alone_s"]
        if isinstance(retry, bool) or not isinstance(retry, (int, float)) or retry < 0:
            raise GraderError("policy: pipeline.retry_alone_s must be a number of seconds >= 0")
        unknown = set(self.data["sanitizer"]["tools"]) - {"memcheck", "racecheck", "synccheck", "initcheck"}
        if unknown:
            raise GraderError(f"policy: unknown sanitizer tool(s) {', '.join(sorted(unknown))}")

    def _lab_entry(self, lab: Lab) -> dict:
        """The lab's settings from [labs.NN_name], [labs.NN] and [labs.N], merged in that order: the
        defaults are keyed by folder, so a table keyed by number must be able to override them."""
        labs = self.data["labs"]
        return {**labs.get(lab.folder, {}), **labs.get(f"{lab.number:02d}", {}), **labs.get(str(lab.number), {})}

    def correctness_points(self, lab: Lab) -> float:
        return float(self._lab_entry(lab).get("correctness", self.data["points"]["correctness"]))

    def performance_points(self, lab: Lab) -> float:
        return float(self._lab_entry(lab).get("performance", self.data["points"]["performance"]))

    def is_bonus(self, lab: Lab) -> bool:
        """A bonus lab's points count in the total but not in the maximum."""
        return bool(self._lab_entry(lab).get("bonus", False))

    def performance_fraction(self, ratio: float) -> float:
        """Share of the performance points for a time of `ratio` x the reference's."""
        perf = self.data["performance"]
        full, zero = perf["full_credit_ratio"], perf["zero_credit_ratio"]
        if ratio <= full:
            return 1.0
        if ratio > zero:
            return 0.0
        return (full / ratio) if perf["scale"] == "threshold" else (1.0 / ratio)

    def combine_ratios(self, ratios: list[float]) -> float:
        values = sorted(ratios)
        statistic = self.data["performance"]["statistic"]
        if statistic == "max":
            return values[-1]
        if statistic == "mean":
            return sum(values) / len(values)
        middle = len(values) // 2
        return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2

    def refused_libraries(self, lab: Lab) -> tuple[Library, ...]:
        """The library reductions `lab` may not include (libraries.py): CUB and Thrust unless
        [compile] allow_cccl, cooperative groups' collectives in the labs [compile]
        refuse_cg_collectives lists."""
        section = self.data["compile"]
        refused = () if section["allow_cccl"] else (CUB, THRUST)
        return refused + ((CG_COLLECTIVES,) if lab.number in section["refuse_cg_collectives"] else ())

    def penalty(self, tool: str) -> float:
        return float(self.data["sanitizer"]["penalty"].get(tool, 0.0))

    def section(self, name: str) -> dict:
        return self.data[name]
