"""Renderers of the audit's report (`cloneprobe.audit.audit_report.AuditReport`): terminal
tables, CSV, Markdown, LaTeX (the reference study's Table VI layout) and a self-contained HTML
page. Renderers only: nothing here decides a verdict or counts a sample.

`write_reports` is loaded on first use (PEP 562), so that a command that needs one renderer
(`scan` prints with `reports.scan_text`) does not import everything behind the others."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .files import write_reports

__all__ = ["write_reports"]

_HOMES = {"write_reports": ".files"}


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
