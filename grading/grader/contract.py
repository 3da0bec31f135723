"""What the grader's programs and this grader agree on (grading/contract.json), read once."""

from __future__ import annotations

import json
from enum import IntEnum
from pathlib import Path

_CONTRACT = json.loads((Path(__file__).resolve().parent.parent / "contract.json").read_text(encoding="utf-8"))

TESTS_REPORT: str = _CONTRACT["reports"]["tests"]
TIMING_REPORT: str = _CONTRACT["reports"]["timing"]
REPORT_VERSION: int = _CONTRACT["reports"]["version"]
RUNNER_EXIT_WATCHDOG: int = _CONTRACT["runner_exit"]["watchdog"]
RUNNER_EXIT_RUNTIME_ERROR: int = _CONTRACT["runner_exit"]["runtime_error"]
REPORT_FD_FLAG: str = _CONTRACT["report_channel"]["report_fd"]
TOKEN_FD_FLAG: str = _CONTRACT["report_channel"]["token_fd"]
CLOCK_OUT_FD_FLAG: str = _CONTRACT["timekeeper"]["out_fd"]
CLOSE_SANITIZER_LOG_FLAG: str = _CONTRACT["sanitizer_log"]["close_flag"]
REUSE_BUFFERS_FLAG: str = _CONTRACT["test_runner"]["reuse_buffers_flag"]
CALL_FLOOR_FLAG: str = _CONTRACT["test_runner"]["call_floor_flag"]
FULL_CALL_ELEMENTS: int = _CONTRACT["test_runner"]["full_call_elements"]
PAIR_WORKER_FLAG: str = _CONTRACT["pair"]["worker"]
PAIR_PLAN_FLAG: str = _CONTRACT["pair"]["plan"]
PAIR_OUT_FD_FLAG: str = _CONTRACT["pair"]["out_fd"]
PAIR_TOKEN_FD_FLAG: str = _CONTRACT["pair"]["token_fd"]
PAIR_FREEZE_FLAG: str = _CONTRACT["pair"]["freeze"]
PAIR_WORKER_CGROUP_FLAG: str = _CONTRACT["pair"]["worker_cgroup"]
JOB_FORMAT: str = _CONTRACT["grading_job"]["format"]
JOB_VERSION: int = _CONTRACT["grading_job"]["version"]
JOB_OPTION: str = _CONTRACT["grading_job"]["option"]
EVENTS_VERSION: int = _CONTRACT["events"]["version"]
RECORD_VERSION: int = _CONTRACT["student_record"]["version"]
LEDGER_VERSION: int = _CONTRACT["grading_ledger"]["version"]
LEDGER_FILE: str = _CONTRACT["grading_ledger"]["file"]
SKIP_CODE: int = _CONTRACT["skip_code"]   # CTest's SKIP_RETURN_CODE: a test that cannot run here
EVENTS_FD_OPTION: str = _CONTRACT["events"]["fd_option"]
VERDICT_ORDER: tuple[str, ...] = tuple(_CONTRACT["verdicts"]["order"])
VERDICT_LETTERS: dict[str, str] = _CONTRACT["verdicts"]["letters"]
VERDICT_WORDS: dict[str, str] = _CONTRACT["verdicts"]["words"]
VERDICT_MARKS: dict[str, str] = _CONTRACT["verdicts"]["marks"]

ExitStatus = IntEnum("ExitStatus", {name.upper(): code for name, code in _CONTRACT["grade_exit"].items()
                                    if name != "comment"})
ExitStatus.__doc__ = "grade.py's exit statuses (contract.json, grade_exit)."
