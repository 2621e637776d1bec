"""What a sample keeps of its canonical that an independent solver would not write.

The sample is judged on its *answer* (`FragmentExtractor.extract_answer`: the function the
task asks for, the functions nested in it and the helpers it uses that the sample itself
defines); only those fragments reach these features.

Features of the answer against one canonical (`AnswerFeatures`), all measured on body tokens:
- `verbatim`: LCS of the canonical's tokens (lines repeating the prompt left out) with the
  answer's tokens, unrenamed, over the longer of the two: 1.0 for an exact copy;
- `details_kept`: LCS of the canonical's details (own names and literals, in order) with the
  answer's tokens that are details too, over the canonical's details;
- `names_kept`: the canonical's own names the answer uses;
- `literals_kept`: the canonical's own literals the answer writes unchanged (in any quote
  style): a changed literal is never kept;
- `structure`: LCS of blind-renamed tokens over the longer (1.0: same code up to renaming);
- `comments_kept`: the canonical's comments the sample repeats.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from rapidfuzz.distance import LCSseq

from ..clones import Fragment
from ..clones.normalize import BLIND
from ..clones.pretty import same_quotes
from .canonical_profile import CanonicalProfile, body_tokens, comments_of


@dataclass(frozen=True)
class AnswerFeatures:
    """One answer function against one canonical."""

    function: str
    lines: tuple[int, int]
    tokens: int
    verbatim: float
    details_kept: float
    names_kept: tuple[str, ...]
    structure: float
    comments_kept: int
    literals_kept: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        data = asdict(self)
        data["lines"] = list(self.lines)
        data["names_kept"] = list(self.names_kept)
        data["literals_kept"] = list(self.literals_kept)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> AnswerFeatures:
        return cls(
            function=data["function"],
            lines=tuple(data["lines"]),  # type: ignore[arg-type]
            tokens=data["tokens"],
            verbatim=data["verbatim"],
            details_kept=data["details_kept"],
            names_kept=tuple(data["names_kept"]),
            structure=data["structure"],
            comments_kept=data["comments_kept"],
            literals_kept=tuple(data.get("literals_kept", ())),
        )


def _ratio(lcs: float, longer: int) -> float:
    return round(lcs / longer, 4) if longer else 0.0


_CONTENT_MEMO: dict[tuple[int, tuple], tuple[CanonicalProfile, tuple]] = {}
"""`_content_features` by (id(profile), body lines); the profile is kept with its entries, so
its id stays its own. Only a cache: the features are the same with it or without."""
_SAME_LINES_MEMO: dict[tuple[int, int, int], tuple[CanonicalProfile, tuple, tuple]] = {}
"""The same by (id(profile), id(fragment.lines), body_start), asked first: fragments of one
program text share their lines tuple (the extractor parses a program once), and an answer
is asked for again for each clone pair it is in. Hashing the body's lines (every token) costs
more than the rest of a hit; an id costs nothing. The profile and the lines are kept with the
entry, so both ids stay theirs."""
CONTENT_MEMO_LIMIT = 100_000


def _content_features(profile: CanonicalProfile, fragment: Fragment) -> tuple:
    """(tokens, verbatim, details_kept, names_kept, structure, used names): what depends on
    the fragment's body alone, computed once per distinct body and canonical."""
    lines, body_start = fragment.lines, fragment.body_start
    same = (id(profile), id(lines), body_start)
    known = _SAME_LINES_MEMO.get(same)
    if known is not None and known[0] is profile and known[1] is lines:
        return known[2]
    found = _body_features(profile, fragment)
    if len(_SAME_LINES_MEMO) >= CONTENT_MEMO_LIMIT:
        _SAME_LINES_MEMO.clear()
    _SAME_LINES_MEMO[same] = (profile, lines, found)
    return found


def _body_features(profile: CanonicalProfile, fragment: Fragment) -> tuple:
    """`_content_features` by the body's content (a body seen in another program)."""
    key = (id(profile), fragment.lines[fragment.body_start :])
    known = _CONTENT_MEMO.get(key)
    if known is not None and known[0] is profile:
        return known[1]
    tokens = body_tokens(fragment)
    # kinds and texts apart in one step, blind renaming by map: a comprehension that unpacks
    # every token costs more than the three LCS calls
    kinds, texts = zip(*tokens, strict=True) if tokens else ((), ())
    prompt_tokens = profile.body_token_count - profile.own_token_count
    own_length = max(len(profile.tokens), len(texts) - prompt_tokens)
    verbatim = _ratio(LCSseq.similarity(profile.tokens, texts), own_length)
    detail_set = set(profile.details)
    details = [t for t in texts if t in detail_set]
    details_kept = _ratio(LCSseq.similarity(profile.details, details), len(profile.details))
    blind = list(map(BLIND.get, kinds, texts))
    structure = _ratio(LCSseq.similarity(profile.blind, blind), max(len(blind), len(profile.blind)))
    used = set(texts)
    names_kept = tuple(n for n in profile.own_names if n in used)
    literals = (
        frozenset(same_quotes(text) for kind, text in tokens if kind in ("str", "char"))
        if "str" in kinds or "char" in kinds
        else frozenset()
    )
    found = (len(texts), verbatim, details_kept, names_kept, structure, literals)
    if len(_CONTENT_MEMO) >= CONTENT_MEMO_LIMIT:
        _CONTENT_MEMO.clear()
    _CONTENT_MEMO[key] = (profile, found)
    return found


def features_of(
    profile: CanonicalProfile, fragment: Fragment, sample_comments: Sequence[str] = ()
) -> AnswerFeatures:
    """How much of the canonical's own content the function `fragment` keeps."""
    tokens, verbatim, details_kept, names_kept, structure, literals = _content_features(
        profile, fragment
    )
    comments = set(sample_comments)
    return AnswerFeatures(
        function=fragment.name,
        lines=(fragment.start_line, fragment.end_line),
        tokens=tokens,
        verbatim=verbatim,
        details_kept=details_kept,
        names_kept=names_kept,
        structure=structure,
        comments_kept=sum(1 for c in profile.comments if c in comments),
        literals_kept=tuple(t for t in profile.own_literals if same_quotes(t) in literals),
    )


def best_answer_features(
    profile: CanonicalProfile, answer: Sequence[Fragment], program: str
) -> AnswerFeatures | None:
    """Features of the answer function closest to the canonical (None: no function)."""
    if not answer:
        return None
    comments = comments_of(program) if profile.comments else []
    best = max(
        (features_of(profile, f, comments) for f in answer),
        key=lambda a: (a.verbatim, a.structure),
    )
    return best
