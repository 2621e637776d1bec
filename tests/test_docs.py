"""The documentation: the mkdocs site builds strictly, every page is in its navigation, the
thresholds it states are the code's, and the README's worked example is what the command prints.

`mkdocs build --strict` fails on a broken link, a broken anchor or a page under docs/ that the
navigation leaves out (mkdocs.yml's `validation` turns those into warnings, strict into errors).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cloneprobe.evidence.tiers import EvidenceRule

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
GENERATED = {"reference/commands.md"}
"""Pages the build generates (docs/hooks/): in the navigation, not on disk."""


def _verdict_rule_class():
    """VerdictRule, wherever the verdict module lives (it is moving into cloneprobe/evidence/)."""
    for module in ("cloneprobe.evidence.verdict", "cloneprobe.verdict"):
        try:
            return importlib.import_module(module).VerdictRule
        except ImportError:
            continue
    raise AssertionError("no VerdictRule in cloneprobe.evidence.verdict or cloneprobe.verdict")


def _mkdocs_config() -> dict:
    yaml = pytest.importorskip("yaml", reason="PyYAML (installed with mkdocs) reads mkdocs.yml")

    class _Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may use mkdocs' own tags (!ENV, !relative); read them as plain values.
    _Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def _nav_pages(nav) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        if isinstance(value, list):
            pages.extend(_nav_pages(value))
        elif isinstance(value, str) and not re.match(r"^[a-z]+://", value):
            pages.append(value)
    return pages


def _excluded(page: Path) -> bool:
    return page.relative_to(DOCS).parts[0] == "hooks"


def test_every_page_under_docs_is_in_the_navigation_and_every_nav_entry_exists():
    nav = _nav_pages(_mkdocs_config()["nav"])
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if not _excluded(p)}
    assert sorted(on_disk - set(nav)) == [], "pages missing from mkdocs.yml's nav"
    assert sorted(set(nav) - on_disk - GENERATED) == [], "nav entries with no page"
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None,
    reason="mkdocs is not installed (it is in the dev extra: pip install -e '.[dev]')",
)
def test_the_site_builds_with_strict_checks(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]
    commands = (tmp_path / "site" / "reference" / "commands" / "index.html").read_text(
        encoding="utf-8"
    )
    assert "cloneprobe audit" in commands and "--profile" in commands


def _threshold_table(page: str, heading: str) -> dict[str, str]:
    """The `| `field` | default | ... |` rows of the table under `heading` in docs/<page>."""
    text = (DOCS / page).read_text(encoding="utf-8")
    match = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#+ |\Z)", text, re.M | re.S)
    assert match, f"docs/{page} has no section {heading!r}"
    rows = re.findall(r"^\| `([a-z_]+)` \| `?([^|`]+?)`? \|", match.group(1), re.M)
    assert rows, f"docs/{page}, {heading!r}: no table of fields"
    return dict(rows)


def _as_documented(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


@pytest.mark.parametrize(
    ("page", "rule"),
    [("evidence.md", EvidenceRule), ("verdict.md", _verdict_rule_class())],
    ids=["EvidenceRule", "VerdictRule"],
)
def test_the_documented_thresholds_are_the_codes_defaults(page, rule):
    documented = _threshold_table(page, "The rule's thresholds")
    code = {f.name: _as_documented(f.default) for f in dataclasses.fields(rule)}
    assert documented == code


def _readme_example() -> tuple[str, str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```console\n\$ COLUMNS=80 (cloneprobe [^\n]+)\n(.*?)\n```", readme, re.S)
    assert match, "the README's worked example (```console block) is missing"
    return match.group(1), match.group(2)


def _run_in_a_terminal(argv: list[str], columns: int) -> str:
    """What the command prints on an 80-column terminal (a pseudo-terminal, colours off)."""
    env = dict(os.environ, COLUMNS=str(columns), LINES="50", NO_COLOR="1", TERM="dumb")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    master, slave = pty.openpty()
    process = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert process.wait(timeout=120) == 0
    text = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")
    return "\n".join(line.rstrip() for line in text.splitlines())


def test_the_readme_worked_example_is_what_the_command_prints():
    command, shown = _readme_example()
    args = command.split()[1:]
    printed = _run_in_a_terminal([sys.executable, "-m", "cloneprobe", *args], columns=80)
    assert printed == shown
