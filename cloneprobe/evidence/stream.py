"""The evidence view of a streamed audit: what needs every sample is computed before the
stream (a bounded chance pool of other tasks' answers, the reference solutions' features),
each verdict is tiered as it arrives, and per-task evidence counts live in the groups.

Memory is bounded by the pool (`CHANCE_POOL` programs plus one per task while it is read),
the benchmark's canonicals and the per-task counts, never by the number of samples.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from math import ceil

from .null_model import (
    CHANCE_POOL,
    chance_rates,
    features_or_none,
    load_reference_solutions,
    reference_features,
)
from .tiers import (
    DEFAULT_RULE,
    Assessment,
    EvidenceRule,
    NullContext,
    assess_pair,
    sample_assessment,
)


@dataclass(frozen=True)
class SampleEvidence:
    """A sample's tier (None: no non-trivial clone pair) with its pairs' assessments, aligned
    with the verdict's pairs."""

    tier: str | None
    strength: float | None
    reasons: tuple[str, ...]
    pairs: tuple[Assessment, ...]


def bounded_chance_pool(samples: Iterable, size: int = CHANCE_POOL) -> list[tuple[str, str]]:
    """(task_id, program) of the samples `null_model.chance_pool` picks from all of them (the
    first ones of each task in turn), keeping at most ceil(size / tasks seen) per task while
    reading: the pool needs no more of any task."""
    by_task: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for sample in samples:
        kept = by_task[sample.task_id]
        limit = ceil(size / len(by_task))
        if len(kept) < limit:
            kept.append((sample.task_id, sample.program or ""))
        if len(kept) == 1 and len(by_task) > 1:  # a new task lowers every task's share
            for members in by_task.values():
                del members[ceil(size / len(by_task)):]
    ordered = [item for task in sorted(by_task) for item in by_task[task]]
    return ordered


class StreamedEvidence:
    """Tiers verdicts one at a time against their own canonical."""

    def __init__(self, canonicals, settings, samples: Iterable,
                 rule: EvidenceRule = DEFAULT_RULE) -> None:  # fmt: skip
        self.canonicals, self.rule = canonicals, rule
        self.chance = chance_rates(canonicals, settings, bounded_chance_pool(samples))
        self.references: dict[str, tuple] = {}
        if settings.reference_solutions is not None:
            programs = load_reference_solutions(settings.reference_solutions,
                                                canonicals.benchmark)  # fmt: skip
            self.references = reference_features(canonicals, programs)
        self.seen_tasks: set[str] = set()

    def informative(self, task_id: str) -> bool:
        profile = self.canonicals.profile(task_id)
        return profile is not None and profile.informative

    def assess(self, task_id: str, verdict) -> SampleEvidence:
        """The sample's tier with its pairs' assessments (aligned with `verdict.pairs`)."""
        self.seen_tasks.add(task_id)
        hits, compared = self.chance.get(task_id, (0, 0))
        null = NullContext(
            chance_rate=hits / compared if compared else None,
            chance_compared=compared,
            references=self.references.get(task_id, ()),
        )
        assessments = tuple(
            assess_pair(pair, task_id, self.canonicals.profile(pair["canonical_task"]),
                        features_or_none(pair.get("features")), null, self.rule)
            for pair in verdict.pairs
        )  # fmt: skip
        real = [a for a, p in zip(assessments, verdict.pairs, strict=True) if not p["trivial"]]
        best = sample_assessment(real)
        return SampleEvidence(
            tier=best.tier if best else None,
            strength=best.strength if best else None,
            reasons=best.reasons if best else (),
            pairs=assessments,
        )

    def uninformative(self) -> list[dict]:
        """The report's tasks whose canonical is mostly prompt code."""
        found = []
        for task_id in sorted(self.seen_tasks):
            profile = self.canonicals.profile(task_id)
            if profile is not None and not profile.informative:
                found.append({
                    "task_id": task_id, "prompt_share": round(profile.prompt_share, 3),
                    "reason": f"{profile.prompt_share:.0%} of the canonical's body repeats "
                              "the prompt's own code"})  # fmt: skip
        return found

    def rule_summary(self) -> dict:
        """`evidence_rule`: thresholds, the chance rate over the report's tasks, references."""
        pooled = {t: c for t, c in self.chance.items() if t in self.seen_tasks}
        compared_total = sum(c for _, c in self.chance.values())
        hits_total = sum(h for h, _ in self.chance.values())
        chance = {
            "pairs": hits_total,
            "comparisons": compared_total,
            "rate": round(100 * hits_total / compared_total, 3) if compared_total else 0.0,
            "pool": max((c for _, c in pooled.values()), default=0),
            "generic_tasks": sorted(
                t for t, (h, c) in pooled.items() if c and h / c > self.rule.chance_max
            ),
        }
        return {**self.rule.as_dict(), "chance": chance,
                "reference_solutions": sum(len(v) for v in self.references.values())}  # fmt: skip
