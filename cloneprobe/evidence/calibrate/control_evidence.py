"""Calibrate the evidence rule on a model contaminated on purpose (`cloneprobe control`).

`python -m cloneprobe.evidence.calibrate.known_answers` calibrates on constructed samples; this
script reads the real
samples of a positive control: the base model and every fine-tuned dose, each audited on the
same tasks, with the secret split into a contaminated and a held-out half. It runs the audit's
own detection and evidence view on the control's store (a copy: the control's folder is not
written) and prints, per dose and half: samples, clone rate (any non-trivial clone of the own
canonical), evidence rate, similar-solution rate, and the tasks with at least one evidence
sample. Evidence on the held-out half or from the base model is a false alarm; evidence on the
contaminated half of a dose is what the rule should catch. Then the sweep of the rule's size
thresholds (as in known_answers.py) on these samples.

    cloneprobe control --output runs/control            # or any earlier control folder
    python -m cloneprobe.evidence.calibrate.control_evidence runs/control [--profile nicad] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.audit.detection import CanonicalFragments, DetectionSettings, DetectionStore
from cloneprobe.benchmarks import load_benchmark
from cloneprobe.clones import PROFILES, DetectorConfig, get_profile
from cloneprobe.evidence.calibrate.known_answers import sweep
from cloneprobe.evidence.tiers import DEFAULT_RULE, EVIDENCE, SIMILAR
from cloneprobe.generation import SampleStore
from cloneprobe.generation.selection import SampleSelection
from cloneprobe.pipeline import SilentReporter, detect_and_report


def group_of(model: str, task_id: str, contaminated: set[str]) -> str:
    """`dose/half` of a control sample (model labels are `control:<dose>:<tag>`)."""
    dose = model.split(":")[1] if model.startswith("control:") else model
    return f"{dose}/{'contaminated' if task_id in contaminated else 'held-out'}"


def rates(report: AuditReport, contaminated: set[str]) -> list[dict]:
    grouped: dict[str, list[dict]] = {}
    for sample in report.samples:
        grouped.setdefault(group_of(sample["model"], sample["task_id"], contaminated), []).append(
            sample
        )
    rows = []
    for name in sorted(grouped):
        samples = grouped[name]
        n = len(samples)
        tiers = Counter(s["evidence_tier"] for s in samples)
        rows.append({
            "group": name, "samples": n, "tasks": len({s["task_id"] for s in samples}),
            "clone_rate": sum(s["clone_type"] is not None for s in samples) / n,
            "evidence_rate": tiers[EVIDENCE] / n,
            "similar_rate": tiers[SIMILAR] / n,
            "tasks_with_clone": len({s["task_id"] for s in samples if s["clone_type"] is not None}),
            "tasks_with_evidence": sorted({s["task_id"] for s in samples
                                           if s["evidence_tier"] == EVIDENCE}),
        })  # fmt: skip
    return rows


def calibrate(folder: Path, profile: str) -> dict:
    from cloneprobe.control.saved import load_control

    control = load_control(folder, option="")
    contaminated = set(control["split"]["contaminated"])
    benchmark = load_benchmark(control["settings"]["benchmark"])
    settings = DetectionSettings(DetectorConfig(profile=get_profile(profile)))
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "control.sqlite"
        shutil.copyfile(folder / "control.sqlite", copy)
        with SampleStore(copy) as store:
            report = detect_and_report(
                store, benchmark, settings, SampleSelection(store), SilentReporter()
            )
            verdicts = DetectionStore(store.db).verdicts(settings.key)
            samples = [
                replace(s, model=group_of(s.model, s.task_id, contaminated))
                for s in store.samples()
                if s.id in verdicts
            ]
            swept = sweep(samples, verdicts, CanonicalFragments(benchmark), settings)
    return {
        "control": str(folder),
        "profile": profile,
        "settings": control["settings"],
        "rule": DEFAULT_RULE.as_dict(),
        "groups": rates(report, contaminated),
        "sweep": swept,
    }


def print_figures(figures: dict) -> None:
    s = figures["settings"]
    print(f"control {figures['control']}: {s['tasks']} tasks, n={s['n']}, T={s['temperature']}, "
          f"doses {s['doses']}, profile {figures['profile']}")  # fmt: skip
    print("| dose/half | samples | tasks | clone | **evidence** | similar | tasks with clone | "
          "tasks with evidence |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for g in figures["groups"]:
        print(f"| {g['group']} | {g['samples']} | {g['tasks']} | {g['clone_rate']:.1%} | "
              f"**{g['evidence_rate']:.1%}** | {g['similar_rate']:.1%} | {g['tasks_with_clone']} | "
              f"{len(g['tasks_with_evidence'])} |")  # fmt: skip
    print("\nsweep (evidence rate per dose/half, each threshold alone):")
    for row in figures["sweep"]:
        cells = ", ".join(
            f"{k} {v:.1%}" for k, v in row.items() if k not in ("threshold", "value")
        )
        print(f"  {row['threshold']}={row['value']}: {cells}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("control", type=Path, help="a `cloneprobe control --output` folder")
    parser.add_argument("--profile", default="default", choices=sorted(PROFILES))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    for name in ("control.json", "control.sqlite"):
        if not (args.control / name).is_file():
            parser.error(f"{args.control / name}: missing; give a `cloneprobe control` folder")
    figures = calibrate(args.control, args.profile)
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        print_figures(figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
