"""Rebuild the panel figures from the published sample files `sources.json` lists.

    python -m cloneprobe.evidence.panel.build --mirrors DIR [--role panel|held_out] [--out FILE]

DIR holds each source repository as a git mirror at `DIR/<owner>+<name>/repo` (the layout the
project's fetch tool leaves); each file is read at the commit `sources.json` names, with
`git show`, so the figures are those of that commit. Every sample is made the program its model
meant (`generation.postprocess.understand`, as `cloneprobe import` does), its answer is cut
out (`FragmentExtractor.extract_answer`; an empty body answers nothing) and measured against
the task's canonical with the evidence features (`strength.best_answer_features`, the
default profile's layout). Only those figures are written: per task and model the number
of samples, the closest sample's features and every answered sample's (verbatim, structure)
pair. No sample text leaves this script.

`--role held_out` builds the held-out sources' figures instead (a check kept out of the
package: write them outside it with `--out`).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from datetime import date
from pathlib import Path

from cloneprobe.atomic import write_atomically

from ...audit.detection import DETECTOR_VERSION, CanonicalFragments
from ...benchmarks import Benchmark, load_benchmark
from ...generation.postprocess import understand
from ..null_model import reference_features
from .figures import FIGURES_FILE, PANEL_VERSION, SOURCES_FILE

RUN_HEADER = re.compile(r"^### .*Run \d+\s*$", re.MULTILINE)
FENCE = re.compile(r"```python\n(.*?)```", re.DOTALL)


class SourceError(RuntimeError):
    """A source file that cannot be read from its mirror."""


def git_show(mirrors: Path, source: dict, path: str) -> str:
    repo = mirrors / source["repository"].replace("/", "+") / "repo"
    if not repo.exists():
        raise SourceError(f"{repo}: no mirror of {source['repository']}; fetch it into "
                          f"{mirrors} first")  # fmt: skip
    result = subprocess.run(["git", "-C", str(repo), "show", f"{source['commit']}:{path}"],
                            capture_output=True, text=True, check=False)  # fmt: skip
    if result.returncode:
        raise SourceError(f"{source['repository']}@{source['commit'][:10]}:{path}: "
                          f"{result.stderr.strip()}")  # fmt: skip
    return result.stdout


def git_files(mirrors: Path, source: dict) -> list[str]:
    repo = mirrors / source["repository"].replace("/", "+") / "repo"
    result = subprocess.run(["git", "-C", str(repo), "ls-tree", "--name-only",
                             f"{source['commit']}:{source['path']}"],
                            capture_output=True, text=True, check=False)  # fmt: skip
    if result.returncode:
        raise SourceError(f"{source['repository']}:{source['path']}: {result.stderr.strip()}")
    return result.stdout.split()


def after_signature(prompt: str, entry_point: str, completion: str) -> str:
    """The whole program of a completion that was sampled after the entry point's signature
    (it writes the docstring again, then the body): the prompt up to its docstring, then it."""
    start = prompt.find(f"def {entry_point}(")
    quotes = [i for i in (prompt.find('"""', start), prompt.find("'''", start)) if i >= 0]
    if start < 0 or not quotes:
        return completion
    return prompt[: min(quotes)] + completion


def raw_samples(mirrors: Path, source: dict, benchmark: Benchmark) -> Iterator[tuple[str, str]]:
    """(task_id, the model's output as published) of every sample of a source; a source whose
    completions follow the signature (`"completion_follows": "signature"`) as whole programs."""
    if source["format"] == "jsonl":
        for line in git_show(mirrors, source, source["path"]).splitlines():
            if line.strip():
                record = json.loads(line)
                text = record.get("completion", record.get("solution"))
                task = benchmark.get(str(record["task_id"]))
                follows = source.get("completion_follows") == "signature"
                if (
                    follows
                    and task
                    and isinstance(text, str)
                    and text.lstrip()[:3] in ('"""', "'''")
                ):
                    text = after_signature(task.prompt, task.entry_point, text)
                if isinstance(text, str):
                    yield str(record["task_id"]), text
    elif source["format"] == "markdown-runs":
        # one page per task (`<index>.md`); the samples are the fenced programs after
        # "## Runs" (the page's "Correct solution" section, the canonical, is not read)
        for name in git_files(mirrors, source):
            if not name.endswith(".md") or not name[:-3].isdigit():
                continue
            page = git_show(mirrors, source, f"{source['path']}/{name}")
            runs = page.split("## Runs", 1)[-1] if "## Runs" in page else ""
            for run in RUN_HEADER.split(runs)[1:]:
                code = FENCE.search(run)
                if code:
                    yield f"HumanEval/{int(name[:-3])}", f"```python\n{code.group(1)}```"
    else:
        raise SourceError(f"{source['id']}: unknown format {source['format']!r}")


def build_figures(mirrors: Path, role: str = "panel", sources: list[dict] | None = None) -> dict:
    """The figures of the sources of `role` (default: those `sources.json` lists)."""
    benchmark = load_benchmark("humaneval")
    canonicals = CanonicalFragments(benchmark)
    listed = json.loads(SOURCES_FILE.read_text())["sources"] if sources is None else sources
    sources = [s for s in listed if s["role"] == role]
    tasks: dict[str, dict] = defaultdict(dict)
    models = {}
    for source in sources:
        programs: dict[str, list[str]] = defaultdict(list)
        for task_id, text in raw_samples(mirrors, source, benchmark):
            task = benchmark.get(task_id)
            if task is not None:
                programs[task_id].append(understand(text, task.prompt, task.entry_point).program)
        # an answer with an empty body (a stub, a prompt repeated without code) solves nothing
        features = {t: tuple(f for f in found if f.tokens > 0)
                    for t, found in reference_features(canonicals, programs).items()}  # fmt: skip
        for task_id, sources_of_task in programs.items():
            found = features.get(task_id, ())
            best = max(found, key=lambda f: (f.verbatim, f.structure), default=None)
            tasks[task_id][source["id"]] = {
                "n": len(sources_of_task),
                "answered": len(found),
                "best": None if best is None else {
                    "verbatim": best.verbatim, "structure": best.structure,
                    "details_kept": best.details_kept, "names_kept": len(best.names_kept),
                    "literals_kept": len(best.literals_kept)},
                "closeness": sorted([round(f.verbatim, 3), round(f.structure, 3)]
                                    for f in found),
            }  # fmt: skip
        models[source["id"]] = {"model": source["model"], "family": source["family"],
                                "samples": sum(len(v) for v in programs.values())}  # fmt: skip
        print(f"{source['id']}: {models[source['id']]['samples']} samples, "
              f"{len(programs)} tasks", file=sys.stderr)  # fmt: skip
    return {
        "version": PANEL_VERSION,
        "detector_version": DETECTOR_VERSION,
        "role": role,
        "built": date.today().isoformat(),
        "command": f"python -m cloneprobe.evidence.panel.build --mirrors DIR --role {role}",
        "features": "cloneprobe.evidence.strength.best_answer_features, default profile; "
        "closeness = [verbatim, structure] of every answered sample",
        "models": models,
        "tasks": {t: tasks[t] for t in sorted(tasks, key=lambda t: int(t.split("/")[1]))},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mirrors",
        type=Path,
        required=True,
        help="Folder of git mirrors, DIR/<owner>+<name>/repo.",
    )
    parser.add_argument("--role", choices=["panel", "held_out"], default="panel")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"Where to write (default: the package's {FIGURES_FILE.name} for "
                        "the panel; required for held_out).")  # fmt: skip
    args = parser.parse_args(argv)
    out = args.out or (FIGURES_FILE if args.role == "panel" else None)
    if out is None:
        parser.error("--role held_out needs --out (held-out figures stay out of the package)")
    figures = build_figures(args.mirrors, args.role)
    write_atomically(out, json.dumps(figures, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {out}: {len(figures['models'])} models, {len(figures['tasks'])} tasks",
          file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
