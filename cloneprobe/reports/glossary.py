"""What the report's words mean, written once for every format: the four verdicts, the clone
types and the evidence tiers, as the page defines them where they are used."""

from __future__ import annotations

VERDICT_MEANING = {
    "memorized": "a sample reproduces the canonical solution more closely than other solvers "
    "of the task, other tasks' answers (chance) and the prompt itself explain: clone evidence",
    "suspected": "no clone evidence, but the model finds the canonical solution likelier "
    "than a reference model does, by more than the calibrated margin",
    "no evidence": "neither: no clone that is evidence (a clone any solver of the task writes "
    "does not count) and no likelihood over the margin",
    "uninformative": "the canonical solution is mostly code the prompt already shows, so no "
    "clone of it can be evidence either way",
}
"""The task verdicts (cloneprobe.evidence.verdict), in plain words."""

CLONE_TYPE_MEANING = {
    "1": "Type-1: the same code, up to layout and comments",
    "2": "Type-2: the same code with identifiers and literals renamed",
    "3": "Type-3: near the same code: at most 30% of it differs, after renaming (tokens of "
    "the body in the default profile, lines in nicad)",
}
"""Clone types as counted (cumulative: a Type-1 clone is also a Type-2 and a Type-3 clone)."""

TIER_MEANING = {
    "evidence": "Candidate evidence: closer to the canonical than other tasks' answers and the "
    "prompt explain; memorization only where independent solvers of the task do not write it",
    "similar": "A similar solution only, not evidence: what independent solvers of the task "
    "also write",
    "uninformative": "Not evidence: the canonical is mostly code the prompt already shows",
}
"""A clone pair's evidence tier (cloneprobe.evidence.tiers)."""

STANDING_MEANING = {
    "memorized": "Evidence of memorization: a copy of the canonical that other tasks' answers "
                 "and the prompt do not explain, and that independent solvers of the task do "
                 "not write (rare under the same-task convergence null)",
    "convergent": "Candidate evidence that convergence explains: independent solvers of the "
                  "task write code as close to the canonical, so it is not memorization",
    "not rare": "Candidate evidence, not rare enough: independent solvers of the task come "
                "close often enough that it is not called memorization (false-discovery "
                "control over the tasks tested)",
    "unmeasured": "Candidate evidence whose convergence could not be measured (too few "
                  "independent solvers of the task): not called memorization",
}
"""What a pair of the `evidence` tier comes to once its task's same-task convergence null is
asked (cloneprobe.audit.verdict_summary.pair_standing)."""


STRENGTH_MEANING = ("0 to 1: how much of the canonical solution's own content (what the "
                    "prompt does not already show) the sample reproduces, scaled down for a "
                    "short canonical")


def glossary_items() -> list[tuple[str, str]]:
    """(term, meaning) of every verdict and clone type, in reading order."""
    return [*VERDICT_MEANING.items(),
            *((f"Type-{t}", m.split(": ", 1)[1]) for t, m in CLONE_TYPE_MEANING.items()),
            ("strength", STRENGTH_MEANING)]
