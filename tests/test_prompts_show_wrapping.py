"""`cloneprobe prompts --show` piped: lines wider than COLUMNS (80 without it) are cut into rows
whose continuation starts with the marker --diff and the evidence tables use, never wrapped
unmarked; the rows put back together are the prompt. Through the CLI in a subprocess, its
stdout a pipe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.reports.prompts_text import CONTINUED

ROOT = Path(__file__).resolve().parents[1]
PROMPT = load_humaneval().get("HumanEval/0").prompt


def show(columns: int | None) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    result = subprocess.run(
        [sys.executable, "-m", "cloneprobe", "prompts", "--show", "0", "--prompts", "original"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


@pytest.mark.parametrize("columns", [None, 60])
def test_shown_prompt_rows_fit_and_mark_every_continuation(columns):
    width = columns or 80
    rows = show(columns)
    assert rows[0] == "HumanEval/0 original/original"
    body = rows[1:]
    assert all(len(row) <= width for row in rows), [r for r in rows if len(r) > width]
    wide = [line for line in PROMPT.splitlines() if len(line) > width]
    assert wide, "the prompt must have a line wider than the console for this test"
    assert sum(row.startswith(CONTINUED) for row in body) >= len(wide)
    # put back together (a continuation joins its row with the space it was cut at), the
    # rows are the prompt's lines: nothing lost, nothing wrapped without a mark
    lines: list[str] = []
    for row in body:
        if row.startswith(CONTINUED):
            lines[-1] += " " + row[len(CONTINUED):]
        else:
            lines.append(row)
    assert [line.rstrip() for line in lines if line.strip()] == [
        line.rstrip() for line in PROMPT.splitlines() if line.strip()]


def test_a_wide_console_shows_the_prompt_as_it_is():
    rows = show(200)
    assert not any(row.startswith(CONTINUED) for row in rows)
    assert [r for r in rows[1:] if r.strip()] == [p for p in PROMPT.splitlines() if p.strip()]
