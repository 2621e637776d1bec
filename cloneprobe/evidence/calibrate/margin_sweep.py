"""How the convergence margin trades the positive control's catches against false claims on
published sample files: the memorized verdicts at each margin, on both.

    python -m cloneprobe.evidence.calibrate.margin_sweep --mirrors DIR --control CONTROL_DIR \
        [--margins 0,0.05,0.1,0.15,0.2,0.3] [--json]

`ConvergenceRule.margin` (cloneprobe/evidence/panel/convergence.py) says how much closer to the
canonical than an independent solver's code a sample must be before the independent solver no
longer "reaches" it. It was set to 0.15 after a blind reading of one pair (phi-1's Heron formula
for HumanEval/71), so this script shows what every other value would have given:

- **published files** (`--mirrors`: the git mirrors of every source in `panel/sources.json`, as
  `panel.build` reads them): each model's file is detected alone, the shipped panel (less its
  own family) as the only null, as `convergence_check` does. Per margin: the memorized tasks,
  and how many of them another family writes at least as close on either measure (strict:
  margin 0, the same code up to renaming) or within the default margin;
- **the positive control** (`--control`: a finished `cloneprobe control` folder): its samples
  judged again from its store under each margin (`control.audit.reaudit_control`, no model
  loaded): memorized tasks of each dose on the contaminated and held-out halves, and the tasks
  flagged (memorized or suspected).

Nothing here changes the shipped rule; the figures go to docs/evidence-convergence.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from cloneprobe.evidence.panel.convergence import DEFAULT_CONVERGENCE, ConvergenceRule
from cloneprobe.evidence.panel.figures import SOURCES_FILE

from .convergence_check import all_figures, source_file, violations

DEFAULT_MARGINS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)


def published_memorized(files: dict[str, tuple[dict, Path]], folder: Path,
                        rule: ConvergenceRule) -> dict[str, dict]:  # fmt: skip
    """Per source id: {task_id: (verbatim, structure) of the memorized evidence}."""
    from cloneprobe.audit.detection import DetectionSettings
    from cloneprobe.clones import DetectorConfig
    from cloneprobe.pipeline import SilentReporter, report_on_source
    from cloneprobe.settings import SampleSource

    found = {}
    for source_id, (source, path) in files.items():
        settings = DetectionSettings(DetectorConfig(), convergence=rule,
                                     families=((source_id, source["family"]),))  # fmt: skip
        where = SampleSource(store=folder / f"{source_id}.sqlite", files=(path,),
                             model=source_id, temperature=0.2)  # fmt: skip
        report = report_on_source(where, settings, SilentReporter())
        group = next(g for g in report.groups if g["model"] == source_id)
        found[source_id] = {
            task_id: (null["target"]["verbatim"], null["target"]["structure"])
            for task_id, null in (group.get("convergence") or {}).items() if null["memorized"]
        }  # fmt: skip
    return found


def control_counts(folder: Path, rule: ConvergenceRule) -> dict[str, dict]:
    """Per dose and half: tasks, memorized, flagged (memorized or suspected)."""
    from cloneprobe.control.audit import reaudit_control

    judged = reaudit_control(folder, convergence=rule)
    return {
        dose: {half: {"tasks": row["tasks"], "memorized": row["verdicts"]["memorized"],
                      "flagged": row["flagged"]}
               for half, row in halves.items()}
        for dose, halves in judged["verdicts"].items()
    }  # fmt: skip


def sweep(mirrors: Path | None, control: Path | None, margins) -> list[dict]:
    sources = json.loads(SOURCES_FILE.read_text())["sources"] if mirrors else []
    figures = all_figures(None) if mirrors else {}
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        files = {s["id"]: (s, source_file(mirrors, s, folder)) for s in sources} if mirrors else {}
        for margin in margins:
            rule = ConvergenceRule(margin=margin)
            row: dict = {"margin": margin}
            if files:
                memorized = published_memorized(files, folder, rule)
                strict = default = 0
                for source_id, tasks in memorized.items():
                    family = files[source_id][0]["family"]
                    for task_id, target in tasks.items():
                        strict += bool(violations(source_id, family, task_id, target, figures, 0.0))
                        default += bool(violations(source_id, family, task_id, target, figures))
                row["published"] = {
                    "memorized": sum(len(t) for t in memorized.values()),
                    "models_with_memorized": sum(bool(t) for t in memorized.values()),
                    "tasks": {m: sorted(t) for m, t in memorized.items() if t},
                    "written_as_close_by_another_family": strict,
                    f"within_{DEFAULT_CONVERGENCE.margin:g}_of_another_family": default,
                }  # fmt: skip
            if control:
                row["control"] = control_counts(control, rule)
            rows.append(row)
            print(line(row), file=sys.stderr, flush=True)
    return rows


def line(row: dict) -> str:
    parts = [f"margin {row['margin']:.2f}"]
    published = row.get("published")
    if published:
        parts.append(f"published: {published['memorized']} memorized "
                     f"({published['models_with_memorized']} models), "
                     f"{published['written_as_close_by_another_family']} written as close by "
                     "another family")  # fmt: skip
    for dose, halves in (row.get("control") or {}).items():
        c, h = halves["contaminated"], halves["held_out"]
        parts.append(f"{dose}: memorized {c['memorized']}/{c['tasks']} vs "
                     f"{h['memorized']}/{h['tasks']} held out, flagged {c['flagged']} vs "
                     f"{h['flagged']}")  # fmt: skip
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, help="Git mirrors of panel/sources.json.")
    parser.add_argument("--control", type=Path, help="A finished `cloneprobe control` folder.")
    parser.add_argument("--margins", default=",".join(f"{m:g}" for m in DEFAULT_MARGINS))
    parser.add_argument("--json", action="store_true", help="Print the rows as JSON.")
    args = parser.parse_args(argv)
    if not args.mirrors and not args.control:
        parser.error("give --mirrors, --control or both: what to judge at each margin")
    try:
        margins = [float(m) for m in args.margins.split(",") if m.strip()]
    except ValueError:
        parser.error(f"--margins {args.margins!r}: give numbers separated by commas, "
                     "e.g. 0,0.1,0.15")  # fmt: skip
    rows = sweep(args.mirrors, args.control, margins)
    print(json.dumps(rows, indent=1) if args.json else "\n".join(line(r) for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
