"""Audit reports: one dictionary (the JSON schema) rendered as terminal tables, CSV, Markdown,
LaTeX (the reference study's Table VI layout) and a self-contained HTML page.

The names below are loaded on first use (PEP 562), so that a command that needs one report
module (`scan` prints with `reports.scan_text`) does not import the audit's report builder
and everything behind it (measured: 0.15-0.2 s of `cloneprobe scan`'s start-up)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .build import SCHEMA_VERSION, ReportBuilder
    from .files import write_reports

__all__ = ["SCHEMA_VERSION", "ReportBuilder", "write_reports"]

_HOMES = {"SCHEMA_VERSION": ".build", "ReportBuilder": ".build", "write_reports": ".files"}


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
