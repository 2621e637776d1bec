"""Aggregating verdicts: per model x temperature x prompt set, and original against fixed."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from .clones import RANKS, rank_of
from .detection import Verdict
from .execution import correctness_summary
from .generation import StoredSample
from .stats import bootstrap_difference, mcnemar_exact

TYPES = tuple(str(r) for r in RANKS)
"""The Type-1/2/3 columns, keyed as in the JSON report."""


def prompt_label(prompt_set: str, variant: str) -> str:
    """`original`, `fixed`, or `<set>:<variant>` for sets with several variants."""
    return prompt_set if variant == prompt_set else f"{prompt_set}:{variant}"


@dataclass(frozen=True)
class Judged:
    """One sample with its verdict."""

    sample: StoredSample
    verdict: Verdict

    @property
    def rank(self) -> int | None:
        return rank_of(self.verdict.clone_type)


@dataclass
class Group:
    model: str
    temperature: float
    prompt_set: str
    variant: str
    settings_key: str
    samples: list[Judged] = field(default_factory=list)
    model_label: str = ""
    """The model, with its settings key when the report holds several settings for it."""

    @property
    def label(self) -> str:
        return prompt_label(self.prompt_set, self.variant)

    def task_ranks(self) -> dict[str, int | None]:
        """Most specific clone type per task (None: no sample of the task is a clone)."""
        best: dict[str, int | None] = {}
        for judged in self.samples:
            task = judged.sample.task_id
            current, new = best.get(task), judged.rank
            best[task] = new if current is None else (current if new is None else min(current, new))
        return best

    def correctness(self, executions: dict) -> dict | None:
        """pass@k figures of the group's executed samples (None when none was executed)."""
        runs: dict[str, list[bool]] = {}
        for judged in self.samples:
            result = executions.get(judged.sample.id)
            if result is not None:
                runs.setdefault(judged.sample.task_id, []).append(result.passed)
        return correctness_summary(runs, self.task_ranks()) if runs else None

    def summary(self, executions: dict | None = None) -> dict:
        ranks = self.task_ranks()
        tasks, samples = len(ranks), len(self.samples)
        sample_ranks = [j.rank for j in self.samples]
        trivial_tasks = {j.sample.task_id for j in self.samples if j.verdict.trivial_type} - {
            task for task, r in ranks.items() if r is not None
        }
        return {
            "model": self.model,
            "label": self.model_label or self.model,
            "settings_key": self.settings_key,
            "temperature": self.temperature,
            "prompt_set": self.label,
            "variant": self.variant,
            "tasks": tasks,
            "samples": samples,
            "tasks_with_clone": _by_type(ranks.values(), cumulative=True),
            "tasks_with_clone_exclusive": _by_type(ranks.values(), cumulative=False),
            "samples_with_clone": _by_type(sample_ranks, cumulative=True),
            "samples_with_clone_exclusive": _by_type(sample_ranks, cumulative=False),
            "task_rate": {t: _rate(n, tasks) for t, n in _by_type(ranks.values(), True).items()},
            "sample_rate": {t: _rate(n, samples) for t, n in _by_type(sample_ranks, True).items()},
            "tasks_trivial_only": len(trivial_tasks),
            "correctness": self.correctness(executions) if executions else None,
        }


def _by_type(ranks: Iterable[int | None], cumulative: bool) -> dict[str, int]:
    ranks = list(ranks)
    return {
        t: sum(1 for r in ranks if r is not None and (r <= int(t) if cumulative else r == int(t)))
        for t in TYPES
    }


def _rate(count: int, total: int) -> float:
    return round(100.0 * count / total, 2) if total else 0.0


def group_samples(samples: Iterable[StoredSample], verdicts: dict[int, Verdict]) -> list[Group]:
    """Groups per model x sampling settings x temperature x prompt set and variant: samples
    drawn with different settings are never pooled."""
    groups: dict[tuple, Group] = {}
    for sample in samples:
        verdict = verdicts.get(sample.id)  # type: ignore[arg-type]
        if verdict is None:
            continue
        key = (sample.model, sample.temperature, sample.prompt_set, sample.variant,
               sample.settings_key)  # fmt: skip
        if key not in groups:
            groups[key] = Group(*key)
        groups[key].samples.append(Judged(sample, verdict))
    keys_of: dict[str, set[str]] = defaultdict(set)
    for group in groups.values():
        keys_of[group.model].add(group.settings_key)
    for group in groups.values():
        several = len(keys_of[group.model]) > 1
        group.model_label = f"{group.model} [{group.settings_key}]" if several else group.model
    order = sorted(groups, key=lambda k: (k[0], k[4], k[1], k[2] != "original", k[2], k[3]))
    return [groups[k] for k in order]


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
                }
            )
    return comparisons


def _cloned(task_rank: int | None, clone_type: str) -> bool:
    return task_rank is not None and task_rank <= int(clone_type)
