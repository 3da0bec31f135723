"""The class outputs rebuilt from the records: gradebook, timings, JUnit, Gradescope (reports.py),
the class report web site (site/) and the figures."""
