"""Who reads a student's page: the instructor (every fact of the grading) or the student (the copy
an instructor may send: that student's verdicts and evidence in the second person, with nothing of
a classmate's, of the grading machine's paths, or of the class's input seed).

Every text of a lab's section goes through `Audience.text()`: for the student it is scrubbed first,
the seed and the machine's paths replaced by words, then escaped like any text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath

from ...outputs.records import StudentRecord
from ...paths import REPO
from .markup import text as escaped

SEED_WORDS = "[the grading's seed]"
# A case's own seed in a description ("n = 1023, type = int, ..., seed = 8085264976220230953"):
# derived from the grading's, and of no use with the student's self-check.
_CASE_SEED = re.compile(r"\bseed = \d+")
# A wrong answer's replay line (verdicts.py): the grading's, not the student's (the page gives theirs).
_REPLAY = re.compile(r"\n[ \t]*replay: grade\.py --seed \S+ \(case \w+\)")
# An absolute path of two parts or more (what is left once the known folders are replaced).
_ABSOLUTE = re.compile(r"(?<![\w.~%+-])/(?:[\w.+@%~-]+/)+([\w.+@%~-]*)")


def _known_paths(record: StudentRecord) -> list[tuple[str, str]]:
    """The grading machine's folders the record names, longest first, each with what to say instead."""
    pairs = []
    for folder, entry in record.labs.items():
        if entry.source:
            pairs.append((entry.source, f"labs/{folder}/{entry.file}"))
            work = PurePath(entry.source).parents[2]   # OUT/work/<name>/src/<lab>/<file> -> OUT/work/<name>
            pairs += [(str(work), "[the grader's copy]"), (str(work.parent.parent), "[the grading's folder]")]
        if entry.compile.source and entry.compile.source != entry.source:   # a copy named by its content
            pairs.append((entry.compile.source, f"labs/{folder}/{entry.file}"))
        if entry.module_path:
            pairs.append((entry.module_path, f"[your compiled {folder}]"))
    if record.submission:
        pairs += [(record.submission, "[your submission]"), (str(PurePath(record.submission).parent), "[the class folder]")]
    if record.policy:
        pairs.append((record.policy, "grading/policy.toml"))
    pairs.append((str(REPO), "[the course]"))
    return sorted({(path, words) for path, words in pairs if len(path) > 1}, key=lambda pair: -len(pair[0]))


@dataclass
class Audience:
    student: bool = False
    replaced: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def for_student(cls, record: StudentRecord) -> "Audience":
        secrets = [(record.seed, SEED_WORDS)] if record.seed else []
        return cls(True, secrets + _known_paths(record))

    def scrub(self, value, own: bool = False) -> str:
        """`value` with the seed and the machine's folders replaced by words; and, in the grader's
        words (not `own`: the student's source, as written), any other absolute path cut to its name."""
        value = "" if value is None else str(value)
        if not self.student:
            return value
        for secret, words in self.replaced:
            value = re.sub(rf"(?<!\d){re.escape(secret)}(?!\d)", lambda _: words, value) if secret.isdigit() \
                else value.replace(secret, words)
        if own:
            return value
        value = _REPLAY.sub("", _CASE_SEED.sub("seed = [the grading's]", value))
        return _ABSOLUTE.sub(lambda match: "…/" + match.group(1), value)

    def text(self, value, own: bool = False) -> str:
        return escaped(self.scrub(value, own))

    def region(self) -> str:
        return "your STUDENT CODE region" if self.student else "the student's STUDENT CODE region"

    def code(self) -> str:
        return "your code" if self.student else "the student's code"
