"""Building the report sample by sample: groups, original-versus-fixed comparisons, samples
and evidence, as one `AuditReport` (cloneprobe.audit.audit_report holds its types; the JSON
Schema docs/reference/report.schema.json is generated from them).

The JSON document (`schema`: "cloneprobe.audit/1"):
- `profile`, `settings` (detector settings; sampling settings of the runs under `sampling`);
- `groups`: per model x temperature x prompt set: `model`, `as_written` (a file imported
  without repair), `temperature`, `prompt_set`,
  `variant`, `tasks`, `samples`, `tasks_with_clone` and `samples_with_clone` keyed by type
  "1", "2", "3" (cumulative: a Type-1 clone counts for 2 and 3 too), the same `_exclusive`
  (most specific type only), `task_rate` and `sample_rate` (percent, cumulative),
  `tasks_trivial_only`, and `correctness` (null unless samples were executed): `tasks`,
  `samples`, `passed`, `pass@1`/`pass@3`/`pass@10` (those not above n, percent),
  `without_clone` and `with_clone` (pass@k on tasks without any clone and with one), and
  `decontaminated` keyed "1".."3" (pass@1 with tasks holding a clone up to that type removed,
  and the `drop` from the overall pass@1);
- `comparisons`: original against each other prompt set per model x temperature, by type:
  tasks cloned under each, under one only, the exact McNemar p-value, the difference in task
  rates (original minus other, percentage points) with a 95% bootstrap interval, and
  `pass@1` (both groups' pass@1 on the tasks both executed; null when none was);
- `samples`: `model`, `temperature`, `prompt_set`, `variant`, `task_id`, `sample`,
  `clone_type` (1, 2, 3 or null: the most specific found), `similarity`, `trivial_type`, and
  `passed` and `reason` when executed;
- `evidence`: clone pairs with the canonical and sample lines compared (`compared`, renamed as
  the type compares them) and the code itself (`code`: the fragments' lines as written): every
  pair, up to
  `evidence_per_task` per group and task (`evidence_total` counts them all; every pair is in
  the JSON-lines file `evidence_file` beside the report);
- `skipped`: samples not judged, by reason (e.g. over the size cap).

Added by the evidence view (cloneprobe.evidence; every key above is unchanged):
- `groups[]` also: `informative_tasks`, `tasks_with_evidence`, `evidence_task_rate` with
  `evidence_task_ci95` (Wilson), `tasks_similar_only`, `informative_samples`,
  `samples_with_evidence`, `evidence_sample_rate` with `evidence_sample_ci95` (bootstrap over
  tasks), `uninformative_tasks` (task ids of the group left out of the evidence rates),
  `evidence_peers` (per task with evidence: its best verbatim similarity, how many answers of
  the task in other groups reach it, how many there are); `convergence` (per task with
  evidence: the same-task convergence null, cloneprobe.evidence.panel.convergence: families
  and samples reaching it, p0, p, the Benjamini-Hochberg q, `memorized`, the closest
  independent solutions and the one-line `figure`), `tasks_memorized` and
  `tasks_convergence_missing`;
- `comparisons[]` also: `evidence` (tasks with evidence under each prompt set, McNemar, the
  rate difference with its 95% bootstrap interval);
- `samples[]` also: `evidence_tier` (`evidence`, `similar`, `uninformative` or null: no
  clone), `evidence_strength` (0..1) and `evidence_reasons`;
- `evidence[]` (and the evidence file) also: `tier`, `strength`, `reasons`,
  `sample_function`, `in_answer`;
- `uninformative_tasks`: tasks whose canonical is mostly prompt code, with the share;
- `evidence_rule`: the rule's thresholds, `chance` (other tasks' answers matching each
  canonical: pairs, comparisons, rate in percent, generic tasks) and `reference_solutions`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from cloneprobe.audit.aggregate import Group, compare_prompt_sets, prompt_label
from cloneprobe.audit.detection import CanonicalFragments, DetectionSettings, Verdict
from cloneprobe.benchmarks import canonical_source
from cloneprobe.clones import FragmentExtractor, SourceFile, rank_of, type_named
from cloneprobe.clones.normalize import compared_lines
from cloneprobe.evidence.stream import StreamedEvidence
from cloneprobe.evidence.summary import compare_on_evidence, group_evidence

from .audit_report import SCHEMA_VERSION, AuditReport
from .spool import RowSpool

__all__ = ["EVIDENCE_FILE", "EVIDENCE_PER_TASK", "SCHEMA_VERSION", "ReportBuilder"]
EVIDENCE_PER_TASK = 10
"""Clone pairs shown per group and task in the report (all are in the evidence file)."""
EVIDENCE_FILE = "evidence.jsonl"


class ReportBuilder:
    """Collects a report sample by sample: the per-sample rows and all evidence go to disk,
    only a bounded sample of the evidence stays in memory."""

    def __init__(self, settings: DetectionSettings, canonicals: CanonicalFragments,
                 evidence: bool = True, per_task: int = EVIDENCE_PER_TASK,
                 view: StreamedEvidence | None = None) -> None:  # fmt: skip
        """`view`: the evidence view that tiers each verdict (None: no evidence keys)."""
        self.settings, self.canonicals = settings, canonicals
        self.view = view
        self.evidence, self.per_task = evidence, per_task
        self.samples = RowSpool()
        self.all_evidence = RowSpool()
        self.shown: list[dict] = []
        self.shown_per_task: Counter = Counter()
        self.skipped: Counter = Counter()
        self.isolation: Counter = Counter()

    def add(self, group: Group, sample, verdict: Verdict, execution=None) -> None:
        """One judged sample (a stored sample: model, task_id, sample_index, program ...)."""
        rank = rank_of(verdict.clone_type)
        tiered = self.view.assess(sample.task_id, verdict) if self.view else None
        leaked = self.view.disguise_leaks(sample) if self.view else []
        if leaked and tiered is not None:
            # memory of the original prompt: evidence by itself, whatever the clone verdict
            for name in leaked:
                if name not in group.leaks.setdefault(sample.task_id, []):
                    group.leaks[sample.task_id].append(name)
            reason = (f"writes {', '.join(f'`{n}`' for n in leaked)}: the original prompt's "
                      "name(s), which the disguised prompt no longer shows")  # fmt: skip
            tiered = replace(tiered, tier="evidence", strength=1.0,
                             reasons=(reason, *tiered.reasons))  # fmt: skip
        if self.view is not None and self.view.informative(sample.task_id):
            answer = verdict.answer or {}
            verbatim = round(100 * answer.get("verbatim", 0.0))
            structure = round(100 * answer.get("structure", 0.0))
            short_copy = bool(tiered and tiered.short_copy)
            group.count_evidence(sample.task_id, tiered.tier if tiered else None, verbatim,
                                 structure, short_copy, answered=_answered(answer))
        if execution is not None:
            self.isolation[execution.isolation or "unknown"] += 1
        self.samples.append(
            {
                "model": sample.model,
                "temperature": sample.temperature,
                "prompt_set": group.label,
                "variant": sample.variant,
                "task_id": sample.task_id,
                "sample": sample.sample_index,
                "clone_type": int(rank) if rank else None,
                "similarity": verdict.similarity,
                "trivial_type": verdict.trivial_type,
                **_tier(tiered),
                **_execution(execution),
            }
        )
        if not self.evidence:
            return
        for number, pair in enumerate(verdict.pairs):
            if pair["trivial"]:
                continue
            row = {**_evidence(self.canonicals, self.settings, sample, pair),
                   **(tiered.pairs[number].as_dict() if tiered else {}),
                   "sample_function": pair["sample_function"],
                   "in_answer": pair.get("in_answer", True)}  # fmt: skip
            self.all_evidence.append(row)
            key = (id(group), sample.task_id)
            if self.shown_per_task[key] < self.per_task:
                self.shown_per_task[key] += 1
                self.shown.append(row)

    def finish(self, groups: list[Group], sampling: list[dict]) -> AuditReport:
        comparisons = compare_prompt_sets(groups)
        summaries = [group.summary() for group in groups]
        view_keys: dict = {}
        if self.view is not None:
            uninformative = self.view.uninformative()
            names = {u["task_id"] for u in uninformative}
            summaries = [{**summary, **group_evidence(group, names, groups, self.view)}
                         for summary, group in zip(summaries, groups, strict=True)]  # fmt: skip
            compare_on_evidence(groups, comparisons)
            view_keys = {"uninformative_tasks": uninformative,
                         "evidence_rule": self.view.rule_summary()}  # fmt: skip
        return AuditReport(
            schema=SCHEMA_VERSION,
            profile=self.settings.config.profile.name,
            settings={
                **self.settings.describe(),
                "sampling": sampling,
                "execution": {"isolation": dict(self.isolation)},
            },
            groups=summaries,  # type: ignore[arg-type]
            comparisons=comparisons,  # type: ignore[arg-type]
            samples=self.samples,
            evidence=self.shown,  # type: ignore[arg-type]
            evidence_total=len(self.all_evidence),
            evidence_per_task=self.per_task,
            evidence_file=EVIDENCE_FILE,
            skipped=dict(self.skipped),
            all_evidence=self.all_evidence,
            **view_keys,
        )


def _answered(answer: dict) -> bool:
    """The sample wrote the task's function (not only the prompt's helpers): a solver's
    answer, as the convergence null counts them."""
    return "verbatim" in answer and answer.get("entry_point_found", True) is not False


def _tier(tiered) -> dict:
    return {
        "evidence_tier": tiered.tier if tiered else None,
        "evidence_strength": tiered.strength if tiered else None,
        "evidence_reasons": list(tiered.reasons) if tiered else [],
    }


def _execution(result) -> dict:
    return {"passed": result.passed, "reason": result.reason} if result else {}


def _evidence(canonicals, settings, sample, pair: dict) -> dict:
    layout = settings.config.profile.layout
    canonical = next(
        (
            f
            for f in canonicals.of(pair["canonical_task"], layout)
            if [f.start_line, f.end_line] == pair["canonical_lines"]
        ),
        None,
    )
    task = canonicals.benchmark.get(sample.task_id)
    language = task.language if task else "python"
    extractor: FragmentExtractor = canonicals.extractor(language, layout)
    sample_text = settings.sample_text(sample.program or "", language)
    fragment = next(
        (
            f
            for f in extractor.extract(SourceFile("sample", sample_text))
            if [f.start_line, f.end_line] == pair["sample_lines"]
        ),
        None,
    )
    canonical_task = canonicals.benchmark.get(pair["canonical_task"])
    canonical_text = canonical_source(canonical_task) if canonical_task else ""
    mode = type_named(pair["type"]).rename
    header = settings.config.profile.compare_header

    def lines(f):
        return [" ".join(t) for t in compared_lines(f, mode, header)] if f else []

    return {
        "model": sample.model,
        "temperature": sample.temperature,
        "prompt_set": prompt_label(sample.prompt_set, sample.variant),
        "task_id": sample.task_id,
        "sample": sample.sample_index,
        "type": pair["type"],
        "similarity": pair["similarity"],
        "canonical_task": pair["canonical_task"],
        "canonical_lines": pair["canonical_lines"],
        "sample_lines": pair["sample_lines"],
        "has_errors": pair["has_errors"],
        "compared": {"canonical": lines(canonical), "sample": lines(fragment)},
        "code": {"canonical": source_lines(canonical_text, pair["canonical_lines"]),
                 "sample": source_lines(sample_text, pair["sample_lines"])},
    }


def source_lines(text: str, span: list[int]) -> list[str]:
    """The lines `span` (first and last, from 1) of `text`, as written."""
    return text.splitlines()[span[0] - 1 : span[1]]
