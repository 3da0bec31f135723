"""The grading policy: points, the performance credit curve, sanitizer penalties, limits.

Its settings are typed sections (settings.py), each with its one default; a TOML file
(grading/policy.toml, rendered from them) overrides any of them, and anything it leaves out keeps
its default, so an empty file is a valid policy. Every value is checked once, here, at load.
"""

from __future__ import annotations

import copy
import dataclasses
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

from .manifest import GraderError, Lab
from .settings import (DEFAULT_LABS, SECTIONS, BenchmarkSettings, CompileSettings, GradescopeSettings, LabSettings,
                       PerformanceSettings, PipelineSettings, PointsSettings, SandboxSettings, SanitizerSettings,
                       SlurmSettings, TestsSettings)


@dataclass
class Policy:
    points: PointsSettings = field(default_factory=PointsSettings)
    performance: PerformanceSettings = field(default_factory=PerformanceSettings)
    labs: dict[str, LabSettings] = field(default_factory=lambda: copy.deepcopy(DEFAULT_LABS))
    compile: CompileSettings = field(default_factory=CompileSettings)
    tests: TestsSettings = field(default_factory=TestsSettings)
    pipeline: PipelineSettings = field(default_factory=PipelineSettings)
    sanitizer: SanitizerSettings = field(default_factory=SanitizerSettings)
    benchmark: BenchmarkSettings = field(default_factory=BenchmarkSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    gradescope: GradescopeSettings = field(default_factory=GradescopeSettings)
    slurm: SlurmSettings = field(default_factory=SlurmSettings)
    path: str = field(default="(defaults)", compare=False)

    @classmethod
    def load(cls, path: Path | None) -> "Policy":
        if path is None:
            return cls()
        try:
            with open(path, "rb") as handle:
                override = tomllib.load(handle)
        except FileNotFoundError:
            raise GraderError(f"{path}: policy file not found") from None
        except tomllib.TOMLDecodeError as exc:
            raise GraderError(f"{path}: invalid TOML ({exc})") from None
        return cls.from_dict(override, str(path))

    @classmethod
    def from_dict(cls, override: dict, path: str = "(inline)") -> "Policy":
        policy = cls(path=path)
        for name, table in override.items():
            if name not in dict(SECTIONS):
                raise GraderError(f"policy: unknown key '{name}' (see grading/policy.toml)")
            if not isinstance(table, dict):
                raise GraderError(f"policy: '{name}' must be a table")
            if name == "labs":
                for key, entry in table.items():
                    if not isinstance(entry, dict):
                        raise GraderError(f"policy: [labs.{key}] must be a table")
                    policy.labs[key] = _section(policy.labs.get(key, LabSettings()), entry, f"labs.{key}")
            else:
                setattr(policy, name, _section(getattr(policy, name), table, name))
        policy.performance.check()
        return policy

    def _lab_entry(self, lab: Lab) -> LabSettings:
        """The lab's settings from [labs.NN_name], [labs.NN] and [labs.N], merged in that order: the
        defaults are keyed by folder, so a table keyed by number must be able to override them."""
        merged: dict = {}
        for key in (lab.folder, f"{lab.number:02d}", str(lab.number)):
            entry = self.labs.get(key)
            if entry is not None:
                merged.update({k: v for k, v in dataclasses.asdict(entry).items() if v is not None})
        return LabSettings(**merged)

    def correctness_points(self, lab: Lab) -> float:
        value = self._lab_entry(lab).correctness
        return float(self.points.correctness if value is None else value)

    def performance_points(self, lab: Lab) -> float:
        value = self._lab_entry(lab).performance
        return float(self.points.performance if value is None else value)

    def is_bonus(self, lab: Lab) -> bool:
        """A bonus lab's points count in the total but not in the maximum."""
        return bool(self._lab_entry(lab).bonus)

    def performance_fraction(self, ratio: float) -> float:
        """Share of the performance points for a time of `ratio` x the reference's."""
        full, zero = self.performance.full_credit_ratio, self.performance.zero_credit_ratio
        if ratio <= full:
            return 1.0
        if ratio > zero:
            return 0.0
        return (full / ratio) if self.performance.scale == "threshold" else (1.0 / ratio)

    def combine_ratios(self, ratios: list[float]) -> float:
        values = sorted(ratios)
        statistic = self.performance.statistic
        if statistic == "max":
            return values[-1]
        if statistic == "mean":
            return sum(values) / len(values)
        middle = len(values) // 2
        return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2

    def penalty(self, tool: str) -> float:
        return float(self.sanitizer.penalty.get(tool, 0.0))


def _section(base, table: dict, where: str):
    """`base` (a settings dataclass) with `table`'s values, each checked against its field."""
    fields = {f.name: f for f in dataclasses.fields(base)}
    hints = typing.get_type_hints(type(base))
    changes = {}
    for key, value in table.items():
        if key not in fields:
            raise GraderError(f"policy: unknown key '{where}.{key}' (see grading/policy.toml)")
        checked = _checked(hints[key], value, f"{where}.{key}", fields[key].metadata)
        if isinstance(checked, dict):   # a table of names (sanitizer.penalty): merged with the default's
            checked = {**getattr(base, key), **checked}
        changes[key] = checked
    return dataclasses.replace(base, **changes)


def _checked(hint, value, where: str, meta):
    """`value` as a `hint`, or a GraderError that says what the setting takes."""
    if isinstance(hint, types.UnionType):   # X | None: TOML has no None, so the file gives an X
        hint = next(arg for arg in typing.get_args(hint) if arg is not type(None))
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list:
        if not isinstance(value, list):
            raise GraderError(f"policy: {where} must be a list")
        return [_checked(args[0], item, where, meta) for item in value]
    if origin is dict:
        if not isinstance(value, dict):
            raise GraderError(f"policy: {where} must be a table")
        return {key: _checked(args[1], item, f"{where}.{key}", meta) for key, item in value.items()}
    numeric = hint in (int, float) and not isinstance(value, bool)
    if hint is float and numeric and isinstance(value, (int, float)):
        value = float(value)
    elif not (isinstance(value, hint) and (numeric or hint in (bool, str))):
        raise GraderError(f"policy: {where} must be {_KINDS[hint]}")
    low, high = meta.get("low"), meta.get("high")
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"{low}..{high}" if high is not None else f">= {low}"
        raise GraderError(f"policy: {where} must be {span}")
    if meta.get("choices") and value not in meta["choices"]:
        raise GraderError(f"policy: {where} must be one of {', '.join(meta['choices'])}")
    return value


_KINDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
