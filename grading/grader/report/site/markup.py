"""The HTML every page of the class report is made of: escaping, the page shell and its policy.

Every text that reaches a page goes through `text()` or `attribute()`: student names, diagnostics,
program output and the grader's own words alike, so no caller decides what is trusted. The page's
Content-Security-Policy lets nothing load and runs only the report's own script (by its hash): a
`<script>` that escaping somehow missed would still not run. Pages are whole files, with their
style and script inside, so they open from file:// with no server, fonts or network.
"""

from __future__ import annotations

import base64
import hashlib
import html
from importlib import resources
from urllib.parse import quote

from ...judge.verdicts import (COMPILE_ERROR, HAZARD_MARK, LETTERS, MISSING, NOT_RUN, PASSED, REFUSED_TIME_MARK,
                               RUNTIME_ERROR, TIMEOUT, VERDICTS, WORDS, WRONG_ANSWER)

STYLE = resources.files(__package__).joinpath("report.css").read_text(encoding="utf-8")
SCRIPT = resources.files(__package__).joinpath("report.js").read_text(encoding="utf-8")
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
# Inline styles only (the figures' SVG carries style attributes); no source for anything else, no
# <base> and no form (which default-src does not cover).
POLICY = (f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{_SCRIPT_HASH}'; base-uri 'none'; "
          "form-action 'none'")

# The verdict classes of the stylesheet: the plots' colours (plots/plotting/style.py), the console's letters.
VERDICT_CLASS = {PASSED: "passed", WRONG_ANSWER: "failed", RUNTIME_ERROR: "failed", TIMEOUT: "failed",
                 COMPILE_ERROR: "failed", MISSING: "missing", NOT_RUN: "not-run"}
VERDICT_WORDS = WORDS
VERDICT_RANK = {verdict: rank for rank, verdict in enumerate(VERDICTS)}   # the order a lab column sorts in



def text(value) -> str:
    """Any value as HTML text: nothing in it is markup."""
    return html.escape("" if value is None else str(value), quote=True)


def attribute(value) -> str:
    """Any value as a double-quoted attribute's content."""
    return html.escape("" if value is None else str(value), quote=True)


def href(path: str, anchor: str = "") -> str:
    """A relative link to a file the report wrote (and an element's id on it), percent-encoded: a
    student's file name holds %XX."""
    return attribute(quote(path, safe="/") + ("#" + quote(anchor, safe="") if anchor else ""))


def verdict_letter(verdict: str | None, hazards: bool = False, impossible: bool = False) -> str:
    letter = LETTERS.get(verdict, "?") if verdict else ""
    return letter + (HAZARD_MARK if hazards else REFUSED_TIME_MARK if impossible else "")


def verdict_words(verdict: str | None, hazards: bool = False, refused: bool = False) -> str:
    return (VERDICT_WORDS.get(verdict, "not graded") + ("; a sanitizer finding" if hazards else "")
            + ("; a time the grader refused" if refused and not hazards else ""))


def verdict_span(verdict: str | None, hazards: bool = False, impossible: bool = False) -> str:
    kind = VERDICT_CLASS.get(verdict, "missing")
    return (f'<span class="verdict {kind}" title="{attribute(verdict_words(verdict, hazards, impossible))}">'
            f"{text(verdict_letter(verdict, hazards, impossible))}</span>")


def verdict_key(verdict: str | None, points: float | None) -> str:
    """A lab cell's sort key: the verdicts' order (passed first, then wrong, ..., not run), the most
    points first within one verdict; "" (last) where not graded."""
    if verdict not in VERDICT_RANK:
        return ""
    return f"{VERDICT_RANK[verdict] * 1000 - (points or 0.0):g}"


def pre(value: str, css: str = "") -> str:
    return f'<pre class="{attribute(css)}">{text(value)}</pre>' if value else ""


def sort_header(label: str, kind: str = "text", css: str = "", attrs: str = "") -> str:
    """A column header the script sorts by (`kind` "num" or "text") with a button: a click, Enter or
    Space sorts. `label` is markup (the caller escaped it)."""
    return (f'<th scope="col" data-sort="{attribute(kind)}" class="{attribute(css)}" aria-sort="none"{attrs}>'
            f'<button type="button" class="sort">{label}</button></th>')


def scroll(content: str, label: str, css: str = "") -> str:
    """A wide table in a box of its own that scrolls sideways (the page never does), and takes the
    keyboard's focus so it can be scrolled without a mouse."""
    return (f'<div class="scroll {attribute(css)}" role="region" aria-label="{attribute(label)}" tabindex="0">'
            f"{content}</div>")


def page(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{attribute(POLICY)}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{text(title)}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<main>\n{body}\n</main>\n"
            f"<script>{SCRIPT}</script>\n</body>\n</html>\n")
