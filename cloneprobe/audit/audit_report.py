"""The audit's report as one typed value: built once by the pipeline (`cloneprobe.pipeline`)
for every command and for Python callers, rendered by `cloneprobe.reports` in every format.

`AuditReport` is a frozen dataclass; its rows (groups, comparisons, samples, clone pairs,
tasks) are `TypedDict`s, because they are JSON objects streamed to and from disk (a report
of a million samples does not hold them in memory) and are written out exactly as they are.
`AuditReport.json_chunks()` gives the JSON document "cloneprobe.audit/1" (keys in the order
below; a section that is None is left out), and `report_schema()`
(`cloneprobe.audit.report_schema`) derives its JSON Schema from these classes, so the schema
cannot drift from the code (tests/test_report_types.py).

A section added later (say, a new key of a clone pair) is added here first; the schema test
fails until docs/reference/report.schema.json is regenerated
(`python -m cloneprobe.audit.report_schema > docs/reference/report.schema.json`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypedDict

from .spool import RowSpool, json_chunks

SCHEMA_VERSION = "cloneprobe.audit/1"

Json = Any
"""A JSON value whose inner keys the report does not fix (settings, rule thresholds)."""


class Correctness(TypedDict):
    """pass@k of a group whose samples were executed (keys `pass@k` for k not above n)."""

    tasks: int
    samples: int
    passed: int
    without_clone: dict[str, float | None]
    with_clone: dict[str, float | None]
    decontaminated: dict[str, dict[str, float | None]]


class _GroupCounts(TypedDict):
    model: str
    label: str
    settings_key: str
    as_written: bool
    """The group's samples are a file imported as written (no repair)."""
    temperature: float
    prompt_set: str
    variant: str
    tasks: int
    samples: int
    tasks_with_clone: dict[str, int]
    tasks_with_clone_exclusive: dict[str, int]
    samples_with_clone: dict[str, int]
    samples_with_clone_exclusive: dict[str, int]
    task_rate: dict[str, float]
    sample_rate: dict[str, float]
    tasks_trivial_only: int
    correctness: Json
    """`Correctness` (its pass@k keys vary with n), or None when nothing was executed."""


class GroupSummary(_GroupCounts, total=False):
    """Per model x settings x temperature x prompt set; the evidence keys come with the
    evidence view."""

    informative_tasks: int
    tasks_with_evidence: int
    evidence_task_rate: float
    evidence_task_ci95: list[float]
    tasks_similar_only: int
    informative_samples: int
    samples_with_evidence: int
    evidence_sample_rate: float
    evidence_sample_ci95: list[float]
    uninformative_tasks: list[str]
    evidence_peers: dict[str, dict[str, float]]
    convergence: dict[str, Json]
    """Per task with evidence: the same-task convergence null (figure, closest independent
    solutions, whether it is memorized, convergent, or not measured)."""
    tasks_memorized: int
    tasks_convergence_missing: list[str]


class TypeComparison(TypedDict):
    tasks_cloned_original: int
    tasks_cloned_other: int
    only_original: int
    only_other: int
    mcnemar_p: float
    rate_difference: float
    ci95: list[float]


class EvidenceComparison(TypedDict):
    tasks: int
    tasks_with_evidence_original: int
    tasks_with_evidence_other: int
    only_original: int
    only_other: int
    mcnemar_p: float
    rate_difference: float
    ci95: list[float]


class _ComparisonCounts(TypedDict):
    model: str
    temperature: float
    original: str
    other: str
    tasks: int
    by_type: dict[str, TypeComparison]


_ComparisonPass = TypedDict("_ComparisonPass", {"pass@1": "Json"}, total=False)
"""pass@1 of both prompt sets on the tasks both executed (None: none); not a Python name."""


class Comparison(_ComparisonCounts, _ComparisonPass, total=False):
    """Original prompts against another prompt set, per model x temperature."""

    evidence: EvidenceComparison


class _SampleVerdict(TypedDict):
    model: str
    temperature: float
    prompt_set: str
    variant: str
    task_id: str
    sample: int
    clone_type: int | None
    similarity: float | None
    trivial_type: str | None
    evidence_tier: str | None
    evidence_strength: float | None
    evidence_reasons: list[str]


class SampleRow(_SampleVerdict, total=False):
    """One judged sample; `passed` and `reason` when it was executed."""

    passed: bool | None
    reason: str | None


class ComparedLines(TypedDict):
    canonical: list[str]
    sample: list[str]


class _PairLines(TypedDict):
    model: str
    temperature: float
    prompt_set: str
    task_id: str
    sample: int
    type: str
    similarity: float
    canonical_task: str
    canonical_lines: list[int]
    sample_lines: list[int]
    has_errors: bool
    compared: ComparedLines
    code: ComparedLines
    """The canonical's and the sample's fragment as written (the code itself)."""


class EvidencePair(_PairLines, total=False):
    """A clone pair: the canonical's and the sample's compared lines (renamed as the type
    compares them); the tier, strength and reasons come with the evidence view."""

    tier: str
    strength: float
    reasons: list[str]
    sample_function: str | None
    in_answer: bool
    independent_solutions: list[Json]
    """Closest independent solutions of the task (other model families, reference solutions),
    when the evidence rule measured them: each with a `label` (or `model`/`source`), its
    `similarity` and its `code` (lines or text)."""


class UninformativeTask(TypedDict):
    task_id: str
    prompt_share: float
    reason: str


class _TaskIds(TypedDict):
    model: str
    settings_key: str
    temperature: float
    prompt_set: str
    task_id: str
    mode: str
    samples: int
    clones: Json
    """The task's clone evidence (best type and tier, samples with a clone, executed and
    passed), or None when no sample of the task was judged."""
    informative: bool
    signals: dict[str, Json]
    relative: dict[str, dict[str, float | None]]


_TaskPass = TypedDict("_TaskPass", {"pass@1": "float | None"})
"""The task's pass@1 (None: none of its samples ran); a key that is not a Python name."""


class TaskEntry(_TaskIds, _TaskPass):
    """One task of one group with every signal's score and the combined verdict."""

    verdict: str
    verdict_reasons: list[str]


class FileVerdictDiffers(TypedDict):
    """A sample on which a file's own verdict and the sandbox's differ."""

    task_id: str
    sample: int
    model: str
    where: str
    """The file and line that gave the verdict."""
    file: bool
    measured: bool
    reason: str | None
    """The sandbox's reason when it failed the sample."""
    repairs: str | None
    """What cloneprobe repaired before running it (None: run as the file gives it)."""
    program: str
    """The program the sandbox ran."""
    written: str | None
    """The completion as the file gives it, when a repair changed it (None: unchanged)."""


class FileVerdicts(TypedDict):
    """Sample files' own verdicts (`passed`, `is_solved`, `result`) against the sandbox's."""

    samples: int
    file_passed: int
    executed: int
    measured_passed: int | None
    """Passed in the sandbox, of `executed` (None: nothing was executed)."""
    differ_count: int
    differ: list[FileVerdictDiffers]
    """The samples that differ (at most the first 50; all are counted)."""


@dataclass(frozen=True)
class AuditReport:
    """What an audit found, for every renderer and every Python caller (see the module
    docstring). `samples` and `all_evidence` live on disk (`RowSpool`); `all_evidence` is
    written as `evidence_file` beside report.json, not into it."""

    schema: str
    profile: str
    settings: Json
    """The detector's settings, `sampling` (each run's settings) and `execution` (isolation)."""
    groups: Sequence[GroupSummary]
    comparisons: Sequence[Comparison]
    samples: RowSpool | Sequence[SampleRow]
    evidence: Sequence[EvidencePair]
    """The clone pairs shown: at most `evidence_per_task` per group and task."""
    evidence_total: int
    evidence_per_task: int
    evidence_file: str
    skipped: dict[str, int]
    uninformative_tasks: Sequence[UninformativeTask] | None = None
    evidence_rule: Json = None
    signals: Json = None
    """Added by `signals` (or `audit --signals`, or `report` from stored scores): the signal
    names, directions, the verdict rule and per-group summaries."""
    tasks: Sequence[TaskEntry] | None = None
    control: Json = None
    """A finished positive control's control.json (`report --control`)."""
    contamination: Json = None
    """Found in a corpus scan against not found (`--contamination DIR`)."""
    scope: Json = None
    """The bare audit's default plan: a subset, and how to ask for the study's scale."""
    file_verdicts: FileVerdicts | None = None
    """Sample files' own verdicts against the sandbox's (`audit FILES --execute`)."""
    all_evidence: RowSpool | Sequence[EvidencePair] = field(default=(), compare=False)

    def with_sections(self, **sections: Any) -> AuditReport:
        """The same report with sections set (`signals`, `tasks`, `control`, ...)."""
        return replace(self, **sections)

    def sections(self) -> Iterator[tuple[str, Any]]:
        """The JSON document's keys and values in order (sections that are None left out)."""
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "all_evidence" or (value is None and f.default is None):
                continue
            yield f.name, value

    def json_chunks(self) -> Iterator[str]:
        """report.json, piece by piece (spooled rows streamed one per line)."""
        return json_chunks(dict(self.sections()))

    def to_json(self) -> str:
        return "".join(self.json_chunks())

    def as_dict(self) -> dict[str, Any]:
        """The JSON document as Python values (spooled rows read back into a list)."""
        return json.loads(self.to_json())

    def every_pair(self) -> Sequence[EvidencePair] | RowSpool:
        """Every clone pair (the evidence file), or the pairs shown when there is no file."""
        return self.all_evidence if len(self.all_evidence) else self.evidence

    @property
    def has_evidence_view(self) -> bool:
        return self.evidence_rule is not None


def report_from_dict(document: Mapping[str, Any]) -> AuditReport:
    """A report read back from report.json (every key of the schema; others refused)."""
    names = {f.name for f in fields(AuditReport)} - {"all_evidence"}
    unknown = set(document) - names
    if unknown:
        raise ValueError(
            f"report.json has keys the schema {SCHEMA_VERSION} does not know: "
            f"{', '.join(sorted(unknown))}; is it from a newer cloneprobe?"
        )
    return AuditReport(**{k: v for k, v in document.items()})


def empty_report(**sections: Any) -> AuditReport:
    """A report with nothing judged, with the given sections set (a renderer's input when
    only some sections are known, e.g. a table built by hand)."""
    base: dict[str, Any] = {
        "schema": SCHEMA_VERSION, "profile": "default", "settings": {}, "groups": [],
        "comparisons": [], "samples": [], "evidence": [], "evidence_total": 0,
        "evidence_per_task": 0, "evidence_file": "evidence.jsonl", "skipped": {},
    }  # fmt: skip
    return AuditReport(**{**base, **sections})
