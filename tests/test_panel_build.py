"""The panel's build script: published sample files read from a git mirror at the commit the
sources name (a real git repository made here), the canonical section of a results page left
out, and only figures written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.evidence.panel.build import build_figures

HUMANEVAL = load_humaneval()
OWN_40 = (
    "    seen = sorted(l)\n    for a in range(len(seen)):\n"
    "        if -seen[a] in seen[a + 1:]:\n            return True\n    return False\n"
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()  # fmt: skip


def mirror(root: Path) -> str:
    """A mirror of `owner/results` at root/owner+results/repo: a JSONL file and a page."""
    repo = root / "owner+results" / "repo"
    (repo / "pages").mkdir(parents=True)
    task = HUMANEVAL.get("HumanEval/40")
    (repo / "samples.jsonl").write_text("".join(
        json.dumps({"task_id": task.task_id, "completion": c}) + "\n"
        for c in (task.canonical_solution, OWN_40)))  # fmt: skip
    program = task.prompt + OWN_40
    (repo / "pages" / "40.md").write_text(
        f"# Results\n## Correct solution\n```python\n{task.prompt}{task.canonical_solution}```\n"
        f"## Runs\n### ✅ Run 1\nResult: Pass\n```python\n{program}```\n"
    )
    git(repo, "init", "-q")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "samples")
    return git(repo, "rev-parse", "HEAD")


def test_figures_from_a_mirror_at_a_commit_without_sample_text(tmp_path):
    commit = mirror(tmp_path)
    common = {"repository": "owner/results", "commit": commit, "licence": "MIT", "role": "panel"}
    sources = [
        {**common, "id": "jsonl-model", "model": "A", "family": "fa", "path": "samples.jsonl",
         "format": "jsonl"},
        {**common, "id": "page-model", "model": "B", "family": "fb", "path": "pages",
         "format": "markdown-runs"},
    ]  # fmt: skip
    figures = build_figures(tmp_path, "panel", sources)
    task = figures["tasks"]["HumanEval/40"]
    assert task["jsonl-model"]["n"] == 2 and task["jsonl-model"]["answered"] == 2
    assert task["jsonl-model"]["best"]["verbatim"] == 1.0  # the canonical copy
    assert max(task["jsonl-model"]["closeness"]) == [1.0, 1.0]
    # the page's "Correct solution" (the canonical) is not a sample: one run, not a copy
    assert task["page-model"]["n"] == 1 and task["page-model"]["best"]["verbatim"] < 0.8
    assert figures["models"]["page-model"] == {"model": "B", "family": "fb", "samples": 1}
    text = json.dumps(figures)
    assert "seen" not in text and "triples_sum_to_zero" not in text  # figures only
