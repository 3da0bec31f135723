"""The commands a tree's Markdown quotes: every line of a ```bash / ```sh block (continuation
lines joined, `$ ` prompts and trailing comments dropped) and every `inline code` span of the
prose that starts like a command of this course (`bash tools/test.sh ...`, `build/student/...`,
`python3 grading/...`, `ctest ...`, a bare `reduction_bench ...`, a CMake `-DNAME=VALUE` option).
.ci/release_commands.py checks each in a release; this module only finds them.

A text can hold a pattern for the reader rather than a command (`--labs NN`, `--out DIR`): a
command with such a placeholder is still found, and `placeholders()` names what it stands for, so
that a check can test the program and its options but not run it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SHELL_FENCE = re.compile(r"^```(bash|sh|shell|console)[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
ANY_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
# One backtick span, at most one line break inside (Markdown lets a span wrap with the paragraph).
INLINE_CODE = re.compile(r"(?<!`)`([^`\n]+(?:\n[^`\n]+)?)`(?!`)")
# The words an inline span must start with to be a command rather than a name or an expression.
COMMAND_START = re.compile(r"^(bash |python3 |build/|ctest |cmake |compute-sanitizer |ncu |nvcc |"
                           r"reduction_bench |reduction_variance_demo|\$EDITOR |-D[A-Z][A-Z0-9_]*=|"
                           r"(tools|grading|plots)/\S+\.(sh|py)( |$))")
# Placeholders a text writes for the reader: NN (a lab number), upper-case words (DIR, FILE,
# TIMINGS.csv, PRESET), `...` and [optional parts].
PLACEHOLDER = re.compile(r"NN|^[A-Z][A-Z0-9_]+(\.[a-z]+)?$|\.\.\.|^\[|\]$")


@dataclass(frozen=True)
class Quoted:
    file: str      # relative to the tree: "labs/04_interleaved/README.md"
    line: int      # where the command starts
    text: str      # the command, one line: "bash tools/test.sh student -L lab04"
    fenced: bool   # from a code block (True) or an inline span of the prose (False)

    def where(self) -> str:
        return f"{self.file}:{self.line}"


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _strip_comment(line: str) -> str:
    """The line without a trailing `# comment` (a # after a space, outside quotes)."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t"):
            return line[:index].rstrip()
    return line.rstrip()


def fenced_commands(text: str, name: str) -> list[Quoted]:
    """Each command of each shell block: `\\` continuations joined, prompts and comments dropped."""
    found = []
    for block in SHELL_FENCE.finditer(text):
        first_line = _line_of(text, block.start(2))
        pending, start = "", 0
        for number, raw in enumerate(block.group(2).splitlines(), first_line):
            line = _strip_comment(raw.strip().removeprefix("$ "))
            if not pending:
                start = number
            if line.endswith("\\"):
                pending += line[:-1].strip() + " "
                continue
            command = (pending + line).strip()
            pending = ""
            if command:
                found.append(Quoted(name, start, command, True))
    return found


def inline_commands(text: str, name: str) -> list[Quoted]:
    """The inline code spans of the prose (code blocks left out) that start like a command."""
    prose = ANY_FENCE.sub(lambda block: "\n" * block.group(0).count("\n"), text)  # keeps line numbers
    found = []
    for span in INLINE_CODE.finditer(prose):
        command = " ".join(span.group(1).split())
        if COMMAND_START.match(command):
            found.append(Quoted(name, _line_of(prose, span.start()), command, False))
    return found


def quoted_commands(root: Path) -> list[Quoted]:
    """Every command quoted in the *.md files under root, in file order."""
    root = Path(root)
    found = []
    for markdown in sorted(root.rglob("*.md")):
        if "build" in markdown.relative_to(root).parts:
            continue  # a build tree's copies (e.g. GoogleTest's) are nobody's text
        text = markdown.read_text(encoding="utf-8", errors="replace")
        name = markdown.relative_to(root).as_posix()
        found += sorted(fenced_commands(text, name) + inline_commands(text, name), key=lambda q: q.line)
    return found


def placeholders(words: list[str]) -> list[str]:
    """The words of a command that stand for something the reader fills in (`NN`, `DIR`, `...`,
    `COPY/build`); in `--name=VALUE` the value (a CMake `-DNAME=ON` is no placeholder)."""
    return [word for word in words if not word.startswith("-D")
            and any(PLACEHOLDER.search(part) for part in word.split("=", 1)[-1].strip("'\"").split("/"))]
