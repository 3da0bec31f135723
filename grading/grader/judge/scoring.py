"""Points for one lab from its verdict, sanitizer findings and benchmark ratio.

- Correctness points only for PASSED; each sanitizer tool that reported a hazard takes its
  policy share of them (shares add up, at most all of it).
- Performance points only for PASSED, from the ratio to the reference (policy.performance).
- NOT_RUN (no GPU here) scores nothing either way: its points are None, shown blank, not 0.
- Performance is None ("not measured") when the benchmark did not run at all (--no-bench, no
  GPU); 0 when it ran and the lab has no usable timing (wrong result in the benchmark, crash).
- A bonus lab (policy: `bonus = true` in its [labs.NN_name]) is scored the same way, but the
  student's maximum leaves it out: its points come on top.
"""

from __future__ import annotations

from ..manifest import Lab
from ..outputs.records import LabScore
from ..policy import Policy
from .verdicts import COMPILE_ERROR, MISSING, NOT_RUN, PASSED

# Why a lab that did not pass has no performance points, by its verdict (the tests' words otherwise).
_NOT_PASSED = {MISSING: "the lab was not handed in", COMPILE_ERROR: "the lab did not compile"}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def score_lab(lab: Lab, policy: Policy, verdict: str, hazards: dict[str, int], ratio: float | None,
              bench_ran: bool, bench_note: str = "") -> LabScore:
    """The lab's points."""
    correctness_max = policy.correctness_points(lab)
    performance_max = policy.performance_points(lab)
    bonus = policy.is_bonus(lab)
    notes = ["bonus lab: its points come on top of the maximum"] if bonus else []
    if verdict == NOT_RUN:
        return LabScore(None, correctness_max, None, performance_max, None, correctness_max + performance_max,
                        notes + ["not run: no GPU on this machine"], bonus)

    correctness = 0.0
    if verdict == PASSED:
        lost = 0.0
        for tool, count in sorted(hazards.items()):
            if count > 0 and policy.penalty(tool) > 0:
                lost += policy.penalty(tool)
                notes.append(f"{tool}: {count} hazard(s), -{policy.penalty(tool) * 100:.0f}% of the correctness points")
        correctness = correctness_max * max(0.0, 1.0 - lost)

    performance: float | None
    if performance_max == 0:
        performance = 0.0
    elif verdict != PASSED:
        performance = 0.0
        notes.append("no performance points: " + _NOT_PASSED.get(verdict, "the lab did not pass its tests"))
    elif not bench_ran:
        performance = None
        notes.append("performance not measured" + (f" ({bench_note})" if bench_note else ""))
    elif ratio is None:
        performance = 0.0
        notes.append("no performance points: " + (bench_note or "no timing from the benchmark"))
    else:
        fraction = policy.performance_fraction(ratio)
        performance = performance_max * fraction
        notes.append(f"time {ratio:.2f} x the reference's: {fraction * 100:.0f}% of the performance points")

    counted_max = correctness_max + (performance_max if performance is not None else 0.0)
    total = correctness + (performance or 0.0)
    return LabScore(_round(correctness), correctness_max, _round(performance), performance_max, _round(total),
                    counted_max, notes, bonus)


def student_total(lab_scores: list[LabScore]) -> tuple[float | None, float]:
    """(total, max) over the labs; total is None when a lab could not be run (no GPU). The total
    includes the bonus labs' points; the maximum leaves them out."""
    maximum = sum(score.max for score in lab_scores if not score.bonus)
    if any(score.total is None for score in lab_scores):
        return None, maximum
    return round(sum(score.total for score in lab_scores), 2), maximum
