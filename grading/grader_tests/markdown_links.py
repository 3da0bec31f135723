"""The relative links of a tree's Markdown files that lead nowhere: a file or folder that is not
there, or a #fragment that is no heading of the file it names. Links to URLs (https:, mailto:)
are not followed; links inside code (fenced blocks, `inline`) are not links."""

import re
from pathlib import Path

FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
INLINE_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)


def _prose(text: str) -> str:
    return INLINE_CODE.sub("", FENCE.sub("", text))


def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors: lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats."""
    anchors, seen = set(), {}
    for heading in HEADING.findall(FENCE.sub("", text)):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def broken_links(root: Path) -> list[str]:
    """'FILE: TARGET (why)' for each relative link of each *.md under root that leads nowhere."""
    root = Path(root)
    problems = []
    for markdown in sorted(root.rglob("*.md")):
        text = markdown.read_text(encoding="utf-8", errors="replace")
        prose = _prose(text)
        for target in INLINE_LINK.findall(prose) + REFERENCE_LINK.findall(prose):
            if URL.match(target):
                continue
            path, _, fragment = target.partition("#")
            where = (markdown.parent / path) if path else markdown
            name = markdown.relative_to(root).as_posix()
            if not where.exists():
                problems.append(f"{name}: {target} (no such file in {root.name})")
            elif fragment and where.suffix == ".md" and where.is_file() and \
                    fragment.lower() not in heading_anchors(where.read_text(encoding="utf-8", errors="replace")):
                problems.append(f"{name}: {target} (no heading #{fragment} in {where.name})")
    return problems
