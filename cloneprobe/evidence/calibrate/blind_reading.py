"""A blind reading of the memorized verdicts: pairs shuffled without the tool's verdict, judged
by a person, then joined with the key.

    python -m cloneprobe.evidence.calibrate.blind_reading pairs OUT.jsonl KEY.json \
        [--mirrors DIR] [--control CONTROL_DIR [--dose heavy]] [--seed 21]
    python -m cloneprobe.evidence.calibrate.blind_reading join KEY.json JUDGED.jsonl

`pairs` writes one pair per (model, task with candidate evidence): the canonical and the model's
closest evidence sample, lines as the detector compared them, with the task id and nothing
else, shuffled; the key (kept apart from the reader) names the model, its origin and the tool's
verdict. Sources: the published sample files of `panel/sources.json` (`--mirrors`, each
detected alone as `convergence_check` does) and a positive control's fine-tuned model
(`--control`, the dose's samples detected from a copy of the control's store, its own family
named so that no other model of the control vouches for it). Sample text goes where OUT says,
never into the repository.

`join` reads the reader's judgements (JSONL: `{"pair": N, "memorized": true|false}`, one per
pair: true when a competent solver of the task would not write this code without having seen
the canonical) and prints, per origin, how many of the tool's memorized verdicts the reader
accepts (the precision the issue's target asks for) and how many pairs the reader calls
memorized that the tool does not.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from cloneprobe.evidence.panel.figures import SOURCES_FILE

from .convergence_check import audit_source, blind_pairs, write_blind


def published_pairs(mirrors: Path, folder: Path) -> list[dict]:
    pairs = []
    for source in json.loads(SOURCES_FILE.read_text())["sources"]:
        report = audit_source(mirrors, source, folder)
        pairs += [{**p, "origin": f"published ({source['role']})"}
                  for p in blind_pairs(report, source["id"])]  # fmt: skip
    return pairs


def control_pairs(control: Path, dose: str, folder: Path) -> list[dict]:
    from cloneprobe.audit.detection import DetectionSettings
    from cloneprobe.clones import DetectorConfig
    from cloneprobe.control.saved import load_control
    from cloneprobe.pipeline import SilentReporter, report_on_source
    from cloneprobe.settings import SampleSource

    settings = load_control(control, option="--control")["settings"]
    label = f"control:{dose}:{settings['tag']}"
    store = folder / "control.sqlite"
    shutil.copyfile(control / "control.sqlite", store)
    source = SampleSource(store=store, models=(label,), prompt_sets=("original",))
    detection = DetectionSettings(DetectorConfig(), families=((label, "control-model"),))
    report = report_on_source(source, detection, SilentReporter()).as_dict()
    return [{**p, "origin": f"control ({dose})"} for p in blind_pairs(report, label)]


def write_pairs(args) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        pairs = published_pairs(args.mirrors, folder) if args.mirrors else []
        if args.control:
            pairs += control_pairs(args.control, args.dose, folder)
    write_blind(pairs, args.out, args.key, args.seed)
    tool = sum(p["memorized"] for p in pairs)
    print(f"{len(pairs)} pairs ({tool} memorized by the tool) written to {args.out}; "
          f"the key: {args.key}")  # fmt: skip
    return 0


def join(args) -> int:
    key = {row["pair"]: row for row in json.loads(args.key.read_text())}
    judged = {}
    for number, text in enumerate(args.judged.read_text().splitlines(), 1):
        if text.strip():
            row = json.loads(text)
            if row.get("pair") not in key or not isinstance(row.get("memorized"), bool):
                raise SystemExit(f"{args.judged}:{number}: give {{\"pair\": N, \"memorized\": "
                                 "true|false}} for a pair of the key")  # fmt: skip
            judged[row["pair"]] = row["memorized"]
    missing = sorted(set(key) - set(judged))
    if missing:
        raise SystemExit(f"{args.judged}: pairs {missing[:10]} are not judged; judge every pair")
    origins = sorted({row["origin"] for row in key.values()})
    for origin in [*origins, "all"]:
        rows = [r for r in key.values() if origin in ("all", r["origin"])]
        tool = [r for r in rows if r["memorized"]]
        accepted = sum(judged[r["pair"]] for r in tool)
        missed = [r for r in rows if not r["memorized"] and judged[r["pair"]]]
        print(f"{origin}: {len(rows)} pairs; the tool's memorized verdicts {len(tool)}, "
              f"accepted by the reader {accepted}"
              f"{f' ({accepted / len(tool):.0%})' if tool else ''}; called memorized by the "
              f"reader only: {len(missed)}"
              f"{' (' + ', '.join(r['task_id'] for r in missed) + ')' if missed else ''}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    pairs = commands.add_parser("pairs", help="Write shuffled pairs and their key.")
    pairs.add_argument("out", type=Path)
    pairs.add_argument("key", type=Path)
    pairs.add_argument("--mirrors", type=Path, help="Git mirrors of panel/sources.json.")
    pairs.add_argument("--control", type=Path, help="A finished `cloneprobe control` folder.")
    pairs.add_argument("--dose", default="heavy", help="The control's dose (default heavy).")
    pairs.add_argument("--seed", type=int, default=21)
    joined = commands.add_parser("join", help="Join the reader's judgements with the key.")
    joined.add_argument("key", type=Path)
    joined.add_argument("judged", type=Path)
    args = parser.parse_args(argv)
    if args.command == "pairs":
        if not args.mirrors and not args.control:
            parser.error("give --mirrors, --control or both: where the pairs come from")
        return write_pairs(args)
    return join(args)


if __name__ == "__main__":
    sys.exit(main())
