"""Clone reasons never say two contradicting things about one pair: "exact copy" only for a
Type-1 clone, a renamed own name is never called kept, and a "similar" pair is not followed by
a rarity figure that reads as its own. Through the real CLI (`cloneprobe detect FILE`) on real
HumanEval canonicals with a SQLite store in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main

HUMANEVAL = load_humaneval()


def canonical(number: int) -> str:
    return HUMANEVAL.get(f"HumanEval/{number}").canonical_solution


def detect(tmp_path: Path, records: list[dict], *extra: str):
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    args = ["detect", str(path), "--store", str(tmp_path / "s.sqlite"), "--model", "m",
            "--temperature", "0.2", *extra]  # fmt: skip
    return CliRunner().invoke(main, args, env={"OPENAI_API_KEY": None, "COLUMNS": "200"})


def by_sample(report: dict) -> dict[int, dict]:
    return {s["sample"]: s for s in report["samples"]}


def test_a_renamed_copy_is_a_near_exact_copy_that_names_what_was_renamed(tmp_path):
    # HumanEval/19's own name `value_map`; /20's `closest_pair` and `distance`
    records = [
        {"task_id": "HumanEval/19", "completion": canonical(19)},
        {"task_id": "HumanEval/19", "completion": canonical(19).replace("value_map", "words")},
        {"task_id": "HumanEval/20", "completion": canonical(20).replace("closest_pair", "best")},
    ]
    result = detect(tmp_path, records, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    samples = {(s["task_id"], s["sample"]): s for s in report["samples"]}
    same = samples[("HumanEval/19", 0)]
    assert same["clone_type"] == 1
    assert any(r.startswith("exact copy") and "its own value_map kept" in r
               for r in same["evidence_reasons"])  # fmt: skip
    for key in (("HumanEval/19", 1), ("HumanEval/20", 0)):
        sample = samples[key]
        assert sample["clone_type"] == 2, sample
        reasons = "; ".join(sample["evidence_reasons"])
        assert "near-exact copy" in reasons, reasons
        assert not any(r.startswith("exact copy") for r in sample["evidence_reasons"]), reasons
        assert "none of them the canonical's own" not in reasons, reasons
    renamed_19 = "; ".join(samples[("HumanEval/19", 1)]["evidence_reasons"])
    assert "value_map renamed" in renamed_19 and "value_map kept" not in renamed_19
    renamed_20 = "; ".join(samples[("HumanEval/20", 0)]["evidence_reasons"])
    assert "closest_pair renamed" in renamed_20, renamed_20
    kept_part = renamed_20.split(" kept")[0]
    assert "closest_pair" not in kept_part, renamed_20


def test_evidence_pairs_in_the_terminal_agree_with_their_clone_type(tmp_path):
    records = [
        {"task_id": "HumanEval/0", "completion": canonical(0).replace("distance", "dist")},
        {"task_id": "HumanEval/0", "completion": canonical(0).replace("idx2", "j")
         .replace("idx", "i").replace("elem2", "b").replace("elem", "a")
         .replace("distance", "d")},
    ]  # fmt: skip
    result = detect(tmp_path, records, "--evidence")
    assert result.exit_code == 0, result.output
    blocks = result.stdout.split("\nm t=0.2 original HumanEval/0 sample ")[1:]
    assert len(blocks) == 2, result.stdout
    for block in blocks:
        head, reason = block.splitlines()[:2]
        assert "type 2" in head, head
        assert "exact copy" not in reason.replace("near-exact copy", ""), reason
        assert "distance kept" not in reason, reason
    renamed_one = blocks[0].splitlines()[1]
    assert "distance renamed" in renamed_one, renamed_one
    all_renamed = blocks[1].splitlines()
    assert all_renamed[1].startswith("similar"), all_renamed[1]
    # the task's rarity figure is about its evidence (sample 0), not this similar pair
    assert all_renamed[2].startswith("same-task convergence of the task's evidence (not this "
                                     "pair)"), all_renamed[2]  # fmt: skip
    assert not all_renamed[3].startswith("closest independent"), all_renamed[3]
