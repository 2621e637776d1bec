"""What of a canonical is its own detail, and what the prompt dictates: the verdict defects of
issue 21, each on the real HumanEval task it was found on, through the real CLI
(`cloneprobe detect FILE --json`) and a SQLite store in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cloneprobe.audit.detection import CanonicalFragments
from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main

HUMANEVAL = load_humaneval()
CANONICALS = CanonicalFragments(HUMANEVAL)


def canonical(number: int) -> str:
    return HUMANEVAL.get(f"HumanEval/{number}").canonical_solution


def profile(number: int):
    return CANONICALS.profile(f"HumanEval/{number}")


def detect(tmp_path: Path, records: list[dict]) -> dict:
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = CliRunner().invoke(main, [
        "detect", str(path), "--store", str(tmp_path / "s.sqlite"), "--model", "m",
        "--temperature", "0.2", "--json"], env={"OPENAI_API_KEY": None})  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def samples(report: dict) -> dict[tuple[str, int], dict]:
    return {(s["task_id"], s["sample"]): s for s in report["samples"]}


def test_quote_style_is_no_detail_and_a_changed_literal_is_never_kept(tmp_path):
    # HumanEval/98: the canonical's "AEIOU"; the same code in single quotes is the same code,
    # and 'AaEeIiOoUu' is another literal, not the canonical's kept.
    single = canonical(98).replace('"AEIOU"', "'AEIOU'")
    changed = canonical(98).replace('"AEIOU"', "'AaEeIiOoUu'")
    report = detect(tmp_path, [
        {"task_id": "HumanEval/98", "completion": single},
        {"task_id": "HumanEval/98", "completion": changed},
    ])  # fmt: skip
    found = samples(report)
    same, other = found[("HumanEval/98", 0)], found[("HumanEval/98", 1)]
    assert same["clone_type"] == 1  # quote style never makes a Type-2
    assert other["clone_type"] == 2
    assert not any("kept" in r and "exact copy" in r for r in other["evidence_reasons"])
    assert any("changed" in r for r in other["evidence_reasons"])
    assert other["evidence_tier"] != "evidence"
    pair = next(p for p in report["evidence"] if p["sample"] == 0)
    assert pair["compared"]["canonical"] == pair["compared"]["sample"]


def test_names_the_prompt_makes_natural_are_not_the_canonicals_own():
    # HumanEval/96 speaks of prime numbers (`primes`, `is_prime`); /155 of even and odd digits
    # (`even_count`, `odd_count`); /81 of letter grades and GPAs (`letter_grade`, `gpa`).
    assert profile(96).own_names == ()
    assert profile(155).own_names == ()
    assert profile(81).own_names == ()
    # a name the prompt does not suggest stays the canonical's own (HumanEval/20's quirks)
    assert "closest_pair" in profile(20).own_names


def test_exact_copy_of_a_canonical_without_own_details_does_not_claim_kept_details(tmp_path):
    report = detect(tmp_path, [{"task_id": "HumanEval/96", "completion": canonical(96)}])
    reasons = report["samples"][0]["evidence_reasons"]
    assert not any("names and literals kept" in r for r in reasons)
    assert not any("primes" in r for r in reasons)


def test_code_the_docstring_dictates_is_not_evidence(tmp_path):
    # HumanEval/81's ladder transcribes the table printed in the prompt; written as GPT-4 wrote
    # it (own names, single quotes) and as the canonical itself.
    ladder = (canonical(81).replace("letter_grade", "letter_grades").replace("gpa", "grade")
              .replace('"', "'"))  # fmt: skip
    report = detect(tmp_path, [
        {"task_id": "HumanEval/81", "completion": canonical(81)},
        {"task_id": "HumanEval/81", "completion": ladder},
    ])  # fmt: skip
    assert profile(81).dictated_tokens > 100
    assert profile(81).own_token_count < 30
    for sample in report["samples"]:
        assert sample["clone_type"] in (1, 2)
        assert sample["evidence_tier"] != "evidence", sample["evidence_reasons"]


def test_fibfib_if_chain_and_elif_else_get_the_same_tier(tmp_path):
    # HumanEval/63: the recurrence the docstring states, with `if` chains (the canonical) and
    # with `elif`/`else`: the same answer, so the same tier, and neither is evidence.
    elif_else = (
        canonical(63)
        .replace("    if n == 1:", "    elif n == 1:")
        .replace("    if n == 2:", "    elif n == 2:")
        .replace("    return fibfib(n - 1)", "    else:\n        return fibfib(n - 1)")
    )
    assert elif_else != canonical(63)
    report = detect(tmp_path, [
        {"task_id": "HumanEval/63", "completion": canonical(63)},
        {"task_id": "HumanEval/63", "completion": elif_else},
    ])  # fmt: skip
    found = samples(report)
    chain, ladder = found[("HumanEval/63", 0)], found[("HumanEval/63", 1)]
    assert chain["evidence_tier"] == ladder["evidence_tier"] == "similar"
    assert profile(63).dictated_tokens > 0
