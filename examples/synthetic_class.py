"""The synthetic class: many honest students for the grading throughput benchmark (issue 12).

Every lab a synthetic student hands in is one of the example class's recipes, applied where it
fits: the reference solution's region, the previous lab's kernel (slow; lab 03's atomics in lab
04: wrong, since lab 04 promises bitwise reproducible floats), the untouched skeleton or one of
the example class's wrong regions, carol's never-ending loop (hanging), erin's
volatile-only last warp (racy), carol's out-of-bounds partner load, or a compile error (frank's
type error, or a typo in a name). Nothing hostile: the benchmark measures the grader's
throughput on the work a real class hands in, and its verdicts must be the ones written next to
the class.

plan() only decides who gets what, deterministically from the seed; make_examples.py turns the
plan into files and expected_verdicts.json from the same recipes as the example class.

    python3 examples/make_examples.py --class synthetic --students 60 --seed 1 --out DIR
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

DEFAULT_STUDENTS = 60
DEFAULT_SEED = 1

# The previous lab's region in a lab's skeleton: only where the step is large on the H200
# (README table: 1.9x, 1.7x), so the lab is surely past full credit (1.2x). Labs 07-09 are
# within 1.3x of the lab before them; lab 09's region does not compile in lab 10's skeleton (no
# kBlockItems); lab 03's predecessor (global atomics) takes 30 ms a call.
SLOW_FROM = {"05_sequential": "04_interleaved", "06_first_add": "05_sequential"}
# The previous lab's region where it breaks the lab's contract: lab 03's shared and global float
# atomics in lab 04, which declares its float results bitwise reproducible (its README: "no
# atomics"). The atomics add in another order on every call, and their chain is thousands of
# additions long where lab 04's tree is 24 deep: WRONG_ANSWER, not a slow pass.
ATOMIC_FROM = {"04_interleaved": "03_shared_atomic"}


@dataclass(frozen=True)
class Recipe:
    """One way to hand in a lab: `source` names where its region comes from (make_examples.py):
    "reference", "skeleton", "previous" (SLOW_FROM), "atomic" (ATOMIC_FROM), "typo", or
    "<example student>/<lab folder>"
    (that student's planted bug, applied to this lab's solution or taken as written)."""
    kind: str
    source: str
    labs: tuple[str, ...] = ()   # the labs it fits; () = every lab


# The bug kinds and the recipes of each, with the labs where the recipe is known to do what it
# says (the example class shows each on its own lab; the loops of labs 06 and 07 are lab 05's).
RECIPES = {
    "slow": (Recipe("slow", "previous", tuple(SLOW_FROM)),),
    "wrong": (Recipe("wrong", "skeleton"),
              Recipe("wrong", "atomic", tuple(ATOMIC_FROM)),
              Recipe("wrong", "dave/06_first_add", ("06_first_add",)),
              Recipe("wrong", "erin/01_host_sum", ("01_host_sum",))),
    "hanging": (Recipe("hanging", "carol/05_sequential", ("05_sequential", "06_first_add", "07_last_warp")),),
    "racy": (Recipe("racy", "erin/07_last_warp", ("07_last_warp",)),),
    "out_of_bounds": (Recipe("out_of_bounds", "carol/06_first_add", ("06_first_add",)),),
    "compile_error": (Recipe("compile_error", "frank/03_shared_atomic", ("03_shared_atomic",)),
                      Recipe("compile_error", "typo")),
}
REFERENCE = Recipe("reference", "reference")

# How often a student's main kind is drawn (reference: every lab right). Hanging labs cost a
# call's time limit each (about the 2 s floor: they hang at n = 1) and a run again alone, so they
# are rare, as in a real class.
WEIGHTS = {"reference": 30, "slow": 25, "wrong": 15, "compile_error": 10, "racy": 8, "out_of_bounds": 6, "hanging": 6}
SECOND_BUG = 0.35   # chance that a student with a bug has a second one, in another lab
FLAT_LAYOUT = 0.1   # chance of the flat layout (<student>/NN_name/<file>, no labs/)


@dataclass
class SyntheticStudent:
    name: str
    layout: str = "labs"
    labs: dict[str, Recipe] = field(default_factory=dict)   # lab folder -> recipe; every lab is handed in

    def about(self) -> str:
        bugs = [f"{folder[:2]} {recipe.kind} ({recipe.source})" for folder, recipe in self.labs.items()
                if recipe.kind != "reference"]
        return "; ".join(bugs) or "reference quality: every lab is the reference solution's region"


def _fits(recipe: Recipe, folder: str) -> bool:
    return not recipe.labs or folder in recipe.labs


def _draw_bug(rng: random.Random, kind: str, labs: list[str], taken: set[str]) -> tuple[str, Recipe] | None:
    choices = [(folder, recipe) for recipe in RECIPES[kind] for folder in labs
               if folder not in taken and _fits(recipe, folder)]
    return rng.choice(choices) if choices else None


def plan(count: int, seed: int, labs: list[str]) -> list[SyntheticStudent]:
    """`count` students s001, s002, ...: each kind of WEIGHTS once (so a class of at least
    len(WEIGHTS) students has them all), the rest drawn by WEIGHTS, in a seeded order. The same
    (count, seed, labs) give the same class."""
    if count < 1:
        raise ValueError("the synthetic class needs at least one student")
    rng = random.Random(seed)
    kinds = list(WEIGHTS)
    kinds += rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()), k=max(0, count - len(kinds)))
    kinds = kinds[:count]
    rng.shuffle(kinds)
    width = max(3, len(str(count)))
    students = []
    for index, kind in enumerate(kinds, 1):
        student = SyntheticStudent(f"s{index:0{width}d}", "flat" if rng.random() < FLAT_LAYOUT else "labs")
        bugs: dict[str, Recipe] = {}
        if kind != "reference":
            wanted = [kind]
            if rng.random() < SECOND_BUG:
                wanted.append(rng.choices([k for k in WEIGHTS if k != "reference"],
                                          weights=[w for k, w in WEIGHTS.items() if k != "reference"])[0])
            for bug in wanted:
                drawn = _draw_bug(rng, bug, labs, set(bugs))
                if drawn:
                    bugs[drawn[0]] = drawn[1]
        student.labs = {folder: bugs.get(folder, REFERENCE) for folder in labs}
        students.append(student)
    return students
