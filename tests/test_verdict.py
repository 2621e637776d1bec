"""The per-task memorization verdict: each branch of the rule at its boundary, and the
calibration the default rule comes from."""

from __future__ import annotations

import pytest

from cloneprobe.evidence.verdict import (
    DEFAULT_VERDICT_RULE,
    MEMORIZED,
    NO_EVIDENCE,
    SUSPECTED,
    UNINFORMATIVE,
    VerdictRule,
    calibration,
    calibration_line,
    evidence_key,
    task_verdict,
)

RULE = VerdictRule("min_k", 0.5)


def reference(value: float | None) -> dict:
    return {"reference": {"min_k": value, "perplexity": 9.0}}


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.49, NO_EVIDENCE), (0.5, SUSPECTED), (0.51, SUSPECTED), (-3.0, NO_EVIDENCE)],
)
def test_likelihood_over_the_reference_model_is_suspected_from_the_margin_on(value, expected):
    verdict = task_verdict(None, True, reference(value), RULE)
    assert verdict.verdict == expected
    assert any("relative to the reference model" in r for r in verdict.reasons)


def test_only_the_rules_signal_decides_not_another_signals_large_value():
    # perplexity's relative value is 9.0 in `reference`: it is not the rule's signal
    assert task_verdict(None, True, reference(0.1), RULE).verdict == NO_EVIDENCE
    rule = VerdictRule("perplexity", 0.5)
    assert task_verdict(None, True, reference(0.1), rule).verdict == SUSPECTED


@pytest.mark.parametrize("relative", [{}, reference(None), {"fixed": {"min_k": 50.0}}])
def test_without_a_reference_model_likelihood_decides_nothing(relative):
    verdict = task_verdict(None, True, relative, RULE)
    assert verdict.verdict == NO_EVIDENCE
    assert any("bare likelihood is no evidence" in r for r in verdict.reasons)
    if "fixed" in relative:  # shown, never deciding
        assert any("original over fixed prompts +50.00" in r for r in verdict.reasons)


def test_clone_evidence_is_memorized_whatever_the_likelihood():
    verdict = task_verdict("evidence", True, reference(-5.0), RULE, ["exact copy: 100% ..."])
    assert verdict.verdict == MEMORIZED and verdict.flagged
    assert verdict.reasons[0] == "clone evidence: exact copy: 100% ..."


def test_a_similar_solution_alone_is_never_a_claim():
    verdict = task_verdict("similar", True, {}, RULE, ["exact copy, but the canonical is short"])
    assert verdict.verdict == NO_EVIDENCE and not verdict.flagged
    assert "similar solutions only" in verdict.reasons[0]
    assert task_verdict("similar", True, reference(0.5), RULE).verdict == SUSPECTED


def test_a_prompt_code_canonical_is_uninformative_unless_a_reference_model_speaks():
    assert task_verdict(None, False, {}, RULE).verdict == UNINFORMATIVE
    assert task_verdict("uninformative", True, {}, RULE).verdict == UNINFORMATIVE
    assert task_verdict("uninformative", False, reference(0.2), RULE).verdict == NO_EVIDENCE
    assert task_verdict("uninformative", False, reference(0.6), RULE).verdict == SUSPECTED


def test_cdd_is_shown_but_does_not_decide():
    verdict = task_verdict(None, True, {}, RULE, cdd_contaminated=True)
    assert verdict.verdict == NO_EVIDENCE
    assert any("CDD" in r for r in verdict.reasons)


def test_the_default_rule_is_the_one_the_calibration_measured():
    measured = calibration()
    assert measured["rule"] == DEFAULT_VERDICT_RULE.as_dict()
    rates = measured["error_rates"]["cross_fitted"]
    assert {"fpr_base", "fpr_held_out", "tpr_contaminated"} <= set(rates)
    # keyed by everything that decides a verdict: measured under today's evidence, the rates
    # show; measured before (the shipped file predates the convergence null), they do not
    current = {**measured, "evidence": evidence_key()}
    line = calibration_line(measured=current)
    assert "false positives on held-out tasks" in line and "base model flagged" in line
    stale = {**measured, "evidence": {**evidence_key(), "detector_version": 4}}
    assert "not measured" in calibration_line(measured=stale)
    assert "not measured" in calibration_line(VerdictRule("min_k", 0.1), measured=current)
