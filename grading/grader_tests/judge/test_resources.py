"""Which failed runs look like a shared resource ran out (resources.py): canned results of the
real tools, and the text a student's run can print, which must not count."""

import unittest

from grader_tests import helpers  # noqa: F401  (puts grading/ on the path)
from grader.judge.checks import TestCheck, cuda_error_name
from grader.judge.resources import COMPILE, SANITIZER, TEST, resource_failure
from grader.sandbox.process import ProcessResult

N = 166


def crashed(message: str = "", load_error: str = "", stdout: str = "", stderr: str = "", returncode: int = 3, **run):
    """A test run that ended after one case with `message` (the checker's report of what the runner said)."""
    check = TestCheck("02_atomic", "7", N, 1, 0, error_case="c001" if message else "", error_message=message,
                      load_error=load_error, last_started="c001")
    return ProcessResult(returncode, stdout, stderr, **run), check


def nothing_seen(stderr: str, returncode: int = 1):
    """A test run the checker saw nothing of: no case, no message, no end."""
    return ProcessResult(returncode, "", stderr), TestCheck("02_atomic", "7", N)


def harness(name: str, text: str) -> str:
    return f"grading/checking/lab_runner.cpp:61: cudaMalloc(&d, bytes) failed: {name} ({text})"


def cause(step, run, check=None):
    found = resource_failure(step, run, check)
    return found and (found.cause, found.gpu_only)


class TestRuns(unittest.TestCase):
    def test_cuda_errors_of_a_shared_gpu_count_by_name(self):
        self.assertEqual(cause(TEST, *crashed(harness("cudaErrorMemoryAllocation", "out of memory"))),
                         ("out of memory (cudaErrorMemoryAllocation)", False))
        self.assertEqual(cause(TEST, *crashed(harness("cudaErrorLaunchTimeout", "the launch timed out and was "
                                                                                  "terminated")))[1], True)
        self.assertEqual(cause(TEST, *crashed(harness("cudaErrorDevicesUnavailable",
                                                      "CUDA-capable device(s) is/are busy or unavailable"))),
                         ("the GPU was busy (cudaErrorDevicesUnavailable)", True))
        for name in ("cudaErrorInsufficientDriver", "cudaErrorLaunchOutOfResources", "cudaErrorIllegalAddress",
                     "cudaErrorNoDevice", "cudaErrorCooperativeLaunchTooLarge"):
            self.assertIsNone(resource_failure(TEST, *crashed(harness(name, "some text"))), name)

    def test_host_memory_and_process_table_by_what_the_runner_reported(self):
        self.assertEqual(cause(TEST, *crashed("std::bad_alloc")), ("out of host memory (std::bad_alloc)", False))
        self.assertIn("no free process", cause(TEST, *crashed("Resource temporarily unavailable"))[0])
        self.assertIn("no free process", cause(TEST, *crashed("thread: Resource temporarily unavailable"))[0])
        self.assertIn("out of host memory", cause(TEST, *crashed(load_error="lab02.so: Cannot allocate memory"))[0])
        self.assertIsNone(resource_failure(TEST, *crashed(load_error="lab02.so: cannot allocate memory in static "
                                                                     "TLS block")))
        self.assertIsNone(resource_failure(TEST, *crashed("lab 02: the input was modified")))

    def test_a_sigkill_the_grader_did_not_send(self):
        for returncode in (-9, 137):   # 137: bubblewrap reports a child killed by signal N as 128 + N
            self.assertIn("SIGKILL", cause(TEST, *crashed(returncode=returncode))[0])
            self.assertIn("SIGKILL", cause(COMPILE, ProcessResult(returncode))[0])
            self.assertIn("SIGKILL", cause(SANITIZER, ProcessResult(returncode))[0])
        self.assertIsNone(resource_failure(TEST, *crashed(returncode=-9, timed_out=True)))
        self.assertIsNone(resource_failure(TEST, *crashed(returncode=-9, stalled=True)))
        self.assertIsNone(resource_failure(TEST, *crashed(returncode=-11)))
        self.assertIsNone(resource_failure(TEST, *crashed(harness("cudaErrorMemoryAllocation", "out of memory"),
                                                          output_limit=True)), "a flood is the run's own")

    def test_what_a_test_run_prints_counts_for_nothing(self):
        words = ("out of memory\ncudaErrorMemoryAllocation\n" + harness("cudaErrorMemoryAllocation", "out of memory")
                 + "\nResource temporarily unavailable\nCannot allocate memory\nstd::bad_alloc\n"
                 "setpriv: setresuid failed: Resource temporarily unavailable\n")
        self.assertIsNone(resource_failure(TEST, *crashed("lab 02: the input was modified", stdout=words,
                                                          stderr=words)))
        self.assertIsNone(resource_failure(TEST, *crashed(stdout=words, stderr=words, returncode=1)))
        wrong = TestCheck("02_atomic", "7", N, N, N - 1, 1, end=True)
        self.assertIsNone(resource_failure(TEST, ProcessResult(0, words, words), wrong))
        self.assertIsNone(resource_failure(TEST, ProcessResult(1, words, words), None), "the checker failed")

    def test_the_sandbox_launcher_failing_before_the_run_started(self):
        for line in ("setpriv: setresuid failed: Resource temporarily unavailable",
                     "bwrap: Creating new namespace failed: Resource temporarily unavailable",
                     "bwrap: fork: Cannot allocate memory",
                     "cannot start bwrap: [Errno 11] Resource temporarily unavailable"):
            self.assertIsNotNone(resource_failure(TEST, *nothing_seen(line + "\n")), line)
        self.assertIsNone(resource_failure(TEST, *nothing_seen("Resource temporarily unavailable\n")),
                          "not in a launcher's words")
        self.assertIsNone(resource_failure(TEST, *nothing_seen("hello\nbwrap: fork: Cannot allocate memory\n")),
                          "not the first line")
        self.assertIsNone(resource_failure(TEST, *nothing_seen("bwrap: Can't find source path /x: No such file\n")))
        run, check = nothing_seen("setpriv: setresuid failed: Resource temporarily unavailable\n")
        check.last_started = "c001"   # the runner ran: its stderr is the student's
        self.assertIsNone(resource_failure(TEST, run, check))

    def test_compiles_by_the_drivers_own_lines_never_the_students_source(self):
        for line in ("nvcc fatal   : Failed to preprocess host compiler properties.",
                     "nvcc error   : 'cicc' died due to signal 9 (Kill signal)",
                     "g++: fatal error: Killed signal terminated program cc1plus",
                     "cc1plus: out of memory allocating 65536 bytes after a total of 1234 bytes",
                     "/bin/sh: fork: retry: Resource temporarily unavailable",
                     "terminate called after throwing an instance of 'std::bad_alloc'",
                     "virtual memory exhausted: Cannot allocate memory"):
            self.assertIsNotNone(resource_failure(COMPILE, ProcessResult(1, "", line + "\n")), line)
        for line in ("/w/labs/02_atomic/atomic.cu(3): error: #error directive: Failed to preprocess host compiler "
                     "properties",
                     "/w/labs/02_atomic/atomic.cu:3:2: error: #error out of memory",
                     "atomic.cu:3: warning: Resource temporarily unavailable",
                     "  #error Cannot allocate memory",
                     "    3 | #error nvcc error : 'cicc' died due to signal 9",
                     "/w/labs/02_atomic/atomic.cu(12): error: identifier \"x\" is undefined"):
            self.assertIsNone(resource_failure(COMPILE, ProcessResult(1, line + "\n", "")), line)

    def test_sanitizer_runs_by_compute_sanitizers_lines(self):
        hit = ("========= COMPUTE-SANITIZER\n========= Program hit cudaErrorMemoryAllocation (error 2) due to \"out of "
               "memory\" on CUDA API call to cudaMalloc.\n========= ERROR SUMMARY: 1 error\n")
        self.assertEqual(cause(SANITIZER, ProcessResult(99, log=hit)), ("out of memory (cudaErrorMemoryAllocation)", False))
        self.assertIsNotNone(resource_failure(SANITIZER, ProcessResult(255, log="========= Error: out of memory\n")))
        invalid = ("========= COMPUTE-SANITIZER\n========= Program hit cudaErrorInvalidValue (error 1) due to \"invalid "
                   "argument\"\n========= ERROR SUMMARY: 1 error\n")
        self.assertIsNone(resource_failure(SANITIZER, ProcessResult(99, log=invalid)))

    def test_what_the_program_under_the_tool_prints_runs_nothing_again(self):
        # stdout and stderr are the student's: resource words or the tool's own lines there count for nothing
        words = "out of memory\ncudaErrorMemoryAllocation\n========= Program hit cudaErrorMemoryAllocation (error 2)\n"
        clean = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
        hazards = "========= COMPUTE-SANITIZER\n========= Invalid __global__ read\n========= ERROR SUMMARY: 3 errors\n"
        self.assertIsNone(resource_failure(SANITIZER, ProcessResult(0, words, words, log=clean)))
        self.assertIsNone(resource_failure(SANITIZER, ProcessResult(99, words, words, log=hazards)))
        # ... nor can a printed summary make an unreadable result look readable
        self.assertIsNotNone(resource_failure(SANITIZER, ProcessResult(99, clean, clean, log="")))

    def test_a_sanitizer_run_that_ended_with_the_runners_error_status_and_no_summary(self):
        # racecheck and synccheck name no failed CUDA call (H100, 2026-11-25): the status says it.
        ended = ProcessResult(3, log="========= COMPUTE-SANITIZER\n")
        self.assertEqual(cause(SANITIZER, ended)[1], True)
        self.assertIn("no summary", cause(SANITIZER, ended)[0])
        self.assertIsNone(resource_failure(SANITIZER, ProcessResult(3, "", "", timed_out=True)))

    def test_a_sanitizer_result_that_cannot_be_read_is_a_gpu_resource_failure(self):
        # beside a hog, the tool short of memory ends in words of its own: any unreadable result is run again
        # alone (where a student made it so, it costs only its own time alone)
        for log, returncode in (("========= COMPUTE-SANITIZER\n", 1),
                                ("========= COMPUTE-SANITIZER\n========= Internal Sanitizer Error: x\n", 255),
                                ("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", 255),
                                ("", 0)):
            failure = cause(SANITIZER, ProcessResult(returncode, log=log))
            self.assertTrue(failure[1], "a GPU resource")
            self.assertIn("could not be read", failure[0])
        readable = ("========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)\n",
                    "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n")
        self.assertIsNone(resource_failure(SANITIZER, ProcessResult(99, log=readable[0])), "a race is the lab's own")
        self.assertIsNone(resource_failure(SANITIZER, ProcessResult(0, log=readable[1])))

    def test_an_unknown_step_is_a_grader_bug(self):
        with self.assertRaises(ValueError):
            resource_failure("timing", ProcessResult(1))


class TestCudaErrorName(unittest.TestCase):
    def test_the_name_of_a_message_in_the_harness_shape_only(self):
        self.assertEqual(cuda_error_name(harness("cudaErrorDevicesUnavailable", "device(s) busy/unavailable")),
                         "cudaErrorDevicesUnavailable")
        self.assertEqual(cuda_error_name("cudaErrorMemoryAllocation"), "")
        self.assertEqual(cuda_error_name("out of memory: cudaErrorMemoryAllocation (out of memory)"), "")


if __name__ == "__main__":
    unittest.main()
