"""timings.csv's columns, in order, and the owners every benchmark run measures beside the students:
written by the grader (grading/grader/report/reports.py) and by reduction_bench
(common/bench/bench_report.cpp, checked against this by the plots tests), read by the plots
(plots/plotting/timings.py)."""

REFERENCE = "reference"
BASELINE = "baseline"
COLUMNS = ("student", "lab", "type", "n", "median_us", "min_us", "iqr_us", "gbps", "pct_roof", "ref_median_us",
           "ratio_to_ref", "status", "gpu", "date")
REQUIRED_COLUMNS = ("student", "lab", "type", "n", "median_us", "status")
NUMERIC_COLUMNS = ("median_us", "min_us", "iqr_us", "gbps", "pct_roof", "ref_median_us", "ratio_to_ref")
