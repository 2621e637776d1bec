"""Static tools resolve every import of the package: jedi ("go to definition"), mypy and pyright,
from outside the repository as a user's project would, and pyright over the repository itself.

The stage folders are linked into cloneprobe/ and the editable install is a plain path, so no
import hook stands between a tool and the files; the lazily loaded names of a package are
declared in its `__init__.pyi`, so they are classes and functions to a checker, not modules.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
STAGES = ["benchmarks", "generation", "execution", "clones", "signals", "scan"]


def lazily_exported() -> list[tuple[str, str]]:
    """(package, name) for every name a package's `__init__.pyi` declares."""
    found = []
    for stub in sorted((ROOT / "cloneprobe").glob("*/__init__.pyi")):
        package = f"cloneprobe.{stub.parent.name}"
        for node in ast.parse(stub.read_text()).body:
            if isinstance(node, ast.ImportFrom):
                found += [(package, alias.asname or alias.name) for alias in node.names]
    return found


def probe_source() -> str:
    lines = [f"from {package} import {name}" for package, name in lazily_exported()]
    lines += [f"import cloneprobe.{stage}" for stage in STAGES]
    lines += ["from cloneprobe.audit.detection import DetectionSettings",
              "from cloneprobe.evidence.verdict import VerdictRule",
              "from cloneprobe.signals.flow import compute_signals"]  # fmt: skip
    return "\n".join(lines) + "\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A user's project outside the repository that imports the package."""
    probe = tmp_path / "probe.py"
    probe.write_text(probe_source())
    return probe


def test_every_lazily_loaded_name_is_declared_and_loads():
    import importlib

    assert len(lazily_exported()) > 30
    for package, name in lazily_exported():
        module = importlib.import_module(package)
        assert name in module.__all__, f"{package}.{name} is in __init__.pyi but not exported"
        assert getattr(module, name) is not None


def test_jedi_goes_to_every_definition_from_outside_the_repository(outside: Path):
    jedi = pytest.importorskip("jedi")
    source = outside.read_text()
    script = jedi.Script(source, path=str(outside))
    unresolved = []
    for number, line in enumerate(source.splitlines(), start=1):
        name = line.split()[-1]
        found = script.goto(number, line.rindex(name) + 1, follow_imports=True)
        paths = [Path(str(d.module_path)).resolve() for d in found if d.module_path]
        if not any(ROOT.resolve() in path.parents for path in paths):
            unresolved.append(line)
        elif name[0].isupper() or "." not in name:  # a name, not a module: not a module file
            assert all(d.type != "module" for d in found), f"{line}: {name} looks like a module"
    assert unresolved == []


@pytest.mark.slow(reason="about 10 s: mypy analyses every module the probe imports")
def test_mypy_resolves_every_import_from_outside_the_repository(outside: Path):
    pytest.importorskip("mypy")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental",
         "--no-error-summary", str(outside)],
        capture_output=True, text=True, cwd=outside.parent, timeout=300,
    )  # fmt: skip
    assert "import-not-found" not in done.stdout and "import-untyped" not in done.stdout
    assert done.returncode == 0, done.stdout + done.stderr


def pyright_unresolved(arguments: list[str], cwd: Path) -> list[str]:
    if shutil.which("pyright") is None:
        pytest.skip("pyright is not installed (pip install -e '.[dev]' installs it)")
    done = subprocess.run(["pyright", "--outputjson", *arguments], capture_output=True,
                          text=True, cwd=cwd, timeout=600)  # fmt: skip
    diagnostics = json.loads(done.stdout)["generalDiagnostics"]
    return [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in diagnostics
        if d.get("rule") in ("reportMissingImports", "reportMissingModuleSource")
        or "is not a known attribute of module" in d["message"]
        or 'Object of type "ModuleType" is not callable' in d["message"]
    ]


@pytest.mark.slow(reason="about 15 s: pyright starts node and checks the probe's imports")
def test_pyright_resolves_every_import_from_outside_the_repository(outside: Path):
    assert pyright_unresolved([str(outside)], outside.parent) == []


@pytest.mark.slow(reason="about 90 s: pyright checks every module of the repository")
def test_pyright_resolves_every_import_in_the_repository():
    assert pyright_unresolved([], ROOT) == []
