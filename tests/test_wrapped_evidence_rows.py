"""Side-by-side evidence in the terminal (`detect --evidence`, `clones --explain`) through the
CLI at a narrow width: a line too long for its column goes on in rows marked as its
continuation, and every row of a line that differs carries the difference mark. They were
wrapped by the table, so the rest of a line read as a line of its own, and piped (no colour)
nothing said which rows differed."""

from __future__ import annotations

import json
from pathlib import Path

from test_bad_inputs import run, write

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.reports.side_rows import CONTINUED, DIFFERENT

LONG = "the_distance_between_the_two_elements_of_the_list_of_numbers"


def table_lines(output: str) -> list[tuple[str, str, str]]:
    """(mark, left, right) of every side-by-side row, its rows of one line joined."""
    lines: list[tuple[str, str, str]] = []
    for row in output.splitlines():
        cells = row.split("│")
        if not row.startswith("│") or len(cells) != 5:
            continue
        mark, left, right = (cell[1:-1] for cell in cells[1:4])
        if mark[1:] == CONTINUED:
            assert lines and lines[-1][0][0] == mark[0], row  # a differing line's every row
            lines[-1] = (lines[-1][0], lines[-1][1] + left, lines[-1][2] + right)
        else:
            lines.append((mark, left, right))
    return lines


def squeezed(text: str) -> str:
    return "".join(text.split())


def check(output: str, width: int, long_line: str) -> None:
    assert all(len(row) <= width for row in output.splitlines()), output
    found = [(mark, right) for mark, _, right in table_lines(output)
             if squeezed(long_line) in squeezed(right)]  # fmt: skip
    assert found, output  # the long line whole, from its rows
    assert all(mark[0] == DIFFERENT for mark, _ in found), found


def test_detect_evidence_marks_every_row_of_a_wrapped_differing_line(tmp_path):
    canonical = load_humaneval().get("HumanEval/0").canonical_solution
    renamed = canonical.replace("distance", LONG)
    samples = write(tmp_path / "s.jsonl", json.dumps({"task_id": "HumanEval/0",
                                                      "completion": renamed}) + "\n")
    result = run("detect", samples, "--model", "m", "--temperature", "0.2", "--store",
                 tmp_path / "s.sqlite", "--evidence")  # fmt: skip
    assert result.exit_code == 0, result.output
    # COLUMNS is 200 in tests: the long line does not fit half of that either
    check(result.stdout, 200, f"{LONG} = abs(elem - elem2)")


NICAD = ["--explain", "--profile", "nicad", "--min-lines", "5"]  # lines compared, as printed
LONG_SUM = " + ".join(f"item * {n}" for n in range(30))


def clone_files(tmp: Path) -> tuple[Path, Path]:
    """Two functions, Type-3 clones, the second with one line far longer than the first's."""
    body = ("    total = 0\n    for item in items:\n        total += item\n"
            "        count = total - 1\n        print(count)\n    return total\n")
    a = write(tmp / "a.py", "def f(items):\n" + body)
    b = write(tmp / "b.py", "def f(items):\n" + body.replace("total += item",
                                                               f"total += {LONG_SUM}"))
    return a, b


def test_clones_explain_marks_every_row_of_a_wrapped_differing_line(tmp_path):
    result = run("clones", *clone_files(tmp_path), *NICAD)
    assert result.exit_code == 0, result.output
    check(result.stdout, 200, "x += " + " + ".join(["x * 1"] * 30))


def test_a_narrow_console_cuts_rows_to_its_width(tmp_path):
    from click.testing import CliRunner

    from cloneprobe.cli import main

    result = CliRunner().invoke(main, ["clones", *map(str, clone_files(tmp_path)), *NICAD],
                                env={"COLUMNS": "60"})  # fmt: skip
    assert result.exit_code == 0, result.output
    check(result.stdout, 60, "x += " + " + ".join(["x * 1"] * 30))
