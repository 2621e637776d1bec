"""Every verdict of a report tiered: evidence, similar solution, or uninformative task."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .null_model import (
    PeerIndex,
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


@dataclass(frozen=True)
class EvidenceView:
    samples: dict[int, SampleEvidence]
    uninformative: list[dict]
    chance: dict
    rule: EvidenceRule
    references: int = 0
    informative_tasks: frozenset[str] = field(default_factory=frozenset)


def group_key(sample) -> tuple:
    return (sample.model, sample.settings_key, sample.temperature, sample.prompt_set,
            sample.variant)  # fmt: skip


def assess_groups(
    groups,
    canonicals,
    settings,
    reference_solutions: Path | None = None,
    rule: EvidenceRule = DEFAULT_RULE,
) -> EvidenceView:
    """Tier every judged sample of `groups` (aggregate.Group) against its own canonical, with
    the chance rate of each canonical, other solutions in the report and reference solutions
    as the null model."""
    judged = [j for g in groups for j in g.samples]
    task_ids = sorted({j.sample.task_id for j in judged})
    profiles = {t: canonicals.profile(t) for t in task_ids}
    chance = chance_rates(canonicals, settings,
                          [(j.sample.task_id, j.sample.program or "") for j in judged])  # fmt: skip
    references = {}
    if reference_solutions is not None:
        programs = load_reference_solutions(reference_solutions, canonicals.benchmark)
        references = reference_features(canonicals, programs)
    peers = PeerIndex(
        (j.sample.task_id, group_key(j.sample), (j.verdict.answer or {}).get("verbatim", 0.0))
        for j in judged
    )
    view: dict[int, SampleEvidence] = {}
    for item in judged:
        sample, verdict = item.sample, item.verdict
        task_id = sample.task_id
        hits, compared = chance.get(task_id, (0, 0))
        assessments = []
        for pair in verdict.pairs:
            features = features_or_none(pair.get("features"))
            reaching, total = (
                peers.reaching(task_id, group_key(sample), features.verbatim)
                if features else (0, 0)
            )  # fmt: skip
            null = NullContext(
                chance_rate=hits / compared if compared else None,
                chance_compared=compared,
                references=references.get(task_id, ()),
                peers_reaching=reaching,
                peers=total,
            )
            assessments.append(
                assess_pair(pair, task_id, profiles.get(pair["canonical_task"])
                            if pair["canonical_task"] == task_id
                            else canonicals.profile(pair["canonical_task"]),
                            features, null, rule)
            )  # fmt: skip
        real = [a for a, p in zip(assessments, verdict.pairs, strict=True) if not p["trivial"]]
        best = sample_assessment(real)
        view[sample.id] = SampleEvidence(
            tier=best.tier if best else None,
            strength=best.strength if best else None,
            reasons=best.reasons if best else (),
            pairs=tuple(assessments),
        )
    uninformative = [
        {"task_id": t, "prompt_share": round(p.prompt_share, 3),
         "reason": f"{p.prompt_share:.0%} of the canonical's body repeats the prompt's own code"}
        for t, p in profiles.items()
        if p is not None and not p.informative
    ]  # fmt: skip
    compared_total = sum(c for _, c in chance.values())
    hits_total = sum(h for h, _ in chance.values())
    pooled = {t: c for t, c in chance.items() if t in profiles}
    return EvidenceView(
        samples=view,
        uninformative=uninformative,
        chance={
            "pairs": hits_total,
            "comparisons": compared_total,
            "rate": round(100 * hits_total / compared_total, 3) if compared_total else 0.0,
            "pool": max((c for _, c in pooled.values()), default=0),
            "generic_tasks": sorted(
                t for t, (h, c) in pooled.items() if c and h / c > rule.chance_max
            ),
        },
        rule=rule,
        references=sum(len(v) for v in references.values()),
        informative_tasks=frozenset(t for t, p in profiles.items() if p and p.informative),
    )
