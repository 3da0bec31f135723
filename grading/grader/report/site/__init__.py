"""The class report as a static site (OUT/report/): site.py writes it, one module per page."""

from .site import REPORT, write_site  # noqa: F401
