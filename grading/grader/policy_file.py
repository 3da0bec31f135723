"""grading/policy.toml, rendered from the settings (settings.py): every section, every setting with
its default and its help. The file is committed for instructors to copy and edit; a test holds it to
this rendering, so it cannot drift from the defaults the grader uses.

    python3 -m grader.policy_file > policy.toml     (from grading/)
"""

from __future__ import annotations

import dataclasses
import json

from .settings import DEFAULT_LABS, LAB_EXAMPLE, LAB_NOTES, POINTS_AFTER, SECTIONS

HEADER = """\
reduction-labs grading policy, read by grading/grade.py (any key left out takes the default
written here; an unknown key is an error, so a typo cannot silently change the grading).
Rendered from grading/grader/settings.py (python3 -m grader.policy_file): edit the settings there."""
COMMENT_COLUMN = 22   # where a setting's help starts, unless its line is longer


def comment(text: str) -> list[str]:
    return [f"# {line}".rstrip() for line in text.split("\n")] if text else []


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return json.dumps(value) if isinstance(value, str) else repr(value)


def setting_lines(key: str, value, help_text: str) -> list[str]:
    line = f"{key} = {toml_value(value)}"
    if not help_text:
        return [line]
    first, *more = help_text.split("\n")
    column = COMMENT_COLUMN if not first or len(line) < COMMENT_COLUMN else len(line) + 2
    lines = [f"{line:<{column}}# {first}".rstrip() if first else line]
    return lines + [f"{'':<{column}}# {text}".rstrip() for text in more]


def section_lines(name: str, settings) -> list[str]:
    lines, tables = [f"[{name}]", *comment(settings.__doc__ or "")], []
    for spec in dataclasses.fields(settings):
        value = getattr(settings, spec.name)
        if isinstance(value, dict):    # a table of names: after the section's own settings
            tables += ["", f"[{name}.{spec.name}]", *comment(spec.metadata["help"])]
            tables += [setting_lines(key, item, "")[0] for key, item in value.items()]
            continue
        lines += comment(spec.metadata["before"]) + setting_lines(spec.name, value, spec.metadata["help"])
    return lines + tables


def lab_lines() -> list[str]:
    lines = []
    for folder, entry in DEFAULT_LABS.items():
        before, after = LAB_NOTES.get(folder, ("", ""))
        lines += ["", f"[labs.{folder}]", *comment(before)]
        for key, value in dataclasses.asdict(entry).items():
            if value is not None:
                lines += setting_lines(key, value, after)
        if folder.startswith("01"):
            lines += ["", *comment(LAB_EXAMPLE)]
    return lines[1:]


def render() -> str:
    lines = comment(HEADER)
    for name, kind in SECTIONS:
        lines.append("")
        if name == "labs":
            lines += lab_lines()
        else:
            lines += section_lines(name, kind())
            lines += comment(POINTS_AFTER) if name == "points" else []
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
