"""The class report's checks in a real browser, one module per part (examples/check_report.py runs them)."""
