"""The import graph: every stage a package, data flowing one way, commands that never import
each other, and a command line that starts without the heavy libraries.

Read from the source with `ast`, so a new import that runs back up the pipeline fails here.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).parent.parent
STAGE_FOLDERS = {"benchmarks": "benchmarks", "generation": "generation",
                 "execution": "execution", "clones": "clones", "signals": "signals",
                 "scan": "scan"}  # fmt: skip
"""Top-level folders imported as cloneprobe.<name> (those that exist)."""
ALLOWED = {
    "benchmarks": set(),
    "clones": set(),
    "generation": {"benchmarks"},
    "execution": {"benchmarks"},
    "signals": {"benchmarks", "generation", "clones"},
    "scan": {"benchmarks", "clones"},
    "audit": {"benchmarks", "generation", "execution", "clones", "signals", "scan"},
    "reports": {"audit", "benchmarks", "clones", "signals"},
    "flow": {"audit", "reports", "benchmarks", "generation", "execution", "clones", "signals",
             "scan"},
    "calibrate": {"flow", "audit", "reports", "benchmarks", "generation", "execution", "clones",
                  "signals", "scan"},
    "cli": {"flow", "audit", "reports", "benchmarks", "generation", "execution", "clones",
            "signals", "scan"},
}  # fmt: skip
"""Which stages each stage may import: data flows benchmarks -> generation -> execution and
clones -> the audit (cloneprobe/) -> reports; the flow (`pipeline.py`, `settings.py`) runs
them in order; the CLI may call anything."""
COMMAND_HELPERS = {"main", "options", "console", "checks", "plan", "__init__"}


def source_files() -> dict[Path, str]:
    """Each module and the dotted package it belongs to (cloneprobe.<...>)."""
    files = {}
    for folder in ["cloneprobe", *STAGE_FOLDERS]:
        if not (ROOT / folder).is_dir():
            continue
        for path in (ROOT / folder).rglob("*.py"):
            if folder == "cloneprobe" and path.relative_to(ROOT).parts[1] in STAGE_FOLDERS:
                continue  # the linked stage folders are read from the top
            relative = path.relative_to(ROOT).with_suffix("")
            parts = list(relative.parts)
            if parts[0] != "cloneprobe":
                parts = ["cloneprobe", *parts]
            files[path] = ".".join(parts)
    return files


def stage_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "cloneprobe":
        return "outside"
    if parts[1] in ("errors", "atomic", "content_cache"):  # small shared modules, any stage
        return "shared"
    if parts[1] in STAGE_FOLDERS:
        return parts[1]
    if parts[1] in ("cli", "reports"):
        return parts[1]
    if parts[1] in ("pipeline", "settings", "control"):  # the whole flow
        return "flow"
    if parts[1:3] == ["evidence", "calibrate"]:  # scripts that run the flow to set thresholds
        return "calibrate"
    if parts[1] == "__main__":
        return "cli"
    return "audit"


@functools.cache
def parsed(path: Path) -> ast.Module:
    """`path`'s syntax tree, parsed once per run (several tests read every module; nothing
    here changes a tree)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def imports_of(path: Path, module: str) -> list[str]:
    """The cloneprobe modules `path` imports (relative imports resolved)."""
    tree = parsed(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found += [f"{target}.{alias.name}" for alias in node.names] + [target]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return [name for name in found if name.startswith("cloneprobe.")]


def module_imports(path: Path, module: str, modules: set[str], in_functions: bool) -> set[str]:
    """The modules of `modules` that `path` imports when it is loaded (module level: at top,
    in classes, under `if`/`try`, but not under `if TYPE_CHECKING:`, which never runs), and,
    with `in_functions`, also those imported inside functions (run on first call). `from
    package import name` is an edge to package.name when that is a module, else to the
    package's __init__."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                if in_functions:
                    visit(child)
                continue
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                for alias in child.names:
                    name = f"{target}.{alias.name}"
                    found.add(name if name in modules else target)
            elif isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            visit(child)

    visit(parsed(path))
    return (found & modules) - {module}


def import_graph(in_functions: bool) -> nx.DiGraph:
    files = source_files()
    modules = set(files.values())
    graph = nx.DiGraph()
    for path, module in files.items():
        graph.add_node(module)
        graph.add_edges_from((module, t) for t in module_imports(path, module, modules,
                                                                 in_functions))  # fmt: skip
    return graph


@pytest.mark.parametrize("in_functions", [False, True], ids=["module level", "with functions"])
def test_no_import_cycle_among_cloneprobe_modules(in_functions):
    """No cycle among the package's modules: first the imports that run when a module is
    loaded (a cycle there breaks depending on which module is imported first), then with the
    imports inside functions counted too (a cycle there is a tangle a lazy import hides, as
    reports/html -> control_html -> files -> html once was)."""
    graph = import_graph(in_functions)
    assert graph.number_of_edges() > 200  # the graph is read, not empty
    assert [" -> ".join(c) for c in nx.simple_cycles(graph)] == []


def test_no_import_runs_back_up_the_pipeline():
    wrong = []
    for path, module in source_files().items():
        stage = stage_of(module)
        for target in imports_of(path, module):
            other = stage_of(target)
            if other not in (stage, "outside", "shared") and other not in ALLOWED[stage]:
                wrong.append(f"{path.relative_to(ROOT)} ({stage}) imports {target} ({other})")
    assert wrong == []


def test_no_command_module_imports_another():
    wrong = []
    cli = ROOT / "cloneprobe" / "cli"
    commands = {p.stem for p in cli.glob("*.py")} - COMMAND_HELPERS
    for path in cli.glob("*.py"):
        if path.stem == "main":
            continue  # the group registers every command
        for target in imports_of(path, f"cloneprobe.cli.{path.stem}"):
            parts = target.split(".")
            if len(parts) > 2 and parts[1] == "cli" and parts[2] in commands - {path.stem}:
                wrong.append(f"{path.name} imports {target}")
    assert wrong == []


def test_every_stage_folder_is_linked_into_the_package():
    """Each stage folder at the top is reachable as cloneprobe/<stage> through a plain relative
    link, so that imports resolve without an import hook (pyright, mypy and jedi follow it)."""
    for folder in STAGE_FOLDERS:
        link = ROOT / "cloneprobe" / folder
        assert link.is_symlink(), f"cloneprobe/{folder} is not a link to ../{folder}"
        assert link.readlink() == Path("..") / folder
        assert (link / "__init__.py").is_file()


def test_every_package_folder_is_packaged():
    """A non-editable install gets every package folder, the linked stages included."""
    from setuptools import find_packages

    found = set(find_packages(where=str(ROOT), include=["cloneprobe", "cloneprobe.*"]))
    expected = {
        module.removesuffix(".__init__")
        for path, module in source_files().items()
        if path.name == "__init__.py"
    }
    assert expected - found == set()


HEAVY = ("networkx", "torch", "transformers", "openai", "numpy", "datatrove", "rich.progress")


@pytest.fixture(scope="module")
def loaded_by_help() -> set[str]:
    """The heavy libraries `cloneprobe --help` imported, from one fresh interpreter (one
    process serves every library: each start costs about 0.3 s of CPU)."""
    probe = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from cloneprobe.cli import main\n"
        "result = CliRunner().invoke(main, ['--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        f"print(' '.join(name for name in {HEAVY!r} if name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


@pytest.mark.parametrize("heavy", HEAVY)
def test_the_command_line_starts_without_heavy_libraries(heavy, loaded_by_help):
    assert heavy not in loaded_by_help, f"`cloneprobe --help` imports {heavy}"


def test_no_test_module_imports_torch_at_top_level():
    """`pip install -e '.[dev]'` without the local extra must collect every test module: torch
    and transformers come through `pytest.importorskip`, `local_extra` (imported by the first
    test that uses them) or inside the tests that use them."""
    heavy = {"torch", "transformers"}
    wrong = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in parsed(path).body:
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            wrong += [f"{path.name}: {name}" for name in names if name.split(".")[0] in heavy]
    assert wrong == []


def test_every_slow_test_says_what_it_costs():
    """A slow test's marker carries its cost (`@pytest.mark.slow(reason="about 40 s: ...")`),
    so that whoever runs the whole suite knows what the wait is for: as a decorator, in a
    parameter's `marks=` or in a module's `pytestmark`."""
    bare = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        tree = parsed(path)
        called = {id(n.func): n for n in ast.walk(tree) if isinstance(n, ast.Call)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and ast.unparse(node) == "pytest.mark.slow":
                call = called.get(id(node))
                if call is None or not any(k.arg == "reason" for k in call.keywords):
                    bare.append(f"{path.name}: line {node.lineno}")
    assert bare == []
