"""process.py: a run's report channel apart from its own output, its token, and the limits that
look at the channel (CPU only: the runs are small Python programs standing in for the runner)."""

import fcntl
import os
import subprocess
import sys
import textwrap
import unittest
from pathlib import Path

from grader.sandbox import process
from grader.contract import REPORT_FD_FLAG, TOKEN_FD_FLAG
from grader.sandbox.process import Channel, Token, pinned, run_process, timing_core

# A stand-in for the runner: reads its token from --token-fd, then does what `body` says with
# `report(text)` (a line on the channel with the token) and `banner(text)` (the program's stdout).
RUNNER = textwrap.dedent("""\
    import os, sys, time
    args = dict(a.split("=", 1) for a in sys.argv[1:])
    report_fd, token_fd = int(args["{report}"]), int(args["{token}"])
    token = os.read(token_fd, 100).decode().strip()
    def report(text):
        os.write(report_fd, ('{{"t":"%s","line":"%s"}}\\n' % (token, text)).encode())
    def banner(text):
        sys.stdout.write(text); sys.stdout.flush()
    {body}
""")


def runner(body: str, channel: Channel, timeout: float = 20, stall_s: float | None = None):
    code = RUNNER.format(report=REPORT_FD_FLAG, token=TOKEN_FD_FLAG, body=body)
    return run_process([sys.executable, "-c", code, *channel.argv()], timeout, stall_s=stall_s, channel=channel)


class TestChannel(unittest.TestCase):
    def test_the_report_and_the_programs_output_stay_apart(self):
        with Channel() as channel:
            result = runner("banner('a banner without a newline'); report('one'); banner('more'); report('two')", channel)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "a banner without a newlinemore")
        lines = result.report.splitlines()
        self.assertEqual(len(lines), 2, result.report)
        self.assertTrue(all(f'"t":"{channel.token}"' in line for line in lines), result.report)
        self.assertEqual(result.token, channel.token)

    def test_each_line_carries_when_it_arrived(self):
        with Channel() as channel:
            result = runner("report('one'); time.sleep(0.3); report('two')", channel)
        first, second = (int(line.split(" ", 1)[0]) for line in result.report.splitlines())
        self.assertGreaterEqual(second - first, 250_000, result.report)   # microseconds
        self.assertTrue(result.report.splitlines()[0].split(" ", 1)[1].startswith('{"t":'))

    def test_every_run_gets_its_own_token(self):
        tokens = set()
        for _ in range(5):
            with Channel() as channel:
                tokens.add(channel.token)
                self.assertRegex(channel.token, r"^[0-9a-f]{32}$")
        self.assertEqual(len(tokens), 5)

    def test_a_token_alone_is_one_line_on_its_own_pipe_closed_with_it(self):
        with Token() as token:
            self.assertRegex(token.token, r"^[0-9a-f]{32}$")
            self.assertEqual(os.read(token.fd, 100), (token.token + "\n").encode())
            fd = token.fd
        self.assertEqual(token.fd, -1)
        with self.assertRaises(OSError):
            os.fstat(fd)

    def test_printing_does_not_keep_a_run_that_reports_nothing_alive(self):
        with Channel() as channel:
            result = runner("report('started')\nwhile True:\n    banner('.'); time.sleep(0.05)", channel, stall_s=1.5)
        self.assertTrue(result.stalled)
        self.assertFalse(result.timed_out)
        self.assertEqual(len(result.report.splitlines()), 1)

    def test_what_was_reported_before_a_crash_is_kept(self):
        with Channel() as channel:
            result = runner("report('one'); report('two'); os._exit(3)", channel)
        self.assertEqual(result.returncode, 3)
        self.assertEqual(len(result.report.splitlines()), 2)

    def test_a_flood_on_the_channel_stops_the_run(self):
        old = process.REPORT_LIMIT
        process.REPORT_LIMIT = 1 << 16
        try:
            with Channel() as channel:
                result = runner("while True:\n    report('x' * 1000)", channel)
        finally:
            process.REPORT_LIMIT = old
        self.assertTrue(result.output_limit)
        self.assertFalse(result.timed_out)

    def test_a_child_left_holding_the_channel_does_not_hold_the_grader(self):
        body = "if os.fork() == 0:\n    os.setsid(); time.sleep(6); os._exit(0)\nreport('parent done')"
        with Channel() as channel:
            result = runner(body, channel)
        self.assertEqual(result.returncode, 0)
        self.assertLess(result.seconds, process.DRAIN_S + 10)
        self.assertEqual(len(result.report.splitlines()), 1)

    def test_the_graders_ends_of_the_pipes_are_closed_once_the_run_started(self):
        before = set(os.listdir("/proc/self/fd"))
        with Channel() as channel:
            runner("report('x')", channel)
        self.assertEqual(set(os.listdir("/proc/self/fd")), before)

    def test_a_run_writes_a_whole_timing_runs_report_without_waiting_for_the_reader(self):
        # the grader reads nothing while the run writes 512 KiB (a timing run writes about 100 KiB):
        # where the system allows the channel its size, the write returns at once
        try:
            limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        except (OSError, ValueError):
            self.skipTest("no /proc/sys/fs/pipe-max-size: not Linux")
        if limit < process.CHANNEL_PIPE_BYTES:
            self.skipTest(f"this system allows a pipe {limit} bytes, under {process.CHANNEL_PIPE_BYTES}")
        with Channel() as channel:
            size = fcntl.fcntl(channel.write_fd, fcntl.F_GETPIPE_SZ)
            self.assertGreaterEqual(size, process.CHANNEL_PIPE_BYTES)
            code = "import os, sys; os.write(int(sys.argv[1]), b'x' * (512 << 10))"
            child = subprocess.Popen([sys.executable, "-c", code, str(channel.write_fd)], pass_fds=(channel.write_fd,))
            channel.started()
            try:
                self.assertEqual(child.wait(timeout=20), 0, "the run waited for the grader to read")
            finally:
                child.kill()
                child.wait()
            read = b""
            while chunk := os.read(channel.read_fd, 1 << 16):
                read += chunk
            self.assertEqual(len(read), 512 << 10)


class TestPinned(unittest.TestCase):
    def test_a_pinned_run_and_what_it_starts_stay_on_one_core(self):
        code = "import os, subprocess; print(sorted(os.sched_getaffinity(0))); " \
               "subprocess.run(['python3', '-c', 'import os; print(sorted(os.sched_getaffinity(0)))'])"
        result = run_process([sys.executable, "-c", code], 20, preexec=pinned(None, timing_core()))
        self.assertEqual(result.stdout.split(), [f"[{timing_core()}]"] * 2)
        self.assertIn(timing_core(), os.sched_getaffinity(0))

    def test_the_other_preexec_still_runs(self):
        result = run_process([sys.executable, "-c", "import os; print(os.getpgrp() == os.getpid())"], 20,
                             preexec=pinned(lambda: os.environ.__setitem__("X", "1"), timing_core()))
        self.assertEqual(result.returncode, 0)
        self.assertIs(pinned(None, None), None)


if __name__ == "__main__":
    unittest.main()
