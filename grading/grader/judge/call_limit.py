"""How long one call of a test run may take: a floor for any call, growing with the call's input to
the full limit at contract.json's full_call_elements (2^24), so that a call that never ends on a
small input (the usual hang: a loop whose condition never changes, seen at n = 1) costs about the
floor, not the full limit, while every size keeps the full limit's slowest honest rate. The runner
enforces it (lab_runner.hpp, RunnerOptions::seconds_for: the same formula); the grader passes it and
says it in a TIMEOUT's words.

A limit below the full one is short enough that other students' runs on the machine could matter
(the GPU's time slices, the cores), so a test run that timed out under it while another student's
runs ran beside it is run again alone before its TIMEOUT stands (run_tests.py, resources.py's
SHORT_LIMIT_TIMED_OUT, runs.again_alone)."""

from __future__ import annotations

from dataclasses import dataclass

from ..contract import CALL_FLOOR_FLAG, FULL_CALL_ELEMENTS


@dataclass(frozen=True)
class CallLimit:
    full_s: float          # a call on FULL_CALL_ELEMENTS elements or more
    floor_s: float = 0.0   # a call on none; 0 (or not below full_s): every call gets full_s

    @staticmethod
    def of(limit: CallLimit | float) -> CallLimit:
        """A plain number of seconds is a limit that does not grow."""
        return limit if isinstance(limit, CallLimit) else CallLimit(float(limit))

    def capped(self, seconds: float) -> CallLimit:
        """Neither part above `seconds` (a shared run's short limit)."""
        return CallLimit(min(self.full_s, seconds), min(self.floor_s, seconds))

    @property
    def grows(self) -> bool:
        return 0 < self.floor_s < self.full_s

    def seconds_for(self, elements: int) -> float:
        if not self.grows:
            return self.full_s
        return self.floor_s + (self.full_s - self.floor_s) * min(1.0, elements / FULL_CALL_ELEMENTS)

    def short_for(self, elements: int) -> bool:
        """A call on `elements` gets less than the full limit."""
        return self.seconds_for(elements) < self.full_s

    def argv(self) -> list[str]:
        """The runner's arguments (observe_main.cpp)."""
        return [f"--call-timeout={self.full_s:g}"] + ([f"{CALL_FLOOR_FLAG}={self.floor_s:g}"] if self.grows else [])

    def words(self, elements: int) -> str:
        """The limit of a call on `elements`, for a TIMEOUT's detail."""
        seconds = self.seconds_for(elements)
        if not self.short_for(elements):
            return f"{seconds:.0f} s"
        return (f"{seconds:.1f} s, the limit of a call on {elements} element{'s' if elements != 1 else ''} "
                f"({self.floor_s:g} s, growing with the input to {self.full_s:g} s at {_full_size()} elements)")


def _full_size() -> str:
    power = FULL_CALL_ELEMENTS.bit_length() - 1
    return f"2^{power}" if FULL_CALL_ELEMENTS == 1 << power else str(FULL_CALL_ELEMENTS)
