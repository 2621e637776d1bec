"""Audit reports: one dictionary (the JSON schema) rendered as terminal tables, CSV, Markdown,
LaTeX (the reference study's Table VI layout) and a self-contained HTML page."""

from .build import SCHEMA_VERSION, ReportBuilder
from .files import write_reports

__all__ = ["SCHEMA_VERSION", "ReportBuilder", "write_reports"]
