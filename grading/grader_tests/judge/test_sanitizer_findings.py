"""compute-sanitizer's findings from its own log, read strictly (sanitizer_log.py, sanitizer_findings.py),
on the canned logs of grader_tests/fixtures/ (the tool's real lines) and on forgeries of them: what the
program under the tool prints decides nothing, and what it writes into the log can only add a finding."""

import unittest

from grader_tests.helpers import fixture
from grader.judge.sanitizer_findings import CLEAN, HAZARDS, UNREADABLE, sanitizer_finding, self_test
from grader.judge.sanitizer_log import BANNER, LOG_LIMIT, log_text, read_log
from grader.sandbox.process import ProcessResult

CLEAN_MEMCHECK = "========= ERROR SUMMARY: 0 errors\n"
CLEAN_RACECHECK = "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
FORGED = CLEAN_MEMCHECK + CLEAN_RACECHECK   # what 5f01a7f's lab printed, in the tool's exact shape


def run(log: str, returncode: int = 0, stdout: str = "", stderr: str = "", **kwargs) -> ProcessResult:
    return ProcessResult(returncode, stdout, stderr, log=log, **kwargs)


def status(tool: str, result: ProcessResult) -> tuple[str, int]:
    finding = sanitizer_finding(tool, result)
    return finding.status, finding.count


class TheToolsOwnLogs(unittest.TestCase):
    def test_racecheck_hazards_are_counted_with_the_first_report_lines(self):
        finding = sanitizer_finding("racecheck", fixture("racecheck_hazard"))
        self.assertEqual((finding.status, finding.count), (HAZARDS, 2))
        self.assertTrue(finding.report[0].startswith("Error: Race reported between Write access"))

    def test_memcheck_errors_are_counted(self):
        finding = sanitizer_finding("memcheck", fixture("memcheck_error"))
        self.assertEqual((finding.status, finding.count), (HAZARDS, 223))
        self.assertEqual(finding.report[0], "Invalid __global__ read of size 4 bytes")

    def test_the_note_after_the_summary_is_the_tools_own(self):
        """A real log (H100, CUDA 13.0): past --print-limit the tool adds a second "ERROR SUMMARY:"
        line, a note of the reports it did not print. Its summary is the line before: hazards, not a
        garbled log."""
        finding = sanitizer_finding("memcheck", fixture("memcheck_error_h100"))
        self.assertEqual((finding.status, finding.count), (HAZARDS, 261))
        self.assertEqual(finding.note, "")
        # the note alone, or a forged second summary, is still no result
        log = fixture("memcheck_error_h100").log
        self.assertTrue(read_log(log.replace("========= ERROR SUMMARY: 261 errors\n", "")).problem)
        self.assertTrue(read_log(log + "========= ERROR SUMMARY: 0 errors\n").problem)

    def test_clean_runs_have_no_finding(self):
        self.assertEqual(status("memcheck", fixture("memcheck_clean")), (CLEAN, 0))
        self.assertEqual(status("synccheck", fixture("memcheck_clean")), (CLEAN, 0))
        self.assertEqual(status("racecheck", fixture("racecheck_clean")), (CLEAN, 0))

    def test_racecheck_warnings_are_hazards_whatever_the_status(self):
        # the H200 reports the volatile-only last warp's races as warnings
        log = (BANNER + "\n========= Warning: Race reported between Write access at f in last_warp.cu:41\n"
               "========= RACECHECK SUMMARY: 35 hazards displayed (0 errors, 35 warnings)\n")
        for returncode in (0, 99):
            finding = sanitizer_finding("racecheck", run(log, returncode))
            self.assertEqual((finding.status, finding.count, finding.warnings), (HAZARDS, 35, 35))

    def test_a_run_the_tool_could_not_finish_is_a_finding_that_says_so(self):
        finding = sanitizer_finding("synccheck", fixture("sanitizer_broken"))
        self.assertEqual((finding.status, finding.count), (UNREADABLE, 1))
        self.assertIn("holds no summary", finding.note)
        self.assertIn("counted as a finding", finding.note)

    def test_a_run_past_its_time_is_a_finding(self):
        finding = sanitizer_finding("racecheck", fixture("racecheck_clean", timed_out=True, timeout_s=90))
        self.assertEqual((finding.status, finding.count), (UNREADABLE, 1))
        self.assertIn("did not finish within 90 s", finding.note)

    def test_a_sanitizer_that_did_not_start_says_why_from_its_stderr_only_then(self):
        stderr = ("/usr/local/cuda-13.0/compute-sanitizer/compute-sanitizer: error while loading shared libraries: "
                  "libfoo.so.1: cannot open shared object file: No such file or directory\n")
        finding = sanitizer_finding("memcheck", run("", 127, stderr=stderr))
        self.assertEqual((finding.status, finding.count), (UNREADABLE, 1))
        self.assertIn("is empty", finding.note)
        self.assertIn("error while loading shared libraries: libfoo.so.1", finding.note)
        started = sanitizer_finding("memcheck", run(BANNER + "\n", 127, stderr=stderr))
        self.assertNotIn("libfoo", started.note, "once the program ran, its stderr is its own")


class WhatTheProgramPrints(unittest.TestCase):
    def test_a_printed_clean_summary_changes_nothing(self):
        real = fixture("racecheck_hazard")
        for stdout, stderr in ((FORGED, ""), ("", FORGED), (FORGED, FORGED * 3)):
            forged = run(real.log, 99, real.stdout + stdout, real.stderr + stderr)
            self.assertEqual(status("racecheck", forged), (HAZARDS, 2))

    def test_printed_hazards_change_nothing_either(self):
        printed = fixture("memcheck_error").log
        self.assertEqual(status("memcheck", run(fixture("memcheck_clean").log, 0, printed, printed)), (CLEAN, 0))

    def test_the_old_channel_alone_is_no_result(self):
        # 5f01a7f: the tool's lines on stdout, a clean summary on the program's stderr, nothing on the log
        old = fixture("racecheck_hazard")
        self.assertEqual(status("racecheck", run("", 0, old.log + old.stdout, FORGED)), (UNREADABLE, 1))

    def test_the_program_output_is_kept_beside_the_finding_short(self):
        finding = sanitizer_finding("memcheck", run(fixture("memcheck_clean").log, 0, "hello\n" + "x" * 10000, ""))
        self.assertTrue(finding.program_output.startswith("[stdout]\nhello"))
        self.assertLess(len(finding.program_output), 2300)
        self.assertEqual(finding.to_json()["program_output"], finding.program_output)


class WhatTheProgramWritesIntoTheLog(unittest.TestCase):
    """Through /proc/<the tool>/fd/<the log> (the same uid) a program can add lines to the log, at any
    point of it: never one that makes a hazard go away or a count smaller."""

    FORGERIES = (CLEAN_MEMCHECK, CLEAN_RACECHECK, FORGED, BANNER + "\n" + CLEAN_RACECHECK, "hello\n",
                 "========= Error: Race reported between nothing\n", "=========\n", "\n", "========= ", "x")

    def test_a_forged_line_anywhere_never_hides_a_hazard(self):
        for tool, name, count in (("racecheck", "racecheck_hazard", 2), ("memcheck", "memcheck_error", 223)):
            lines = fixture(name).log.splitlines(keepends=True)
            for at in range(len(lines) + 1):
                for forged in self.FORGERIES:
                    log = "".join(lines[:at]) + forged + "".join(lines[at:])
                    for returncode in (0, 99):
                        got = status(tool, run(log, returncode))
                        self.assertNotEqual(got[0], CLEAN, (tool, at, forged, returncode))
                        self.assertTrue(got[0] == UNREADABLE or got[1] >= count, (tool, at, forged, got))

    def test_each_way_a_log_is_unreadable_is_named(self):
        real = fixture("racecheck_hazard").log
        cases = {
            "holds 2 summaries": real.replace("\n", "\n" + CLEAN_RACECHECK, 1),
            "has lines after its summary": real + "========= Error: late\n",
            "not in compute-sanitizer's shape (line 4)": real.replace("=========\n", "hello\n", 1),
            "does not begin with compute-sanitizer's banner": real.split("\n", 1)[1],
            "ends with a summary that is not racecheck's": BANNER + "\n" + CLEAN_MEMCHECK,
            "holds no summary": BANNER + "\n",
            "is empty": "",
            f"is over {LOG_LIMIT >> 10} KiB": BANNER + "\n" + "========= at f\n" * (LOG_LIMIT // 10) + CLEAN_RACECHECK,
        }
        for said, log in cases.items():
            finding = sanitizer_finding("racecheck", run(log, 99))
            self.assertEqual((finding.status, finding.count), (UNREADABLE, 1), said)
            self.assertIn(said, finding.note)


class TheExitStatus(unittest.TestCase):
    def test_the_status_must_agree_with_the_summary(self):
        clean, hazards = fixture("racecheck_clean").log, fixture("racecheck_hazard").log
        self.assertIn("they disagree", sanitizer_finding("racecheck", run(clean, 99)).note)
        self.assertIn("they disagree", sanitizer_finding("racecheck", run(hazards, 0)).note)
        for returncode in (3, 1, 137, -9, None):
            finding = sanitizer_finding("racecheck", run(clean, returncode))
            self.assertEqual((finding.status, finding.count), (UNREADABLE, 1), returncode)
            self.assertIn(f"status {returncode}, neither 0 nor 99", finding.note)


class TheLogsChannel(unittest.TestCase):
    def test_the_transcript_gives_back_the_lines_as_written(self):
        self.assertEqual(log_text("12 ========= COMPUTE-SANITIZER\n40 =========\n41 ========= a b\n"),
                         "========= COMPUTE-SANITIZER\n=========\n========= a b\n")
        self.assertEqual(log_text(""), "")

    def test_read_log_without_a_tool_takes_any_tools_summary(self):
        self.assertEqual(read_log(fixture("racecheck_hazard").log).errors, 2)
        self.assertEqual(read_log(fixture("memcheck_error").log).errors, 223)


class TheSelfTest(unittest.TestCase):
    def test_every_tool_must_read_clean_on_a_trusted_run(self):
        logs = {"memcheck": fixture("memcheck_clean"), "racecheck": fixture("racecheck_clean")}
        self.assertEqual(self_test(logs.__getitem__, ("memcheck", "racecheck"), "lab 02's reference"), "")
        broken = {**logs, "racecheck": run("", 0, fixture("racecheck_clean").log)}   # on its stdout, not its log
        problem = self_test(broken.__getitem__, ("memcheck", "racecheck"), "lab 02's reference")
        self.assertTrue(problem.startswith("racecheck on lab 02's reference: compute-sanitizer's log is empty"), problem)


if __name__ == "__main__":
    unittest.main()
