"""Calibrate the evidence rule on samples with a known answer (built by `corpus.py` here).

Builds, for every HumanEval task, memorized copies (verbatim, layout changed), pasted-and-renamed
canonicals, convergent solutions (the canonical's algorithm as an independent solver writes it),
stub answers and hand-written alternative solutions; stores them in a temporary SQLite store;
runs the audit's own detection and evidence view; and prints per class: samples, clone rate
(any non-trivial clone of its own canonical), the rate with trivial pairs (canonicals under the
default profile's token floor, reported apart) counted too, evidence rate, similar-solution
rate, and the chance rate (answers that are non-trivial clones of *another* task's canonical,
entry point renamed). Then a sweep of the rule's size thresholds, to show where the defaults sit.

    python -m cloneprobe.evidence.calibrate.known_answers                      # default profile
    python -m cloneprobe.evidence.calibrate.known_answers --profile nicad
    python -m cloneprobe.evidence.calibrate.known_answers --check   # also run every sample's tests
    python -m cloneprobe.evidence.calibrate.known_answers --json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.audit.detection import CanonicalFragments, DetectionSettings, DetectionStore
from cloneprobe.benchmarks import load_benchmark
from cloneprobe.clones import PROFILES, DetectorConfig, get_profile
from cloneprobe.evidence.calibrate.corpus import EXPECTED, build_corpus
from cloneprobe.evidence.stream import StreamedEvidence
from cloneprobe.evidence.tiers import DEFAULT_RULE, EVIDENCE, SIMILAR
from cloneprobe.generation import SampleStore, StoredSample
from cloneprobe.generation.selection import SampleSelection
from cloneprobe.pipeline import SilentReporter, detect_and_report, execute
from cloneprobe.settings import ExecutionSettings

SWEEPS = {
    "exact_min_tokens": (10, 15, 20, 25, 30),
    "exact_plain_min_tokens": (20, 30, 40, 50, 60),
    "structure_min_tokens": (30, 40, 50, 60, 80),
    "details_kept": (0.5, 0.6, 0.75, 0.9),
}
"""Each threshold varied alone, the others at their defaults."""


def store_corpus(store: SampleStore, corpus: dict[str, list[dict]]) -> list[StoredSample]:
    run = store.start_run("calibration", {"corpus": "cloneprobe/evidence/calibrate/corpus.py"}, {})
    rows = [
        StoredSample(model=name, settings_key="calibration", prompt_set="original",
                     variant="original", task_id=record["task_id"], temperature=0.0,
                     sample_index=0, completion=record["solution"], program=record["solution"],
                     raw=record["solution"], run_id=run)
        for name, records in corpus.items()
        for record in records
    ]  # fmt: skip
    store.add(rows)
    store.end_run(run)
    return list(store.samples())


def cross_task_chance(store, benchmark, config, samples) -> dict[str, tuple[int, int]]:
    """Per class: (samples whose answer is a non-trivial clone of another task's canonical,
    samples, (sample, other canonical) pairs that are clones, such pairs compared)."""
    settings = DetectionSettings(config, cross_task=True)
    from cloneprobe.audit.detection import SampleProgram, detect_samples

    programs = [SampleProgram(s.id, s.task_id, s.program or "") for s in samples]
    detect_samples(store.db, benchmark, settings, programs)
    verdicts = DetectionStore(store.db).verdicts(settings.key)
    counts: dict[str, list[int]] = {}
    canonicals = len(benchmark)
    for sample in samples:
        verdict = verdicts[sample.id]
        others = {
            p["canonical_task"] for p in verdict.pairs
            if p["canonical_task"] != sample.task_id and not p["trivial"] and p.get("in_answer")
        }  # fmt: skip
        row = counts.setdefault(sample.model, [0, 0, 0, 0])
        row[0] += int(bool(others))
        row[1] += 1
        row[2] += len(others)
        row[3] += canonicals - 1
    return {k: tuple(v) for k, v in counts.items()}


def class_table(report: AuditReport, chance: dict[str, tuple[int, int]]) -> list[dict]:
    rows = []
    by_class: dict[str, list[dict]] = {}
    for sample in report.samples:
        by_class.setdefault(sample["model"], []).append(sample)
    for name in EXPECTED:
        samples = by_class.get(name, [])
        n = len(samples)
        tiers = Counter(s["evidence_tier"] for s in samples)
        cloned = sum(1 for s in samples if s["clone_type"] is not None)
        flagged = sum(1 for s in samples if s["clone_type"] is not None or s["trivial_type"])
        hits, compared, pair_hits, pairs = chance.get(name, (0, 0, 0, 0))
        rows.append({
            "class": name, "expected": EXPECTED[name], "samples": n,
            "clone_rate": cloned / n if n else 0.0,
            "flagged_rate": flagged / n if n else 0.0,
            "evidence_rate": tiers[EVIDENCE] / n if n else 0.0,
            "similar_rate": tiers[SIMILAR] / n if n else 0.0,
            "uninformative": tiers["uninformative"],
            "chance_any_other_task": hits / compared if compared else 0.0,
            "chance_per_canonical": pair_hits / pairs if pairs else 0.0,
        })  # fmt: skip
    return rows


def sweep(samples, verdicts, canonicals, settings) -> list[dict]:
    """Evidence rate per class for other values of each threshold (the chance pool and
    reference features do not depend on the rule: computed once)."""
    view = StreamedEvidence(canonicals, settings, samples)
    rows = []
    for name, values in SWEEPS.items():
        for value in values:
            view.rule = replace(DEFAULT_RULE, **{name: value})
            counts: dict[str, list[int]] = {}
            for sample in samples:
                tier = view.assess(sample.task_id, verdicts[sample.id]).tier
                row = counts.setdefault(sample.model, [0, 0])
                row[0] += int(tier == EVIDENCE)
                row[1] += 1
            rates = {model: hits / total for model, (hits, total) in counts.items()}
            rows.append({"threshold": name, "value": value, **rates})
    return rows


def calibrate(profile: str, check: bool, seed: int) -> dict:
    benchmark = load_benchmark("humaneval")
    corpus = build_corpus(seed)
    config = DetectorConfig(profile=get_profile(profile))
    settings = DetectionSettings(config)
    with tempfile.TemporaryDirectory() as folder, SampleStore(Path(folder) / "c.sqlite") as store:
        samples = store_corpus(store, corpus)
        selection = SampleSelection(store)
        if check:
            execute(store, benchmark, selection, ExecutionSettings(), SilentReporter())
        report = detect_and_report(store, benchmark, settings, selection, SilentReporter())
        chance = cross_task_chance(store, benchmark, config, samples)
        verdicts = DetectionStore(store.db).verdicts(settings.key)
        figures = {
            "profile": profile,
            "seed": seed,
            "rule": DEFAULT_RULE.as_dict(),
            "classes": class_table(report, chance),
            "uninformative_tasks": [t["task_id"] for t in report.uninformative_tasks],
            "sweep": sweep(samples, verdicts, CanonicalFragments(benchmark), settings),
        }
        if check:
            passed = {g["model"]: g["correctness"] for g in report.groups}
            for row in figures["classes"]:
                c = passed.get(row["class"])
                row["tests_passed"] = f"{c['passed']}/{c['samples']}" if c else "-"
            figures["tests_failed"] = {
                name: sorted(s["task_id"] for s in report.samples
                             if s["model"] == name and s.get("passed") is False)
                for name in EXPECTED
                if name != "stub"
            }  # fmt: skip
        figures["missed"] = {
            name: sorted(
                s["task_id"] for s in report.samples
                if s["model"] == name and s["evidence_tier"] != EVIDENCE
            )
            for name in ("memorized-verbatim", "memorized-layout")
        }  # fmt: skip
        figures["false_evidence"] = {
            name: sorted(
                s["task_id"] for s in report.samples
                if s["model"] == name and s["evidence_tier"] == EVIDENCE
            )
            for name in ("convergent", "handwritten", "stub")
        }  # fmt: skip
    return figures


def print_figures(figures: dict) -> None:
    print(f"evidence calibration, profile {figures['profile']}, seed {figures['seed']}")
    print(f"rule: {figures['rule']}")
    header = (f"{'class':20} {'expected':14} {'samples':>7} {'clone':>7} {'+trivial':>8} "
              f"{'evidence':>9} "
              f"{'similar':>8} {'chance/canonical':>16} {'any other task':>14}")  # fmt: skip
    check = any("tests_passed" in r for r in figures["classes"])
    print(header + ("  tests passed" if check else ""))
    for r in figures["classes"]:
        line = (
            f"{r['class']:20} {r['expected']:14} {r['samples']:7d} {r['clone_rate']:7.1%} "
            f"{r['flagged_rate']:8.1%} {r['evidence_rate']:9.1%} {r['similar_rate']:8.1%} "
            f"{r['chance_per_canonical']:16.2%} {r['chance_any_other_task']:14.1%}"
        )
        print(line + (f"  {r['tests_passed']}" if check else ""))
    print(f"uninformative tasks (left out of the rates' numerators): "
          f"{', '.join(figures['uninformative_tasks']) or 'none'}")  # fmt: skip
    for name, tasks in figures["missed"].items():
        print(f"{name} not evidence ({len(tasks)}): {', '.join(tasks)}")
    for name, tasks in figures.get("tests_failed", {}).items():
        print(f"{name} failing its tests ({len(tasks)}): {', '.join(tasks) or '-'}")
    for name, tasks in figures["false_evidence"].items():
        print(f"{name} tiered evidence ({len(tasks)}): {', '.join(tasks) or '-'}")
    print("\nsweep: evidence rate per class, one threshold varied, the others at their defaults")
    classes = [r["class"] for r in figures["classes"]]
    print(f"{'threshold':24} {'value':>6} " + " ".join(f"{c[:12]:>12}" for c in classes))
    for row in figures["sweep"]:
        print(f"{row['threshold']:24} {row['value']:6g} "
              + " ".join(f"{row.get(c, 0):12.1%}" for c in classes))  # fmt: skip


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="default", choices=sorted(PROFILES))
    parser.add_argument("--check", action="store_true", help="run every sample's tests too")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = calibrate(args.profile, args.check, args.seed)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print_figures(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
