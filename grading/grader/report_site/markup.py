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

from ..verdicts import COMPILE_ERROR, LETTERS, MISSING, NOT_RUN, PASSED, RUNTIME_ERROR, TIMEOUT, WRONG_ANSWER

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
VERDICT_WORDS = {PASSED: "passed", WRONG_ANSWER: "wrong answer", RUNTIME_ERROR: "runtime error", TIMEOUT: "timeout",
                 COMPILE_ERROR: "compile error", MISSING: "missing", NOT_RUN: "not run (no GPU)"}



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
    return letter + ("!" if hazards else "?" if impossible else "")


def verdict_span(verdict: str | None, hazards: bool = False, impossible: bool = False) -> str:
    kind = VERDICT_CLASS.get(verdict, "missing")
    words = VERDICT_WORDS.get(verdict, "not graded") + ("; sanitizer finding" if hazards else "")
    return (f'<span class="verdict {kind}" title="{attribute(words)}">'
            f"{text(verdict_letter(verdict, hazards, impossible))}</span>")


def pre(value: str, css: str = "") -> str:
    return f'<pre class="{attribute(css)}">{text(value)}</pre>' if value else ""


def page(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{attribute(POLICY)}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{text(title)}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{body}\n"
            f"<script>{SCRIPT}</script>\n</body>\n</html>\n")
