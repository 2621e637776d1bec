"""One memorization verdict per task (per model x temperature x prompt set), from the task's
clone evidence tier and its likelihood relative to a reference.

The rule (docs/verdict.md; thresholds from `python -m cloneprobe.evidence.calibrate.verdict`
on the positive control):

- **memorized**: a sample's clone of the canonical is *evidence* (cloneprobe.evidence: what
  convergence, chance and the prompt do not explain: an exact copy of a canonical that is
  neither short nor generic, its own names and literals kept, ...) **and** the same-task
  convergence null makes it rare (cloneprobe.evidence.panel.convergence: no independent family
  reaches it, and its Benjamini-Hochberg q over the group's tasks with evidence is at most the
  FDR level); the figure is in the reasons. Evidence that independent solvers reach is no
  evidence; evidence whose convergence could not be measured (no panel, no other family, no
  disguised samples for the task) is **suspected**, and the reasons say what is missing.
  An exact copy of a short canonical (held back from *evidence*: any solver may write it) is
  memorized only where the model's own samples under disguised prompts and at least
  `min_families` independent families were measured and the null makes it rare: the model
  writes it when the prompt shows the benchmark's names and not when they are changed, and
  no other family writes it ("resting on the disguise").
- **suspected**: no clone evidence, but the model finds the canonical solution likelier than a
  reference model does, by at least `reference_margin` of the chosen likelihood signal
  (relative.reference; memorization that does not show in samples yet).
- **uninformative**: neither, and nothing could have shown it: the canonical is mostly prompt
  code (no clone of it is evidence) and no likelihood relative to a reference model exists.
- **no evidence**: everything else.

Never a bare number: a likelihood without a reference decides nothing (short idiomatic code is
likely under any model), nor does a similarity (a clone that is only a similar solution, the
surface similarity). The fixed-prompt view (relative.fixed) and CDD are shown in the reasons
but do not decide: the positive control does not measure them yet, so no threshold of theirs
is calibrated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from .tiers import DEFAULT_RULE, EvidenceRule

MEMORIZED, SUSPECTED, NO_EVIDENCE, UNINFORMATIVE = (
    "memorized", "suspected", "no evidence", "uninformative",
)  # fmt: skip
VERDICTS = (MEMORIZED, SUSPECTED, NO_EVIDENCE, UNINFORMATIVE)
FLAGGED = frozenset({MEMORIZED, SUSPECTED})
"""Verdicts that claim memorization (what false and true positive rates count)."""


@dataclass(frozen=True)
class VerdictRule:
    likelihood_signal: str = "min_k"
    """The likelihood signal whose value relative to the reference model decides `suspected`:
    Min-K% (k = 20%), available from local models and from servers that return prompt
    log-probs alike."""
    reference_margin: float = 0.53
    """evidence(model) - evidence(reference model) for the signal (for min_k: the mean
    log-prob, in nats, of the 20% least likely tokens of the canonical body). Calibrated:
    just above every held-out task of the positive control (verdict_calibration.json)."""

    def as_dict(self) -> dict:
        return asdict(self)


DEFAULT_VERDICT_RULE = VerdictRule()
CALIBRATION_FILE = Path(__file__).with_name("verdict_calibration.json")
"""What `python -m cloneprobe.evidence.calibrate.verdict --write` measured on the positive
control: the settings it was measured under (`key`), the rule it derived and the error rates (in
sample and cross-fitted, and out of sample on another control), with the command to rerun."""


def calibration_key(
    rule: VerdictRule = DEFAULT_VERDICT_RULE,
    evidence_rule: EvidenceRule = DEFAULT_RULE,
    profile: str = "default",
) -> dict:
    """Everything that decides a verdict: the verdict rule (suspected) and `evidence_key`
    (memorized). Error rates measured under another key are not this rule's."""
    return {"verdict_rule": rule.as_dict(), **evidence_key(evidence_rule, profile)}


def calibration() -> dict:
    """The measured calibration (empty when the file is missing)."""
    try:
        return json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def evidence_key(evidence_rule: EvidenceRule = DEFAULT_RULE, profile: str = "default") -> dict:
    """What decides `memorized`, the verdict rule aside: the evidence rule, the detector's
    version (the evidence features and details) and profile, the same-task convergence rule and
    the shipped panel's version. A control's per-task rows judged under another key are judged
    again from its store before they are calibrated on."""
    from ..audit.version import DETECTOR_VERSION
    from .panel.convergence import DEFAULT_CONVERGENCE
    from .panel.figures import PANEL_VERSION

    return {"evidence_rule": evidence_rule.as_dict(), "detector_version": DETECTOR_VERSION,
            "profile": profile, "panel_version": PANEL_VERSION,
            "convergence": DEFAULT_CONVERGENCE.as_dict()}  # fmt: skip


def stale_settings(measured: Mapping, key: Mapping) -> list[str]:
    """What differs between the settings a calibration was measured under and `key`, one
    short phrase each ("detector version 4, calibrated with 3")."""
    recorded = measured.get("key")
    if not isinstance(recorded, Mapping):
        return ["the calibration file records no settings"]
    differ = []
    for name, value in key.items():
        old = recorded.get(name)
        label = name.replace("_", " ")
        if old is None and value is not None:
            differ.append(f"{label}: not recorded by the calibration")
        elif isinstance(value, Mapping) and isinstance(old, Mapping):
            differ += [f"{label} {field} {value.get(field)}, calibrated with {old.get(field)}"
                       for field in sorted(set(value) | set(old))
                       if value.get(field) != old.get(field)]  # fmt: skip
        elif value != old:
            differ.append(f"{label} {value}, calibrated with {old}")
    return differ


def calibration_line(
    rule: VerdictRule = DEFAULT_VERDICT_RULE,
    evidence_rule: EvidenceRule = DEFAULT_RULE,
    profile: str = "default",
) -> str:
    """One line for reports: the rule and its measured error rates on the positive control, or
    "not calibrated for these settings" when the calibration was measured under other ones."""
    measured = calibration()
    head = (f"Verdict rule: memorized = clone evidence (or, with disguised samples, a short "
            f"canonical's exact copy) the same-task convergence null makes rare; "
            f"suspected = {rule.likelihood_signal} "
            f"relative to a reference model >= {rule.reference_margin:g}; a bare likelihood or "
            "a similarity decides nothing.")  # fmt: skip
    if not measured:
        return head + " Error rates: not calibrated (no calibration file)."
    differ = stale_settings(measured, calibration_key(rule, evidence_rule, profile))
    if differ:
        return (head + " Error rates: not calibrated for these settings; the shipped "
                "calibration was measured under others: " + "; ".join(differ) + ".")

    def pct(r: dict) -> str:
        return (f"{r['flagged']}/{r['tasks']} ({100 * r['rate']:.0f}%, 95% CI "
                f"{100 * r['ci95'][0]:.0f}-{100 * r['ci95'][1]:.0f}%)")  # fmt: skip

    def rates_text(rates: dict) -> str:
        doses = "; ".join(
            f"{dose}: false positives on held-out tasks {pct(rates['fpr_held_out'][dose])}, "
            f"true positives on contaminated tasks {pct(rates['tpr_contaminated'][dose])}"
            for dose in rates["fpr_held_out"]
        )
        return f"base model flagged {pct(rates['fpr_base'])}; {doses}"

    derived = measured["control"]
    text = (f"{head} Margin derived on a positive control ({derived['base_model']}, "
            f"{derived['tasks']} tasks, n={derived['n']}, {measured['measured']})")  # fmt: skip
    validation = measured.get("validation")
    if validation:
        other = validation["control"]
        return (f"{text}; out of sample, on another control ({other['tasks']} tasks, "
                f"n={other['n']}, {validation['measured']}): "
                f"{rates_text(validation['error_rates'])}.")  # fmt: skip
    return f"{text}; cross-fitted: {rates_text(measured['error_rates']['cross_fitted'])}."


@dataclass(frozen=True)
class TaskVerdict:
    verdict: str
    reasons: tuple[str, ...]

    @property
    def flagged(self) -> bool:
        return self.verdict in FLAGGED


def task_verdict(
    clone_tier: str | None,
    informative: bool,
    relative: Mapping[str, Mapping[str, float | None]],
    rule: VerdictRule = DEFAULT_VERDICT_RULE,
    clone_reasons: tuple[str, ...] | list[str] = (),
    cdd_contaminated: bool | None = None,
    convergence: Mapping | None = None,
) -> TaskVerdict:
    """The verdict of one task from its best clone tier (`evidence`, `similar`,
    `uninformative` or None: no clone), whether its canonical is informative, and its
    relative likelihood views (`reference`, `fixed`: signal -> value or None); `convergence`:
    the task's convergence null (None: not measured, as before it existed)."""
    signal = rule.likelihood_signal
    against_reference = (relative.get("reference") or {}).get(signal)
    against_fixed = (relative.get("fixed") or {}).get(signal)
    reasons: list[str] = []
    unexplained = clone_tier == "evidence"
    missing = False
    if clone_tier == "evidence":
        reasons.append("clone evidence: " + ("; ".join(clone_reasons) or "a sample's clone is "
                                             "evidence"))  # fmt: skip
        if convergence is not None:
            reasons.append("same-task convergence: " + convergence["figure"])
            unexplained = bool(convergence["memorized"])
            missing = bool(convergence["missing"])
    elif (clone_tier == "similar" and convergence is not None
          and convergence.get("basis") == "disguise"):  # fmt: skip
        reasons.append("a copy of a short canonical (any solver may write it): "
                       + "; ".join(clone_reasons[:1] or ["a sample copies it"]))
        reasons.append("the model's own disguised prompts and the independent families: "
                       + convergence["figure"])  # fmt: skip
        unexplained = bool(convergence["memorized"])
    elif clone_tier == "similar":
        reasons.append("clones are similar solutions only (what any solver of the task may "
                       "write): not evidence")  # fmt: skip
    elif not informative or clone_tier == "uninformative":
        reasons.append("the canonical is mostly prompt code: no clone of it is evidence")
    else:
        reasons.append("no clone of the canonical")
    over = against_reference is not None and against_reference >= rule.reference_margin
    if against_reference is None:
        reasons.append(f"{signal}: no reference model, so the likelihood decides nothing (a bare "
                       "likelihood is no evidence)")  # fmt: skip
    else:
        relation = ">=" if over else "<"
        reasons.append(f"{signal} relative to the reference model {against_reference:+.2f} "
                       f"{relation} margin {rule.reference_margin:g}")  # fmt: skip
    if against_fixed is not None:
        reasons.append(f"{signal} original over fixed prompts {against_fixed:+.2f} (shown, not "
                       "calibrated: does not decide)")  # fmt: skip
    if cdd_contaminated:
        reasons.append("CDD peakedness over its threshold (shown, not calibrated: does not "
                       "decide)")  # fmt: skip
    if unexplained:
        return TaskVerdict(MEMORIZED, tuple(reasons))
    if over or missing:
        return TaskVerdict(SUSPECTED, tuple(reasons))
    if (not informative or clone_tier == "uninformative") and against_reference is None:
        return TaskVerdict(UNINFORMATIVE, tuple(reasons))
    return TaskVerdict(NO_EVIDENCE, tuple(reasons))
