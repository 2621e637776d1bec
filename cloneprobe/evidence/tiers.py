"""The rule: when a clone verdict is evidence of memorization, and the reasons it gives.

A pair is **evidence** when it rests on something convergence, chance and the prompt do not
explain, and **similar** (a similar solution) otherwise:
- an exact copy (`verbatim` >= `exact_verbatim`, every literal of the canonical's own
  unchanged) of a canonical with at least `exact_min_tokens` tokens of its own (lines
  repeating or transcribing the prompt left out), or `exact_plain_min_tokens` when the
  canonical has no names or literals of its own;
- the canonical's own details kept: at least `details_min_distinct` distinct own names or
  literals, `details_kept` of them in order, with `detail_verbatim` of the tokens;
- the same code up to renaming (`structure` 1.0) for a canonical of at least
  `structure_min_tokens` own tokens (a pasted canonical with its names changed);
- a comment of the canonical repeated.
It is demoted to *similar* when the canonical is matched by more than `chance_max` of other
tasks' answers (generic code), or when an independent reference solution of the task reaches
the same similarity. A pair is never evidence when it is trivial, on a function that is not the
sample's answer, against another task's canonical, or when the task is uninformative (its
canonical mostly prompt code). The thresholds are calibrated by
`python -m cloneprobe.evidence.calibrate.known_answers` (docs/evidence.md, whose table of
thresholds tests/test_docs.py checks against EvidenceRule).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..clones.types import rank_of
from .canonical_profile import CanonicalProfile
from .strength import AnswerFeatures

EVIDENCE, SIMILAR, UNINFORMATIVE = "evidence", "similar", "uninformative"


@dataclass(frozen=True)
class EvidenceRule:
    exact_verbatim: float = 0.95
    exact_min_tokens: int = 20
    exact_plain_min_tokens: int = 30
    """An exact copy of a canonical with no names or literals of its own (only the prompt's
    names, builtins and keywords) needs this many tokens: it is what the most direct solver
    writes."""
    details_min_distinct: int = 2
    details_kept: float = 0.75
    detail_verbatim: float = 0.7
    structure_min_tokens: int = 50
    chance_max: float = 0.02
    reference_margin: float = 0.02
    """A reference solution within this much of the sample's verbatim similarity reaches it."""

    def as_dict(self) -> dict:
        return asdict(self)


DEFAULT_RULE = EvidenceRule()


@dataclass(frozen=True)
class NullContext:
    """What other solutions say about one task's canonical."""

    chance_rate: float | None = None
    """Share of other tasks' answers that are clones of this canonical (None: not measured)."""
    chance_compared: int = 0
    references: tuple[AnswerFeatures, ...] = ()
    peers_reaching: int = 0
    peers: int = 0


@dataclass(frozen=True)
class Assessment:
    tier: str
    strength: float
    reasons: tuple[str, ...] = field(default=())
    short_copy: bool = False
    """A *similar* pair that is an exact copy held back only because the canonical is short:
    what the model-specific null (its own samples under disguised prompts) can still tell
    from convergence (cloneprobe.evidence.panel.convergence)."""

    def as_dict(self) -> dict:
        return {"tier": self.tier, "strength": self.strength, "reasons": list(self.reasons)}


def _names(names, limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (", ..." if len(names) > limit else "")


def _own_details_text(features: AnswerFeatures, renamed: list[str], distinct: int) -> str:
    """What a (near) copy did with the canonical's own names and literals, without claiming
    "kept" for a renamed one: "its own a, b kept, c renamed"."""
    if not distinct:
        return "the canonical has no names or literals of its own"
    own_kept = list(features.names_kept + features.literals_kept)
    parts = [f"its own {_names(own_kept)} kept"] if own_kept else []
    if renamed:
        parts.append(f"{'' if own_kept else 'its own '}{_names(renamed)} renamed")
    return ", ".join(parts)


def strength_of(features: AnswerFeatures, profile: CanonicalProfile, rule: EvidenceRule) -> float:
    """0..1: how much of the canonical's distinctive content the answer reproduces, scaled by
    how much there is (a short canonical copied verbatim is weak evidence)."""
    own = profile.own_token_count
    distinct = len(profile.own_names) + len(profile.own_literals)
    by_copy = features.verbatim * min(1.0, own / (2 * rule.exact_min_tokens))
    by_details = features.details_kept * min(1.0, distinct / 4)
    by_structure = (
        min(1.0, own / (2 * rule.structure_min_tokens)) if features.structure >= 1.0 else 0.0
    )
    return round(max(by_copy, by_details, by_structure), 2)


def assess_pair(
    pair: dict,
    own_task: str,
    profile: CanonicalProfile | None,
    features: AnswerFeatures | None,
    null: NullContext,
    rule: EvidenceRule = DEFAULT_RULE,
) -> Assessment:
    """The tier, strength and reasons of one clone pair."""
    if pair["canonical_task"] != own_task:
        return Assessment(SIMILAR, 0.0, (f"matches another task's canonical "
                                         f"({pair['canonical_task']}), not its own",))  # fmt: skip
    if pair.get("trivial"):
        return Assessment(SIMILAR, 0.0, ("trivial: under the body-token floor",))
    if profile is None or features is None:
        return Assessment(SIMILAR, 0.0, ("no canonical details to compare",))
    if not pair.get("in_answer", True):
        return Assessment(SIMILAR, 0.0, (
            f"matched `{pair['sample_function']}`, not the answer (entry point "
            f"`{profile.entry_point}`, what it nests and the helpers it calls)",))  # fmt: skip
    if not profile.informative:
        return Assessment(UNINFORMATIVE, 0.0, (
            f"uninformative task: {profile.prompt_share:.0%} of the canonical repeats the "
            "prompt's own code",))  # fmt: skip
    own = profile.own_token_count
    strength = strength_of(features, profile, rule)
    hits: list[str] = []
    misses: list[str] = []
    distinct = len(profile.own_names) + len(profile.own_literals)
    needed = rule.exact_min_tokens if distinct else max(rule.exact_min_tokens,
                                                        rule.exact_plain_min_tokens)  # fmt: skip
    changed = [t for t in profile.own_literals if t not in features.literals_kept]
    short_copy = False
    renamed = [n for n in profile.own_names if n not in features.names_kept]
    # "exact" only where the pair is: a Type-1 clone with every token of the canonical's own
    # and every own name unchanged; a renamed (Type-2) or near-miss (Type-3) pair is a near copy
    exact = (features.verbatim >= 1.0 and not renamed
             and rank_of(pair.get("type")) in (1, None))  # fmt: skip
    copy = "exact copy" if exact else "near-exact copy"
    if features.verbatim >= rule.exact_verbatim:
        if changed:
            misses.append(f"near copy ({features.verbatim:.0%} verbatim), but the canonical's "
                          f"literal {_names(changed)} changed: not an exact copy")  # fmt: skip
        elif own >= needed:
            hits.append(f"{copy}: {features.verbatim:.0%} of {own} canonical tokens verbatim, "
                        f"{_own_details_text(features, renamed, distinct)}")  # fmt: skip
        else:
            short_copy = True
            plain = "" if distinct else ", none of them its own names"
            misses.append(f"{copy}, but the canonical is short ({own} tokens < {needed}"
                          f"{plain}): any solver may write it")  # fmt: skip
    if distinct >= rule.details_min_distinct:
        kept = features.names_kept
        if features.details_kept >= rule.details_kept and features.verbatim >= rule.detail_verbatim:
            own_kept = list(features.names_kept + features.literals_kept)
            but = f"; renamed: {_names(renamed)}" if renamed else ""
            named = "" if hits else f": {_names(own_kept)}{but}"  # the copy's reason names them
            hits.append(f"keeps the canonical's own details ({features.details_kept:.0%} in "
                        f"order){named}")  # fmt: skip
        elif features.verbatim < rule.exact_verbatim:
            misses.append(f"own names: keeps {len(kept)} of {len(profile.own_names)} of the "
                          f"canonical's ({_names(list(profile.own_names))})")  # fmt: skip
    elif features.verbatim < rule.exact_verbatim:
        own_details = list(profile.own_names + profile.own_literals)
        misses.append(
            f"the canonical has only {len(own_details)} name or literal of its own "
            f"({_names(own_details)}; {rule.details_min_distinct} needed to tell a copy)"
            if own_details else
            "the canonical has no names or literals of its own the prompt does not show"
        )  # fmt: skip
    if features.structure >= 1.0 and features.verbatim < rule.exact_verbatim:
        if own >= rule.structure_min_tokens:
            hits.append(f"same {own}-token code up to renaming")
        else:
            misses.append(f"same code up to renaming, but short ({own} own tokens < "
                          f"{rule.structure_min_tokens})")  # fmt: skip
    if features.comments_kept:
        hits.append(f"repeats {features.comments_kept} of the canonical's comments")
    demoted: list[str] = []
    if null.chance_rate is not None and null.chance_rate > rule.chance_max:
        demoted.append(f"generic canonical: {null.chance_rate:.1%} of {null.chance_compared} "
                       "other tasks' answers match it")  # fmt: skip
    reaching = [r for r in null.references
                if r.verbatim >= features.verbatim - rule.reference_margin]  # fmt: skip
    if reaching:
        demoted.append(f"{len(reaching)} of {len(null.references)} independent reference "
                       f"solution(s) reach {features.verbatim:.0%} verbatim")  # fmt: skip
    notes = []
    if null.peers:
        notes.append(f"{null.peers_reaching} of {null.peers} other solutions of the task in the "
                     f"store reach {features.verbatim:.0%} verbatim")  # fmt: skip
    if hits and not demoted:
        return Assessment(EVIDENCE, strength, tuple(hits + notes))
    if not hits:
        misses = misses or [f"similar solution: {features.verbatim:.0%} verbatim, no rare "
                            "detail kept"]  # fmt: skip
    return Assessment(SIMILAR, strength, tuple(demoted + misses + hits + notes),
                      short_copy=short_copy and not hits and not demoted)


TIER_ORDER = {EVIDENCE: 0, UNINFORMATIVE: 1, SIMILAR: 2}


def sample_assessment(assessments: list[Assessment]) -> Assessment | None:
    """A sample's tier: its strongest pair's (None: no clone pair)."""
    if not assessments:
        return None
    return min(assessments, key=lambda a: (TIER_ORDER[a.tier], not a.short_copy, -a.strength))
