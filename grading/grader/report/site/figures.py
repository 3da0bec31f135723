"""The figures of plots/reduction_plots.py, as the report copies them (report/plots/, copies.py).

They are drawn from timings.csv, whose labels hold student names; matplotlib writes them as
escaped XML text. The report still reads each SVG as XML and keeps only drawing: no script, no
foreign HTML, no event handler, no link that leaves the figure. A figure is used only when it was
drawn after the timings it shows (a figure older than timings.csv is a past run's), and one that
is not XML is left out with a note.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG)
ET.register_namespace("xlink", XLINK)

CLASS_FIGURES = (("status", "Verdicts by lab"), ("by_lab", "Time by lab"), ("ladder", "Speedup ladder"),
                 ("sweep", "Size sweep"), ("leaderboard", "Leaderboard"))
_REMOVED = {"script", "foreignObject", "iframe", "object", "embed", "audio", "video", "image", "a",
            "animate", "set", "animateTransform", "animateMotion", "handler", "listener"}
_LINKS = {"href", f"{{{XLINK}}}href"}
MAX_BYTES = 8 << 20


@dataclass(frozen=True)
class Figure:
    stem: str        # by_lab, student_<file name>
    svg: str = ""    # the cleaned SVG element, ready to inline; "" when not used
    note: str = ""   # why not, when not used


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def clean_svg(data: bytes) -> str:
    """The SVG document `data` as an <svg> element holding drawing only. Raises ValueError when it is
    not an SVG document."""
    if b"<!DOCTYPE" in data[:4096].upper() and b"<!ENTITY" in data.upper():
        raise ValueError("an SVG that declares entities")
    root = ET.fromstring(data)
    if root.tag != f"{{{SVG}}}svg":
        raise ValueError("not an SVG document")
    for parent in list(root.iter()):
        for child in list(parent):
            if not isinstance(child.tag, str) or _local(child.tag) in _REMOVED:
                parent.remove(child)
        for name in list(parent.attrib):
            value = parent.attrib[name]
            if _local(name).lower().startswith("on") or (name in _LINKS and not value.startswith("#")) \
                    or re.search(r"url\(\s*['\"]?(?!#)", value) or "javascript:" in value.lower():
                del parent.attrib[name]
    return ET.tostring(root, encoding="unicode")


def load_figure(folder: Path, stem: str, not_before: float) -> Figure:
    """OUT/plots/<stem>.svg cleaned, if it exists and was drawn at or after `not_before` (timings.csv's
    time of change)."""
    path = Path(folder) / f"{stem}.svg"
    try:
        info = path.lstat()
    except OSError:
        return Figure(stem, note="not drawn")
    if not path.is_file() or path.is_symlink() or info.st_size > MAX_BYTES:
        return Figure(stem, note="not a plain file of a figure's size")
    if info.st_mtime < not_before:
        return Figure(stem, note="drawn before the last timings: drawn again when the grading ends")
    try:
        return Figure(stem, clean_svg(path.read_bytes()))
    except (OSError, ValueError, ET.ParseError) as exc:
        return Figure(stem, note=f"left out: {exc}")
