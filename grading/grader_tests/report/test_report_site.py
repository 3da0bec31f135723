"""The class report's pages without a browser (examples/check_report.py drives a real one): student
text is text, links name the files written, figures keep only drawing, blanks stay blank."""

from __future__ import annotations

import base64
import hashlib
import html.parser
import os
import re
import shutil
import tempfile
import unittest
from pathlib import Path
from urllib.parse import unquote

from grader.manifest import Lab
from grader.outputs.records import LabRecord, LabScore, StudentRecord, TestRun
from grader.report.site import write_site
from grader.report.site.figures import clean_svg, load_figure

HOSTILE = "<script>document.title='pwned'<\\script><img src=x onerror=alert(1)>&amp;"
PRINTED = "</pre><script>alert(2)</script><iframe src=//evil.example></iframe>"
LABS = [Lab("01_host_sum", "host_sum.cpp", "lab01_host_sum"), Lab("02_atomic", "atomic.cu", "lab02_atomic")]
SEED = "1890510365997776856"


class Elements(html.parser.HTMLParser):
    """Start tags and text of a page, as a browser's parser splits them."""

    def __init__(self, page: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def count(self, tag: str) -> int:
        return sum(1 for name, _ in self.tags if name == tag)


def record(name: str, gpu: bool = True) -> StudentRecord:
    host = LabRecord("01_host_sum", "host_sum.cpp", "lab01_host_sum", verdict="WRONG_ANSWER",
                     detail="1 of 9 cases failed\n  expected 10, got 9",
                     tests=TestRun(returncode=0, program_output=PRINTED,
                                   check={"first_failure": {"case": "c001", "expected": "10", "got": "9", "hint": "<b>"}}),
                     score=LabScore(0.0, 10.0, None, 0.0, 0.0, 10.0))
    device = LabRecord("02_atomic", "atomic.cu", "lab02_atomic", verdict="PASSED" if gpu else "NOT_RUN",
                       score=LabScore(10.0, 10.0, 10.0, 10.0, 20.0, 20.0) if gpu else LabScore(max=20.0))
    return StudentRecord(name, complete=True, date="2026-11-25", seed=SEED, sandbox="bubblewrap (test)",
                         submission=f"/class/{name}",
                         labs={"01_host_sum": host, "02_atomic": device}, total=20.0 if gpu else None,
                         max_total=30.0, gpu_name="TEST GPU" if gpu else "")


class ReportSite(unittest.TestCase):
    def setUp(self):
        self.out = Path(tempfile.mkdtemp(prefix="report-site-test-"))
        self.addCleanup(shutil.rmtree, self.out, ignore_errors=True)
        self.records = [record("ann"), record(HOSTILE, gpu=False)]
        self.names = ["ann", HOSTILE, "late"]
        self.index = write_site(self.out, LABS, self.names, self.records)

    def pages(self) -> list[Path]:
        return [self.index, *sorted((self.out / "report" / "students").glob("*.html"))]

    def test_student_text_is_text_on_every_page(self):
        for path in self.pages():
            page = path.read_text(encoding="utf-8")
            elements = Elements(page)
            self.assertEqual((elements.count("script"), elements.count("img"), elements.count("iframe")), (1, 0, 0), path)
            self.assertNotIn("<script>document", page)
        class_text = "".join(Elements(self.index.read_text(encoding="utf-8")).text)
        self.assertIn(HOSTILE, class_text, "the name is shown as the student wrote it")

    def test_the_only_script_runs_by_its_hash_and_nothing_loads(self):
        page = self.index.read_text(encoding="utf-8")
        policy = next(attrs["content"] for tag, attrs in Elements(page).tags
                      if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy")
        script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
        digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
        self.assertIn(f"script-src 'sha256-{digest}'", policy)
        self.assertIn("default-src 'none'", policy)

    def test_links_name_the_files_written_and_every_student_is_a_row(self):
        elements = Elements(self.index.read_text(encoding="utf-8"))
        rows = [attrs["data-name"] for tag, attrs in elements.tags if tag == "tr" and "data-name" in attrs]
        self.assertEqual(rows, self.names, "one row per student of the class, graded or not, in class order")
        links = [attrs["href"] for tag, attrs in elements.tags if tag == "a"]
        students = {link.split("#")[0] for link in links if link.startswith("students/")}
        self.assertEqual(len(students), 2, "a page per graded student; 'late' is not graded yet")
        for link in students:
            self.assertTrue((self.out / "report" / unquote(link)).is_file(), link)

    def test_a_lab_not_run_and_a_blank_total_stay_blank(self):
        hostile = next(path for path in self.pages()[1:] if "ann" not in path.name)
        page = hostile.read_text(encoding="utf-8")
        self.assertIn("not run (no GPU)", page)
        self.assertIn("incomplete: left blank (02_atomic not run: no GPU)", page)
        class_page = self.index.read_text(encoding="utf-8")
        self.assertIn(">incomplete</td>", class_page)
        self.assertNotIn(">10 / 30<", class_page, "no total for a student whose GPU lab was not run")

    def test_a_failing_case_and_the_program_output_are_shown_escaped(self):
        page = (self.out / "report" / "students" / "ann.html").read_text(encoding="utf-8")
        text = "".join(Elements(page).text)
        for shown in ("c001", "expected", "10", "9", "<b>", PRINTED):
            self.assertIn(shown, text)
        self.assertIn(f'python3 grading/grade.py "$CLASS" --student=ann --labs 01 --seed {SEED} --build-dir '
                      "build/solutions --out replay --force --require-sandbox", text,
                      "the replay command: the class folder, the student, the lab and the seed, sandboxed")

    def test_an_unchanged_page_is_not_rewritten_and_a_student_gone_loses_its_page(self):
        ann = self.out / "report" / "students" / "ann.html"
        os.utime(ann, (1, 1))
        write_site(self.out, LABS, self.names, self.records)
        self.assertEqual(ann.stat().st_mtime, 1)
        write_site(self.out, LABS, self.names, [record("ann", gpu=False), self.records[1]], only={HOSTILE})
        self.assertEqual(ann.stat().st_mtime, 1, "only the pages of the students just graded are written")
        write_site(self.out, LABS, ["late"], [], only=set())
        self.assertEqual(len(list((self.out / "report" / "students").glob("*.html"))), 2, "nothing removed")
        write_site(self.out, LABS, ["late"], [])
        self.assertEqual(list((self.out / "report" / "students").glob("*.html")), [])
        self.assertEqual(list((self.out / "report" / "handouts").glob("*.html")), [])


SVG = ('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
       'onload="alert(1)"><defs><path id="m" d="M0 0"/></defs><script>alert(2)</script>'
       '<foreignObject><div>x</div></foreignObject><use xlink:href="#m"/><use xlink:href="http://evil.example/#m"/>'
       '<text style="fill: url(http://evil.example/x)">&lt;script&gt;</text><g clip-path="url(#c)"/></svg>')


class Figures(unittest.TestCase):
    def test_only_drawing_is_kept(self):
        cleaned = clean_svg(SVG.encode())
        for gone in ("onload", "<script", "foreignObject", "evil.example"):
            self.assertNotIn(gone, cleaned)
        for kept in ('href="#m"', "&lt;script&gt;", 'clip-path="url(#c)"', "<svg"):
            self.assertIn(kept, cleaned)
        self.assertFalse(re.search(r"<ns\d+:", cleaned), "SVG stays in the default namespace, as HTML wants it")

    def test_entities_and_other_documents_are_refused(self):
        with self.assertRaises(ValueError):
            clean_svg(b'<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>')
        with self.assertRaises(ValueError):
            clean_svg(b"<html><body/></html>")

    def test_a_figure_older_than_the_timings_or_a_link_is_not_used(self):
        folder = Path(tempfile.mkdtemp(prefix="figures-test-"))
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        (folder / "status.svg").write_text(SVG, encoding="utf-8")
        os.utime(folder / "status.svg", (100, 100))
        self.assertTrue(load_figure(folder, "status", 100).svg)
        self.assertFalse(load_figure(folder, "status", 101).svg)
        (folder / "by_lab.svg").symlink_to(folder / "status.svg")
        self.assertFalse(load_figure(folder, "by_lab", 0).svg)
        self.assertEqual(load_figure(folder, "sweep", 0).note, "not drawn")


if __name__ == "__main__":
    unittest.main()
