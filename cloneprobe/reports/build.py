"""The report dictionary: groups, original-versus-fixed comparisons, samples and evidence.

Schema (`schema`: "cloneprobe.audit/1"):
- `profile`, `settings` (detector settings; sampling settings of the runs under `sampling`);
- `groups`: per model x temperature x prompt set: `model`, `temperature`, `prompt_set`,
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
  rates (original minus other, percentage points) with a 95% bootstrap interval;
- `samples`: `model`, `temperature`, `prompt_set`, `variant`, `task_id`, `sample`,
  `clone_type` (1, 2, 3 or null: the most specific found), `similarity`, `trivial_type`, and
  `passed` and `reason` when executed;
- `evidence`: every clone pair with the canonical and sample lines compared.

Added by the evidence view (cloneprobe.evidence; every key above is unchanged):
- `groups[]` also: `informative_tasks`, `tasks_with_evidence`, `evidence_task_rate` with
  `evidence_task_ci95` (Wilson), `tasks_similar_only`, `informative_samples`,
  `samples_with_evidence`, `evidence_sample_rate` with `evidence_sample_ci95` (bootstrap over
  tasks), `uninformative_tasks` (task ids of the group left out of the evidence rates);
- `comparisons[]` also: `evidence` (tasks with evidence under each prompt set, McNemar, the
  rate difference with its 95% bootstrap interval);
- `samples[]` also: `evidence_tier` (`evidence`, `similar`, `uninformative` or null: no
  clone), `evidence_strength` (0..1) and `evidence_reasons`;
- `evidence[]` also: `tier`, `strength`, `reasons`, `sample_function`, `in_answer`;
- `uninformative_tasks`: tasks whose canonical is mostly prompt code, with the share;
- `evidence_rule`: the rule's thresholds, `chance` (other tasks' answers matching each
  canonical: pairs, comparisons, rate in percent, generic tasks) and `reference_solutions`.
"""

from __future__ import annotations

from ..aggregate import Group, compare_prompt_sets, prompt_label
from ..clones import FragmentExtractor, SourceFile, type_named
from ..clones.normalize import compared_lines
from ..detection import CanonicalFragments, DetectionSettings
from ..evidence.assess import EvidenceView, assess_groups
from ..evidence.summary import compare_on_evidence, group_evidence

SCHEMA_VERSION = "cloneprobe.audit/1"


def build_report(
    groups: list[Group],
    settings: DetectionSettings,
    canonicals: CanonicalFragments,
    sampling: list[dict],
    evidence: bool = True,
    executions: dict | None = None,
) -> dict:
    view = assess_groups(groups, canonicals, settings, settings.reference_solutions)
    samples, pairs = [], []
    for group in groups:
        for judged in group.samples:
            sample, verdict = judged.sample, judged.verdict
            tiered = view.samples.get(sample.id)  # type: ignore[arg-type]
            samples.append(
                {
                    "model": sample.model,
                    "temperature": sample.temperature,
                    "prompt_set": group.label,
                    "variant": sample.variant,
                    "task_id": sample.task_id,
                    "sample": sample.sample_index,
                    "clone_type": int(judged.rank) if judged.rank else None,
                    "similarity": verdict.similarity,
                    "trivial_type": verdict.trivial_type,
                    "evidence_tier": tiered.tier if tiered else None,
                    "evidence_strength": tiered.strength if tiered else None,
                    "evidence_reasons": list(tiered.reasons) if tiered else [],
                    **_execution(executions, sample.id),
                }
            )
            if evidence:
                pairs += [
                    {**_evidence(canonicals, settings, group, sample, pair),
                     **(tiered.pairs[number].as_dict() if tiered else {}),
                     "sample_function": pair["sample_function"],
                     "in_answer": pair.get("in_answer", True)}
                    for number, pair in enumerate(verdict.pairs)
                    if not pair["trivial"]
                ]  # fmt: skip
    comparisons = compare_prompt_sets(groups)
    compare_on_evidence(groups, comparisons, view)
    return {
        "schema": SCHEMA_VERSION,
        "profile": settings.config.profile.name,
        "settings": {**settings.describe(), "sampling": sampling},
        "groups": [
            {**group.summary(executions), **group_evidence(group, view)} for group in groups
        ],
        "comparisons": comparisons,
        "samples": samples,
        "evidence": pairs,
        "uninformative_tasks": view.uninformative,
        "evidence_rule": _rule(view),
    }


def _rule(view: EvidenceView) -> dict:
    return {**view.rule.as_dict(), "chance": view.chance, "reference_solutions": view.references}


def _execution(executions: dict | None, sample_id) -> dict:
    result = executions.get(sample_id) if executions else None
    return {"passed": result.passed, "reason": result.reason} if result else {}


def _evidence(canonicals, settings, group, sample, pair: dict) -> dict:
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
    fragment = next(
        (
            f
            for f in extractor.extract(
                SourceFile("sample", settings.sample_text(sample.program or "", language))
            )
            if [f.start_line, f.end_line] == pair["sample_lines"]
        ),
        None,
    )
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
    }
