"""What a scan finds, and where it keeps it: one match record per (document, task), one JSONL
file of matches per rank, merged into a summary when every rank is done."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from .errors import ScanError

MATCHES_FOLDER = "matches"
SUMMARY_FILE = "summary.json"


@dataclass(frozen=True)
class Match:
    task_id: str
    document: str
    """The corpus id of the document (its id field, or its path in a folder of files)."""
    group: str | None
    """The grouping field's value (a repository), when the corpus has one."""
    span: tuple[int, int]
    """Character offsets [start, end) of the matched text in the document."""
    lines: tuple[int, int]
    """First and last line (1-based) of the span."""
    similarity: float
    """Solution: LCS over the larger side, as the audit reports it. Prompt alone: the share of
    the docstring's word n-grams found."""
    clone_type: str | None
    """"1", "2" or "3" for a solution match; None when only the prompt matched."""
    matched: str
    """solution, prompt or both."""
    docstring: float
    """Share of the prompt docstring's word n-grams found in the document."""
    test: float
    """Share of the task's test-code n-grams found in the document (literals kept)."""
    signature: bool
    """Whether the match includes the canonical's signature (else the body alone)."""
    literals: float
    """Share of the canonical's literals (in order, as written) the matched span keeps."""
    names: float
    """Share of the canonical's builtins and attribute names (in order) the span keeps."""
    evidence: str = "unjudged"
    """strong (the prompt's docstring or the test code is there too), copy, similar (a
    near-miss that common code reaches too), idiom (the task's canonical is generic: it
    matched many unrelated documents), short (too short to be evidence); set when the ranks
    are merged (scan/idioms.py)."""

    def to_dict(self) -> dict:
        record = asdict(self)
        record["span"] = list(self.span)
        record["lines"] = list(self.lines)
        return record

    @classmethod
    def from_dict(cls, record: dict) -> Match:
        values = dict(record)
        values["span"] = tuple(values["span"])
        values["lines"] = tuple(values["lines"])
        return cls(**values)

    def judged(self, evidence: str) -> Match:
        return replace(self, evidence=evidence)


def rank_file(output: str, rank: int) -> str:
    return f"{output.rstrip('/')}/{MATCHES_FOLDER}/{rank:05d}.jsonl"


def write_rank_matches(folder, rank: int, matches: Iterable[Match]) -> None:
    """Write a rank's matches through a datatrove DataFolder (local or fsspec URL), sorted so
    that a re-run writes the same bytes."""
    ordered = sorted(matches, key=lambda m: (m.document, m.task_id, m.span))
    name = f"{MATCHES_FOLDER}/{rank:05d}.jsonl"
    with folder.open(name + ".tmp", "w") as handle:
        for match in ordered:
            handle.write(json.dumps(match.to_dict(), sort_keys=True) + "\n")
    folder.mv(name + ".tmp", name)


def read_rank_matches(folder) -> Iterator[Match]:
    """Every match of every rank file in the folder (a datatrove DataFolder)."""
    for name in sorted(folder.list_files(MATCHES_FOLDER, glob_pattern="*.jsonl")):
        with folder.open(name, "r") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    yield Match.from_dict(json.loads(line))
                except (ValueError, TypeError, KeyError) as error:
                    raise ScanError(
                        f"{folder.resolve_paths(name)}:{number}: not a scan match record "
                        f"({error}); delete the output folder and scan again"
                    ) from error


def load_summary(path: Path) -> dict:
    """The summary a finished scan left in its output folder."""
    target = path / SUMMARY_FILE if path.is_dir() else path
    try:
        summary = json.loads(target.read_text(encoding="utf-8"))
        found = summary.get("found") if isinstance(summary, dict) else None
        if not isinstance(found, list) or not all(isinstance(t, str) for t in found):
            raise ScanError(f"{target}: not a scan summary (no list of the tasks `found`); "
                            "give the --output folder of a finished `cloneprobe scan`")
        return summary
    except FileNotFoundError:
        raise ScanError(
            f"{path}: no {SUMMARY_FILE} here; give the --output folder of a finished "
            "`cloneprobe scan`"
        ) from None
    except (OSError, ValueError, RecursionError) as error:  # RecursionError: nested too deep
        raise ScanError(f"{target}: cannot read the scan summary ({error}); give the --output "
                        "folder of a finished `cloneprobe scan`, or scan again") from error
