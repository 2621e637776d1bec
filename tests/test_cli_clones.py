"""`cloneprobe clones`: output formats, explain, and one clear error line for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from cloneprobe.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CANONICAL, SAMPLES = str(EXAMPLES / "canonical"), str(EXAMPLES / "samples")


def run(*args: str):
    return CliRunner().invoke(main, ["clones", *args], catch_exceptions=False)


def test_table_names_profile_and_counts_each_type():
    result = run(CANONICAL, SAMPLES)
    assert result.exit_code == 0
    assert "profile default" in result.output
    assert "3 clone pair(s) (Type-1: 1, Type-2: 1, Type-3: 1)" in result.output
    assert "1 trivial (not counted)" in result.output


def test_nicad_profile_cannot_see_the_two_line_canonical():
    result = run(CANONICAL, SAMPLES, "--profile", "nicad", "--min-lines", "5")
    assert result.exit_code == 0
    assert "profile nicad" in result.output
    assert "unique" not in result.output.split("clone pair(s)")[1]


def test_json_is_the_only_stdout_and_has_pairs_and_classes():
    result = run(CANONICAL, SAMPLES, "--json")
    data = json.loads(result.stdout)
    assert data["profile"] == "default"
    assert {(p["b"]["file"], p["type"], p["trivial"]) for p in data["pairs"]} == {
        ("below_zero_verbatim.py", "1", False),
        ("below_zero_renamed.py", "2", False),
        ("fizz_buzz_edited.py", "3", False),
        ("unique_same.py", "1", True),
    }
    assert [len(c["fragments"]) for c in data["classes"]] == [3, 2]


def test_single_type_run_reports_only_that_type():
    data = json.loads(run(CANONICAL, SAMPLES, "--type", "2", "--json").stdout)
    assert data["settings"]["types"] == [{"name": "2", "threshold": 0.0, "rename": "blind"}]
    assert sorted(p["b"]["file"] for p in data["pairs"] if not p["trivial"]) == [
        "below_zero_renamed.py",
        "below_zero_verbatim.py",
    ]


def test_threshold_override_is_labelled_custom():
    data = json.loads(run(CANONICAL, SAMPLES, "--threshold", "0.1", "--json").stdout)
    assert data["settings"]["types"][0]["name"] == "custom(t=0.1,blind)"
    assert "fizz_buzz_edited.py" not in {p["b"]["file"] for p in data["pairs"]}


def test_explain_shows_renamed_lines_and_marks_differences():
    result = run(CANONICAL, SAMPLES, "--explain")
    assert "for x in x :" in result.output  # blind-renamed Type-2 evidence
    assert "≠" in result.output  # the Type-3 pair's differing lines
    assert "balance += op" in result.output  # Type-1 evidence is not renamed


def test_explain_json_carries_compared_lines():
    data = json.loads(run(CANONICAL, SAMPLES, "--json", "--explain").stdout)
    verbatim = next(p for p in data["pairs"] if p["b"]["file"] == "below_zero_verbatim.py")
    assert verbatim["a"]["compared"] == verbatim["b"]["compared"]
    assert verbatim["a"]["compared"][0] == "balance = 0"


def _console(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cloneprobe", *args], capture_output=True, text=True, timeout=60
    )


class _Refused:
    """A bad input's outcome through the command's own error handling, in-process (CliRunner;
    a process start costs about 0.4 s of CPU): exit code, stdout and stderr apart."""

    def __init__(self, *args: str) -> None:
        result = CliRunner().invoke(main, list(args))
        self.returncode, self.stdout, self.stderr = result.exit_code, result.stdout, result.stderr


def test_missing_path_is_one_red_line_and_exit_code_2(tmp_path):
    missing = tmp_path / "nope"
    result = _Refused("clones", str(missing), SAMPLES)
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert f"{missing}: no such file or folder" in " ".join(result.stderr.split())


def test_two_missing_paths_are_named_missing_not_of_an_unknown_language(tmp_path):
    # the language was asked of them first: "no source file of a known language; pass --lang"
    result = _Refused("clones", str(tmp_path / "nope"), str(tmp_path / "nope2"))
    assert result.returncode == 2
    assert f"{tmp_path / 'nope'}: no such file or folder" in " ".join(result.stderr.split())
    assert "--lang" not in result.stderr


def test_folder_without_files_of_the_language_is_an_error(tmp_path):
    result = _Refused("clones", CANONICAL, SAMPLES, "--lang", "java")
    assert result.returncode == 2
    assert "holds no java file" in " ".join(result.stderr.split())


def test_unknown_extension_asks_for_lang(tmp_path):
    odd = tmp_path / "code.txt"
    odd.write_text("def f(x):\n    return x\n")
    result = _Refused("clones", str(odd), SAMPLES)
    assert result.returncode == 2
    assert "pass --lang" in " ".join(result.stderr.split())


def test_unknown_language_choice_is_rejected_with_exit_code_2():
    result = _Refused("clones", CANONICAL, SAMPLES, "--lang", "cobol")
    assert result.returncode == 2
    assert "cobol" in result.stderr


def test_empty_size_window_is_a_clear_error():
    result = _Refused("clones", CANONICAL, SAMPLES, "--min-lines", "50", "--max-lines", "10")
    assert result.returncode == 2
    assert "--min-lines" in result.stderr


def test_debug_shows_the_traceback(tmp_path):
    result = _console("--debug", "clones", str(tmp_path / "nope"), SAMPLES)
    assert result.returncode != 0
    assert "Traceback" in result.stderr
