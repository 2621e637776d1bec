"""Calibrate the per-task memorization verdict (cloneprobe/evidence/verdict.py) on a positive
control.

Reads a finished `cloneprobe control` folder (control.json; when it predates control.json's
`tasks`, the per-task rows are rebuilt from control.sqlite's samples and stored scores, no
model loaded), then:

1. per likelihood signal, relative to the base model (the control's reference model): the
   margin the rule derives (the largest relative score of any held-out task under any dose,
   rounded up at its second significant digit: no held-out task flagged), and its rates: in
   sample, and cross-fitted (tasks split in `--folds` seeded folds within each half; each
   fold judged with the margin derived from the other folds' held-out tasks);
2. the combined verdict with `--signal` at its derived margin: verdict counts per model and
   half, the false-positive rate on held-out tasks (per dose) and on the base model (every
   task: it was fine-tuned on none), and the true-positive rate on contaminated tasks per
   dose, each with a 95% Wilson interval, cross-fitted and in sample.

    python -m cloneprobe.evidence.calibrate.verdict cloneprobe-control/
    python -m cloneprobe.evidence.calibrate.verdict cloneprobe-control/ --signal perplexity --json
    python -m cloneprobe.evidence.calibrate.verdict cloneprobe-control/ \
        --write cloneprobe/evidence/verdict_calibration.json
    python -m cloneprobe.evidence.calibrate.verdict other-control/ --validate  # shipped rule
    python -m cloneprobe.evidence.calibrate.verdict other/ --validate \
        --write cloneprobe/evidence/verdict_calibration.json

With `--validate` nothing is derived: the shipped rule (cloneprobe.evidence.verdict's default)
judges every task of the given control, so a control run with another seed (another split, other
fine-tuned models) measures the rule's error rates out of sample.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from datetime import datetime, timezone
from pathlib import Path

from cloneprobe.atomic import write_atomically
from cloneprobe.audit.stats import wilson_interval
from cloneprobe.evidence.verdict import (
    DEFAULT_VERDICT_RULE,
    FLAGGED,
    MEMORIZED,
    VERDICTS,
    VerdictRule,
    calibration_key,
    evidence_key,
    stale_settings,
    task_verdict,
)
from cloneprobe.signals.registry import LIKELIHOOD_SIGNALS

LIKELIHOOD = LIKELIHOOD_SIGNALS


def judged_control(folder: Path) -> dict:
    """The control's per-task rows, judged under today's settings (`evidence_key`): rows
    that control.json recorded under other settings, or without saying which, are judged again
    from the control's store, so that what is written is this code's error rates."""
    from cloneprobe.control.saved import load_control

    control = load_control(folder, option="")
    if control.get("tasks") and control.get("evidence_key") == evidence_key():
        return control
    from cloneprobe.control.audit import reaudit_control

    why = "no per-task rows" if not control.get("tasks") else "rows judged under other settings"
    print(f"{folder}/control.json has {why}: judged again from control.sqlite", file=sys.stderr)
    return reaudit_control(folder)


def relative(row: dict, signal: str) -> float | None:
    return ((row.get("relative") or {}).get("reference") or {}).get(signal)


def derive_margin(rows_by_dose: dict[str, list[dict]], signal: str, tasks: set[str]) -> float:
    """Just above the largest relative score of a held-out task (in `tasks`) under any dose:
    rounded up at its second significant digit (0.53 -> 0.54, 0.0031 -> 0.0032), and at
    least 0."""
    values = [relative(r, signal) for rows in rows_by_dose.values() for r in rows
              if r["half"] == "held_out" and r["task_id"] in tasks]  # fmt: skip
    values = [v for v in values if v is not None]
    if not values:
        return math.inf
    top = max(values)
    if top <= 0:
        return 0.0
    step = 10 ** (math.floor(math.log10(top)) - 1)
    return round((math.floor(top / step + 1e-9) + 1) * step, 12)


def verdict_of(row: dict, rule: VerdictRule) -> str:
    """The row's verdict under `rule`, its clone evidence judged by the same-task convergence
    null the control's audit measured (as the reports judge it)."""
    if row.get("disguise_leak"):  # a disguised-prompt sample wrote the original names
        return MEMORIZED
    return task_verdict(row["clone_tier"], row["informative"], row["relative"], rule,
                        row.get("clone_reasons") or (),
                        convergence=row.get("convergence")).verdict  # fmt: skip


def folds_of(control: dict, folds: int, seed: int) -> list[set[str]]:
    """Tasks in `folds` seeded folds, each half dealt round-robin after a shuffle."""
    draw = random.Random(seed)
    out: list[set[str]] = [set() for _ in range(folds)]
    for half in ("contaminated", "held_out"):
        ids = list(control["split"][half])
        draw.shuffle(ids)
        for number, task_id in enumerate(ids):
            out[number % folds].add(task_id)
    return out


def rate(flagged: int, total: int) -> dict:
    low, high = wilson_interval(flagged, total)
    return {"flagged": flagged, "tasks": total, "rate": flagged / total if total else None,
            "ci95": [low, high]}  # fmt: skip


def judge(control: dict, signal: str, margins: dict[str, float]) -> dict:
    """Per model and half: verdict counts and the flagged rate, each task judged with the
    margin of its fold (`margins`: task id -> margin)."""
    out = {}
    for model, rows in control["tasks"].items():
        per_half = {}
        for half in ("contaminated", "held_out"):
            members = [r for r in rows if r["half"] == half]
            verdicts = [verdict_of(r, VerdictRule(signal, margins[r["task_id"]]))
                        for r in members]  # fmt: skip
            per_half[half] = {**rate(sum(v in FLAGGED for v in verdicts), len(verdicts)),
                              "verdicts": {v: verdicts.count(v) for v in VERDICTS}}  # fmt: skip
        out[model] = per_half
    return out


def error_rates(judged: dict) -> dict:
    """FPR on held-out tasks per dose and on every task of the base model; TPR per dose."""
    rates: dict = {"fpr_held_out": {}, "tpr_contaminated": {}}
    for model, halves in judged.items():
        if model == "base":
            flagged = halves["contaminated"]["flagged"] + halves["held_out"]["flagged"]
            total = halves["contaminated"]["tasks"] + halves["held_out"]["tasks"]
            rates["fpr_base"] = rate(flagged, total)
            continue
        rates["fpr_held_out"][model] = rate(halves["held_out"]["flagged"],
                                            halves["held_out"]["tasks"])  # fmt: skip
        rates["tpr_contaminated"][model] = rate(halves["contaminated"]["flagged"],
                                                halves["contaminated"]["tasks"])  # fmt: skip
    return rates


def calibrate(control: dict, signal: str, folds: int, seed: int) -> dict:
    doses = {m: rows for m, rows in control["tasks"].items() if m != "base"}
    every = {r["task_id"] for rows in control["tasks"].values() for r in rows}
    result: dict = {"signals": {}}
    fold_sets = folds_of(control, folds, seed)
    for name in LIKELIHOOD:
        margin = derive_margin(doses, name, every)
        crossed = {}
        for fold in fold_sets:
            fold_margin = derive_margin(doses, name, every - fold)
            crossed |= dict.fromkeys(fold, fold_margin)
        result["signals"][name] = {
            "margin": margin,
            "in_sample": error_rates(judge(control, name, dict.fromkeys(every, margin))),
            "cross_fitted": error_rates(judge(control, name, crossed)),
            "fold_margins": sorted({crossed[t] for t in every}),
        }
    chosen = result["signals"][signal]
    margin = chosen["margin"]
    crossed = {}
    for fold in fold_sets:
        crossed |= dict.fromkeys(fold, derive_margin(doses, signal, every - fold))
    result["verdict"] = {
        "rule": VerdictRule(signal, margin).as_dict(),
        "in_sample": judge(control, signal, dict.fromkeys(every, margin)),
        "cross_fitted": judge(control, signal, crossed),
    }
    result["error_rates"] = {"in_sample": chosen["in_sample"],
                             "cross_fitted": chosen["cross_fitted"]}  # fmt: skip
    return result


def _pct(r: dict) -> str:
    if r["rate"] is None:
        return "n/a"
    return (
        f"{r['flagged']}/{r['tasks']} = {100 * r['rate']:.0f}% [{100 * r['ci95'][0]:.0f}, "
        f"{100 * r['ci95'][1]:.0f}]"
    )


def print_result(result: dict, control: dict, folds: int) -> None:
    s = control["settings"]
    print(
        f"control: {s.get('base_model', s['model'])}, {s['tasks']} tasks (seed {s['seed']}), "
        f"doses {s['doses']}, n={s['n']} at T={s['temperature']}, {s['mode']} mode"
    )
    print("\nper likelihood signal, relative to the base model (margin: above every held-out "
          f"task; cross-fitted over {folds} folds):")  # fmt: skip
    for name, r in result["signals"].items():
        for view in ("in_sample", "cross_fitted"):
            e = r[view]
            tpr = "; ".join(f"{d} {_pct(v)}" for d, v in e["tpr_contaminated"].items())
            fpr = "; ".join(f"{d} {_pct(v)}" for d, v in e["fpr_held_out"].items())
            margin = r["margin"] if view == "in_sample" else r["fold_margins"]
            print(f"  {name:16s} {view:12s} margin {margin}: TPR {tpr} | FPR held out {fpr}")
    verdict = result["verdict"]
    print(f"\ncombined verdict, rule {verdict['rule']}:")
    for view in ("in_sample", "cross_fitted"):
        print(f"  {view}:")
        for model, halves in verdict[view].items():
            for half, h in halves.items():
                counts = ", ".join(f"{k} {v}" for k, v in h["verdicts"].items() if v)
                print(f"    {model:6s} {half:12s} flagged {_pct(h)} ({counts})")
        e = result["error_rates"][view]
        print(f"    FPR base (every task): {_pct(e['fpr_base'])}")
        for d in e["fpr_held_out"]:
            print(
                f"    {d}: FPR held out {_pct(e['fpr_held_out'][d])}; "
                f"TPR contaminated {_pct(e['tpr_contaminated'][d])}"
            )


def control_summary(settings: dict) -> dict:
    return {k: settings.get(k) for k in ("model", "base_model", "seed", "limit", "n",
                                         "temperature", "max_new_tokens", "mode", "doses",
                                         "tasks")}  # fmt: skip


def validate(control: dict, as_json: bool, write: Path | None, folder: Path) -> None:
    """The shipped rule's verdicts and error rates on this control; with `write`, recorded
    as the calibration file's `validation` (the file's rule must be the shipped one)."""
    rule = DEFAULT_VERDICT_RULE
    every = {r["task_id"] for rows in control["tasks"].values() for r in rows}
    judged = judge(control, rule.likelihood_signal, dict.fromkeys(every, rule.reference_margin))
    rates = error_rates(judged)
    if as_json:
        print(json.dumps({"rule": rule.as_dict(), "verdicts": judged, "error_rates": rates},
                         indent=1))  # fmt: skip
        return
    s = control["settings"]
    print(
        f"control: {s.get('base_model', s['model'])}, {s['tasks']} tasks (seed {s['seed']}), "
        f"doses {s['doses']}, n={s['n']} at T={s['temperature']}, {s['mode']} mode"
    )
    print(
        f"shipped rule {rule.as_dict()} (out of sample unless this is the control it was "
        "derived on):"
    )
    for model, halves in judged.items():
        for half, h in halves.items():
            counts = ", ".join(f"{k} {v}" for k, v in h["verdicts"].items() if v)
            print(f"  {model:6s} {half:12s} flagged {_pct(h)} ({counts})")
    print(f"  FPR base (every task): {_pct(rates['fpr_base'])}")
    for d in rates["fpr_held_out"]:
        print(
            f"  {d}: FPR held out {_pct(rates['fpr_held_out'][d])}; "
            f"TPR contaminated {_pct(rates['tpr_contaminated'][d])}"
        )
    if write:
        calibration = json.loads(write.read_text(encoding="utf-8"))
        if calibration.get("key") != calibration_key(rule):
            raise SystemExit(f"{write}: it was derived under other settings than today's "
                             f"({'; '.join(stale_settings(calibration, calibration_key(rule)))})"
                             "; derive it again first (without --validate)")  # fmt: skip
        calibration["validation"] = {
            "measured": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
            "control": control_summary(s),
            "command": f"cloneprobe control --limit {s.get('limit')} -n {s['n']} --seed "
                       f"{s['seed']} --max-new-tokens {s['max_new_tokens']} --output DIR; "
                       "python -m cloneprobe.evidence.calibrate.verdict DIR --validate",
            "error_rates": rates,
        }  # fmt: skip
        write_atomically(write, json.dumps(calibration, indent=1) + "\n")
        print(f"written: {write} (validation on {folder})", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("control", type=Path, help="a cloneprobe control --output folder")
    parser.add_argument("--signal", default=VerdictRule().likelihood_signal, choices=LIKELIHOOD)
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--validate",
        action="store_true",
        help="judge with the shipped rule instead of deriving one",
    )
    parser.add_argument(
        "--write",
        type=Path,
        help="write the calibration (rule and measured "
        "rates) to this JSON file, e.g. cloneprobe/evidence/verdict_calibration.json",
    )
    args = parser.parse_args()
    control = judged_control(args.control)
    if args.validate:
        validate(control, args.json, args.write, args.control)
        return
    result = calibrate(control, args.signal, args.folds, args.seed)
    result["control"] = {"folder": str(args.control), "settings": control["settings"],
                         "measured": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
                         "folds": args.folds, "seed": args.seed}  # fmt: skip
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print_result(result, control, args.folds)
    if args.write:
        s = control["settings"]
        written = {
            "key": calibration_key(VerdictRule(**result["verdict"]["rule"])),
            "rule": result["verdict"]["rule"],
            "measured": result["control"]["measured"],
            "control": control_summary(s),
            "command": f"cloneprobe control --limit {s.get('limit')} -n {s['n']} --seed {s['seed']}"
                       f" --max-new-tokens {s['max_new_tokens']} --output DIR; "
                       "python -m cloneprobe.evidence.calibrate.verdict DIR"
                       f" --signal {args.signal} --folds {args.folds}"
                       f" --seed {args.seed}",
            "error_rates": result["error_rates"],
        }  # fmt: skip
        write_atomically(args.write, json.dumps(written, indent=1) + "\n")
        print(f"written: {args.write}", file=sys.stderr)


if __name__ == "__main__":
    main()
