"""Aggregating verdicts: per model x temperature x prompt set, and original against fixed."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from cloneprobe.audit.detection import Verdict
from cloneprobe.audit.stats import bootstrap_difference, mcnemar_exact
from cloneprobe.clones import RANKS, rank_of
from cloneprobe.execution import correctness_summary
from cloneprobe.generation import StoredSample
from cloneprobe.generation.samplefiles import IMPORTED_AS_WRITTEN

TYPES = tuple(str(r) for r in RANKS)
"""The Type-1/2/3 columns, keyed as in the JSON report."""


def prompt_label(prompt_set: str, variant: str) -> str:
    """`original`, `fixed`, or `<set>:<variant>` for sets with several variants."""
    return prompt_set if variant == prompt_set else f"{prompt_set}:{variant}"


@dataclass
class Group:
    """One model x settings x temperature x prompt set and variant, aggregated as samples
    arrive: only per-task state is kept (the best clone type, pass counts), never the samples,
    so memory does not grow with the number of samples per task."""

    model: str
    temperature: float
    prompt_set: str
    variant: str
    settings_key: str
    model_label: str = ""
    """The model, with its settings key when the report holds several settings for it."""
    best: dict[str, int | None] = field(default_factory=dict)
    """Most specific clone type per task (None: no sample of the task is a clone)."""
    sample_ranks: Counter = field(default_factory=Counter)
    """How many samples have each most specific clone type (None: none)."""
    trivial_tasks: set[str] = field(default_factory=set)
    runs: dict[str, list[int]] = field(default_factory=dict)
    """Per executed task: [samples executed, samples passed]."""
    evidence: dict[str, list[int]] = field(default_factory=dict)
    """Per informative task (evidence view): [samples with evidence, samples with a similar
    solution at best, samples]."""
    answers: dict[str, Counter] = field(default_factory=dict)
    """Per informative task: how many answers reach each verbatim similarity to the canonical
    (percent), for the peer counts (bounded: 101 values per task)."""
    evidence_verbatim: dict[str, int] = field(default_factory=dict)
    """Per task with evidence: the highest verbatim similarity (percent) of its evidence."""
    closeness: dict[str, Counter] = field(default_factory=dict)
    """Per informative task: how many answers have each (verbatim, structure) closeness to the
    canonical (percent), the convergence null's view of this group as a solver."""
    evidence_best: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per task with evidence: the (verbatim, structure) of its closest evidence (percent)."""
    short_best: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per task with an exact copy of a short canonical (no evidence otherwise): the
    (verbatim, structure) of its closest such copy (percent)."""
    short_copies: dict[str, int] = field(default_factory=dict)
    """Per task: how many samples are exact copies of its short canonical."""
    leaks: dict[str, list[str]] = field(default_factory=dict)
    """Per task (disguised prompts): original names its samples write that the disguised
    prompt no longer shows."""
    passed_repaired: int = 0
    """Executed samples that passed on a program cloneprobe repaired (the output as written
    did not parse, or lacked the prompt's helpers): passes that depend on a repair."""

    @property
    def label(self) -> str:
        return prompt_label(self.prompt_set, self.variant)

    @property
    def samples(self) -> int:
        return sum(self.sample_ranks.values())

    def add(self, sample: StoredSample, verdict: Verdict, execution=None) -> None:
        rank = rank_of(verdict.clone_type)
        task = sample.task_id
        current = self.best.get(task)
        if current is None or (rank is not None and rank < current):
            self.best[task] = rank
        self.sample_ranks[rank] += 1
        if verdict.trivial_type:
            self.trivial_tasks.add(task)
        if execution is not None:
            counts = self.runs.setdefault(task, [0, 0])
            counts[0] += 1
            counts[1] += int(execution.passed)
            self.passed_repaired += int(bool(execution.passed and sample.repairs))

    def count_evidence(
        self, task_id: str, tier: str | None, verbatim: int, structure: int | None = None,
        short_copy: bool = False, answered: bool = True,
    ) -> None:
        """One sample of an informative task, with its evidence tier (None: no clone), its
        answer's verbatim and structure similarity to the canonical (percent) and whether it
        is an exact copy of a short canonical. A sample without an answer function (cut
        before it, or none written) is no solver's answer: it is counted, but not in
        `closeness`, as the shipped panel counts only answered samples."""
        counts = self.evidence.setdefault(task_id, [0, 0, 0])
        counts[0] += int(tier == "evidence")
        counts[1] += int(tier == "similar")
        counts[2] += 1
        self.answers.setdefault(task_id, Counter())[verbatim] += 1
        closeness = (verbatim, verbatim if structure is None else structure)
        if answered:
            self.closeness.setdefault(task_id, Counter())[closeness] += 1
        if tier == "evidence":
            self.evidence_verbatim[task_id] = max(verbatim, self.evidence_verbatim.get(task_id, 0))
            self.evidence_best[task_id] = max(closeness, self.evidence_best.get(task_id, (0, 0)))
        elif short_copy:
            self.short_copies[task_id] = self.short_copies.get(task_id, 0) + 1
            self.short_best[task_id] = max(closeness, self.short_best.get(task_id, (0, 0)))

    def task_ranks(self) -> dict[str, int | None]:
        return dict(self.best)

    def correctness(self) -> dict | None:
        """pass@k figures of the group's executed samples (None when none was executed)."""
        if not self.runs:
            return None
        runs = {task: [True] * c + [False] * (n - c) for task, (n, c) in self.runs.items()}
        summary = correctness_summary(runs, self.task_ranks())
        summary["passed_after_repair"] = self.passed_repaired
        return summary

    def summary(self) -> dict:
        ranks = self.task_ranks()
        tasks, samples = len(ranks), self.samples
        trivial_tasks = self.trivial_tasks - {task for task, r in ranks.items() if r is not None}
        sample_cumulative = _by_type(self.sample_ranks, cumulative=True)
        return {
            "model": self.model,
            "label": self.model_label or self.model,
            "settings_key": self.settings_key,
            "as_written": self.settings_key == IMPORTED_AS_WRITTEN,
            "temperature": self.temperature,
            "prompt_set": self.label,
            "variant": self.variant,
            "tasks": tasks,
            "samples": samples,
            "tasks_with_clone": _by_type(Counter(ranks.values()), cumulative=True),
            "tasks_with_clone_exclusive": _by_type(Counter(ranks.values()), cumulative=False),
            "samples_with_clone": sample_cumulative,
            "samples_with_clone_exclusive": _by_type(self.sample_ranks, cumulative=False),
            "task_rate": {t: _rate(n, tasks) for t, n in
                          _by_type(Counter(ranks.values()), True).items()},
            "sample_rate": {t: _rate(n, samples) for t, n in sample_cumulative.items()},
            "tasks_trivial_only": len(trivial_tasks),
            "correctness": self.correctness(),
        }


def _by_type(ranks: Counter, cumulative: bool) -> dict[str, int]:
    return {
        t: sum(count for r, count in ranks.items()
               if r is not None and (r <= int(t) if cumulative else r == int(t)))
        for t in TYPES
    }  # fmt: skip


def _rate(count: int, total: int) -> float:
    return round(100.0 * count / total, 2) if total else 0.0


class Groups:
    """The groups of a report, filled sample by sample: samples drawn with different settings
    are never pooled."""

    def __init__(self) -> None:
        self.by_key: dict[tuple, Group] = {}

    def add(self, sample: StoredSample, verdict: Verdict, execution=None) -> Group:
        key = (sample.model, sample.temperature, sample.prompt_set, sample.variant,
               sample.settings_key)  # fmt: skip
        group = self.by_key.get(key)
        if group is None:
            group = self.by_key[key] = Group(*key)
        group.add(sample, verdict, execution)
        return group

    def ordered(self) -> list[Group]:
        keys_of: dict[str, set[str]] = defaultdict(set)
        for group in self.by_key.values():
            keys_of[group.model].add(group.settings_key)
        for group in self.by_key.values():
            several = len(keys_of[group.model]) > 1
            group.model_label = f"{group.model} [{group.settings_key}]" if several else group.model
        order = sorted(
            self.by_key, key=lambda k: (k[0], k[4], k[1], k[2] != "original", k[2], k[3])
        )
        return [self.by_key[k] for k in order]


def compare_prompt_sets(groups: list[Group], seed: int = 0) -> list[dict]:
    """Original against each other prompt set, per model x temperature, on shared tasks."""
    by_model_temp: dict[tuple, list[Group]] = defaultdict(list)
    for group in groups:
        by_model_temp[(group.model_label or group.model, group.temperature)].append(group)
    comparisons = []
    for (model, temperature), members in by_model_temp.items():
        base = next((g for g in members if g.label == "original"), None)
        if base is None:
            continue
        for other in members:
            if other is base:
                continue
            base_ranks, other_ranks = base.task_ranks(), other.task_ranks()
            shared = sorted(set(base_ranks) & set(other_ranks))
            per_type = {}
            for t in TYPES:
                first = [_cloned(base_ranks[task], t) for task in shared]
                second = [_cloned(other_ranks[task], t) for task in shared]
                only_first = sum(a and not b for a, b in zip(first, second, strict=True))
                only_second = sum(b and not a for a, b in zip(first, second, strict=True))
                difference, low, high = bootstrap_difference(first, second, seed=seed)
                per_type[t] = {
                    "tasks_cloned_original": sum(first),
                    "tasks_cloned_other": sum(second),
                    "only_original": only_first,
                    "only_other": only_second,
                    "mcnemar_p": mcnemar_exact(only_first, only_second),
                    "rate_difference": round(100 * difference, 2),
                    "ci95": [round(100 * low, 2), round(100 * high, 2)],
                }
            comparisons.append(
                {
                    "model": model,
                    "temperature": temperature,
                    "original": base.label,
                    "other": other.label,
                    "tasks": len(shared),
                    "by_type": per_type,
                    "pass@1": compare_pass_at_1(base, other),
                }
            )
    return comparisons


def compare_pass_at_1(base: Group, other: Group) -> dict | None:
    """pass@1 (percent) of both groups on the tasks both executed (None: none)."""
    shared = sorted(set(base.runs) & set(other.runs))
    if not shared:
        return None

    def rate(group: Group) -> float:
        return 100 * sum(group.runs[t][1] / group.runs[t][0] for t in shared) / len(shared)

    first, second = rate(base), rate(other)
    return {"tasks": len(shared), "original": round(first, 2), "other": round(second, 2),
            "difference": round(first - second, 2)}  # fmt: skip


def _cloned(task_rank: int | None, clone_type: str) -> bool:
    return task_rank is not None and task_rank <= int(clone_type)
