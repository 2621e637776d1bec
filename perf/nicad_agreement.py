"""How well the `nicad` profile agrees with real NiCad on NiCad's own inputs.

The reference study (Siddiq et al., SCAM 2024) published NiCad 6's cross-clone XML per clone
type: `<clone>` elements holding two `<source file= startline= endline=>`, one from the
canonical system (`Original_Files`) and one from the samples (`Files`), and a `<systeminfo>`
header recording NiCad's settings (granularity with its renaming, threshold, minlines,
maxlines). This script reruns cloneprobe's `nicad` profile with exactly those settings on the
same inputs and compares pair by pair.

Inputs, two ways:

* `--systems DIR`: the folder NiCad ran on, holding `Original_Files/` and `Files/` (the study's
  `systems/` folder). Full measure: recall, precision and per-sample agreement over every
  sample file.
* no `--systems`: the sources are read from NiCad's own `*-classes-withsource.xml` beside each
  pairs file (each fragment's original text, placed at its original line numbers). Only the
  fragments NiCad reported are known then, so recall is exact but precision and agreement are
  measured only among those fragments (an upper bound).

Usage:

    python3 perf/nicad_agreement.py XML [XML ...] [--systems DIR] [--show 20]

where each XML is a pairs file (`...-crossclones-0.30.xml`, not the `-classes` ones).

The study's per-task runs on CodeGen-2B-mono (`Code_Clone_Results/Output/<task>/Type-<k>.html`,
NiCad's HTML reports: one run per task and type, the task's own minimum size in the header,
each class listing its fragments with their text) are read with

    python3 perf/nicad_agreement.py --html-dir Output/

which rebuilds each run from the fragments NiCad reported (recall exact, precision among
those fragments) and sums per type. The reports name no renaming: Type-1 is NiCad's `none`,
Type-2 and Type-3 its `blind` (the study's ladder, `clones.LADDER`). A class's pairs are its
canonical fragments times its sample fragments; the count is checked against the report's
"Clone pairs".

The study's data stays outside this repository (fetch it to e.g. /tmp/study).

Measured 2026-11-23 on the study's GPT-3.5 run (s2e-lab/Datasets-Quality,
Code_Clone_Results/GPT-3.5; NiCad 6, functions, minlines 10, maxlines 2500), withsource mode:
Type-1 0 pairs (NiCad found none); Type-2 6/6, Type-2c 6/6, Type-3-1 (no renaming, 30%)
288/288, Type-3-2 (blind) 40/40, Type-3-2c (consistent) 21/21: recall and precision 1.000,
and all 349 Type-3 similarities equal to NiCad's. Type-3-1 needs NiCad's reading of a string
over several rows (a leading `\'\'\'` docstring): a line per row, blank rows none, counted
for size before renaming; before that rule, at most 7 of the 288 were found. And on the
study's per-task reports (`Code_Clone_Results/Output`, the 75 the public index holds, 245
pairs): Type-1 4/4, Type-2 51/51, Type-3 190/190; 6 of those Type-3 pairs (HumanEval/107)
need NiCad's reading of a body that dedents past its first line (a sample whose nested `def`
line is missing), before which Type-3 recall was 0.968.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from cloneprobe.clones import DetectorConfig, SourceFile, clone_type, find_clones, get_profile

CANONICAL_SYSTEM = "Original_Files"
SAMPLE_SYSTEM = "Files"


@dataclass(frozen=True)
class Span:
    file: str  # base name, e.g. "115_P8_5.py"
    start: int
    end: int

    def overlaps(self, other: Span) -> bool:
        return self.file == other.file and self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class Pair:
    canonical: Span
    sample: Span
    similarity: int | None = None


@dataclass(frozen=True)
class NicadRun:
    path: Path
    rename: str
    threshold: float
    min_lines: int
    max_lines: int
    pairs: tuple[Pair, ...]


def _system_of(file_attr: str) -> tuple[str, str]:
    parts = Path(file_attr).parts
    system = parts[-2] if len(parts) >= 2 else ""
    return system, parts[-1]


def parse_pairs(path: Path) -> NicadRun:
    root = ET.parse(path).getroot()
    info = root.find("systeminfo")
    if info is None:
        raise SystemExit(f"{path}: no <systeminfo>; give a NiCad crossclones pairs XML")
    granularity = info.get("granularity", "functions")
    rename = granularity.split("-", 1)[1] if "-" in granularity else "none"
    threshold = float(info.get("threshold", "0%").rstrip("%")) / 100
    pairs = []
    for clone in root.iter("clone"):
        spans = {}
        for src in clone.iter("source"):
            system, name = _system_of(src.get("file", ""))
            spans[system] = Span(name, int(src.get("startline")), int(src.get("endline")))
        if CANONICAL_SYSTEM in spans and SAMPLE_SYSTEM in spans:
            sim = clone.get("similarity")
            pairs.append(
                Pair(spans[CANONICAL_SYSTEM], spans[SAMPLE_SYSTEM], int(sim) if sim else None)
            )
    return NicadRun(
        path,
        rename,
        threshold,
        int(info.get("minlines", "10")),
        int(info.get("maxlines", "2500")),
        tuple(pairs),
    )


def withsource_path(pairs_xml: Path) -> Path:
    return pairs_xml.with_name(pairs_xml.stem + "-classes-withsource.xml")


_SOURCE_RE = re.compile(
    r'<source file="([^"]+)" startline="(\d+)" endline="(\d+)"[^>]*>\n?(.*?)</source>', re.S
)


def systems_from_withsource(path: Path) -> tuple[list[SourceFile], list[SourceFile]]:
    """Each reported fragment as its own file, its text at its original line numbers.

    Regex, not an XML parser: NiCad writes the source text unescaped (`<`, `&` in code)."""
    canon: dict[str, SourceFile] = {}
    samples: dict[str, SourceFile] = {}
    for file_attr, start, _end, text in _SOURCE_RE.findall(path.read_text(encoding="utf-8")):
        system, name = _system_of(file_attr)
        key = f"{name}@{start}"
        body = "\n" * (int(start) - 1) + textwrap.dedent(text)
        target = canon if system == CANONICAL_SYSTEM else samples
        target.setdefault(key, SourceFile(name=key, text=body))
    return list(canon.values()), list(samples.values())


def systems_from_folder(root: Path) -> tuple[list[SourceFile], list[SourceFile]]:
    def load(folder: Path) -> list[SourceFile]:
        return [
            SourceFile(name=p.name, text=p.read_text(encoding="utf-8", errors="replace"))
            for p in sorted(folder.glob("*.py"))
        ]

    return load(root / CANONICAL_SYSTEM), load(root / SAMPLE_SYSTEM)


_HTML_FIELD = r"{}:(?:</b>)?\s*&nbsp;\s*([^<]+)<"
_HTML_FRAGMENT_RE = re.compile(
    r"<a [^>]*>\s*([^<]+?): (\d+)-(\d+)\s*</a>\s*<div [^>]*><pre>\n?(.*?)</pre>", re.S
)
HTML_RENAMING = {"1": "none", "2": "blind", "3": "blind"}


def _html_field(text: str, name: str) -> str:
    match = re.search(_HTML_FIELD.format(re.escape(name)), text)
    if match is None:
        raise SystemExit(f"no '{name}' in this NiCad HTML report")
    return match.group(1).strip()


@dataclass(frozen=True)
class HtmlRun:
    """One NiCad HTML report: its run, the fragments it shows, its own pair count."""

    run: NicadRun
    canon: list[SourceFile]
    samples: list[SourceFile]
    reported_pairs: int


def parse_html(path: Path) -> HtmlRun:
    text = path.read_text(encoding="utf-8")
    kind = _html_field(text, "Clone type")
    threshold = float(_html_field(text, "Max diff threshold").rstrip("%")) / 100
    low, high = re.findall(r"\d+", _html_field(text, "Clone size"))[:2]
    reported = int(_html_field(text, "Clone pairs"))
    canon: dict[str, SourceFile] = {}
    samples: dict[str, SourceFile] = {}
    pairs = []
    for block in text.split("<b>Class ")[1:]:
        spans = {CANONICAL_SYSTEM: [], SAMPLE_SYSTEM: []}
        for file_attr, start, end, body in _HTML_FRAGMENT_RE.findall(block):
            system, name = _system_of(file_attr.strip())
            source = "\n" * (int(start) - 1) + textwrap.dedent(html.unescape(body))
            target = canon if system == CANONICAL_SYSTEM else samples
            target.setdefault(f"{name}@{start}", SourceFile(name=f"{name}@{start}", text=source))
            spans.setdefault(system, []).append(Span(name, int(start), int(end)))
        pairs += [Pair(c, s) for c in spans[CANONICAL_SYSTEM] for s in spans[SAMPLE_SYSTEM]]
    run = NicadRun(
        path, HTML_RENAMING.get(kind, "blind"), threshold, int(low), int(high), tuple(pairs)
    )
    return HtmlRun(run, list(canon.values()), list(samples.values()), reported)


def html_totals(folder: Path, show: int) -> int:
    """Recall per type over every `<task>/Type-<k>.html` under `folder`, summed."""
    totals: dict[str, dict] = {}
    for path in sorted(folder.glob("*/Type-*.html")):
        parsed = parse_html(path)
        kind = path.stem
        empty = {"runs": 0, "nicad": 0, "reported": 0, "ours": 0, "common": 0, "extra": 0}
        total = totals.setdefault(kind, {**empty, "missed": []})
        total["runs"] += 1
        total["reported"] += parsed.reported_pairs
        if not parsed.run.pairs:
            continue
        ours, _ = run_ours(parsed.run, parsed.canon, parsed.samples)
        r = compare(parsed.run, ours, {s.name.split("@")[0] for s in parsed.samples})
        total["nicad"] += r["nicad"]
        total["ours"] += r["ours"]
        total["common"] += r["common"]
        total["extra"] += len(r["extra"])
        total["missed"] += [(path.parent.name, p) for p in r["missed"]]
    print("mode: NiCad HTML reports (recall exact, precision only among reported fragments)")
    print(f"{'type':8} {'runs':>5} {'pairs':>6} {'listed':>6} {'ours':>6} {'common':>6} "
          f"{'recall':>7} {'prec':>6}")  # fmt: skip
    for kind, t in sorted(totals.items()):
        recall = t["common"] / t["nicad"] if t["nicad"] else 1.0
        precision = (t["ours"] - t["extra"]) / t["ours"] if t["ours"] else 1.0
        print(
            f"{kind:8} {t['runs']:5} {t['reported']:6} {t['nicad']:6} {t['ours']:6} "
            f"{t['common']:6} {recall:7.3f} {precision:6.3f}"
        )
    for kind, t in sorted(totals.items()):
        for task, p in t["missed"][:show]:
            print(f"  {kind} NiCad only (task {task}):", _fmt(p))
    return 0


def run_ours(
    run: NicadRun, canon: list[SourceFile], samples: list[SourceFile]
) -> tuple[list[Pair], int]:
    ctype = clone_type(f"nicad-{run.rename}-{run.threshold:.2f}", run.threshold, run.rename)
    config = DetectorConfig(
        profile=get_profile("nicad"),
        types=(ctype,),
        granularity="functions",
        language="python",
        min_lines=run.min_lines,
        max_lines=run.max_lines,
    )
    report = find_clones(canon, samples, config)

    def span(fragment) -> Span:
        return Span(Path(fragment.file).name.split("@")[0], fragment.start_line, fragment.end_line)

    pairs = [Pair(span(p.a), span(p.b), p.similarity) for p in report.pairs]
    return pairs, len(samples)


def same(a: Pair, b: Pair) -> bool:
    return a.canonical.overlaps(b.canonical) and a.sample.overlaps(b.sample)


def compare(run: NicadRun, ours: list[Pair], sample_names: set[str]) -> dict:
    theirs = list(run.pairs)
    matched_theirs = [p for p in theirs if any(same(p, q) for q in ours)]
    matched_ours = [q for q in ours if any(same(p, q) for p in theirs)]
    equal_similarity = sum(
        1
        for p in matched_theirs
        if p.similarity is not None
        and any(same(p, q) and q.similarity == p.similarity for q in ours)
    )
    flagged_nicad = {p.sample.file for p in theirs}
    flagged_ours = {p.sample.file for p in ours}
    universe = sample_names | flagged_nicad | flagged_ours
    agree = sum((s in flagged_nicad) == (s in flagged_ours) for s in universe)
    return {
        "nicad": len(theirs),
        "ours": len(ours),
        "common": len(matched_theirs),
        "same_similarity": equal_similarity,
        "recall": len(matched_theirs) / len(theirs) if theirs else 1.0,
        "precision": len(matched_ours) / len(ours) if ours else 1.0,
        "samples": len(universe),
        "agreement": agree / len(universe) if universe else 1.0,
        "missed": [p for p in theirs if p not in matched_theirs],
        "extra": [q for q in ours if q not in matched_ours],
    }


def _fmt(p: Pair) -> str:
    c, s = p.canonical, p.sample
    return f"{c.file}:{c.start}-{c.end} ~ {s.file}:{s.start}-{s.end} ({p.similarity}%)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("xml", nargs="*", type=Path, help="NiCad crossclones pairs XML files")
    parser.add_argument(
        "--html-dir", type=Path, help="folder of per-task NiCad HTML reports (<task>/Type-<k>.html)"
    )
    parser.add_argument("--systems", type=Path, help="folder with Original_Files/ and Files/")
    parser.add_argument("--show", type=int, default=20, help="disagreements listed per type")
    args = parser.parse_args(argv)
    if args.html_dir:
        return html_totals(args.html_dir, args.show)
    if not args.xml:
        parser.error("give NiCad pairs XML files or --html-dir")

    header = (
        f"{'run':52} {'nicad':>6} {'ours':>6} {'common':>6} {'recall':>7} {'prec':>6} "
        f"{'samples':>7} {'agree':>6} {'sim=':>5}"
    )
    rows, details = [], []
    for path in args.xml:
        run = parse_pairs(path)
        if args.systems:
            canon, samples = systems_from_folder(args.systems)
            names = {s.name for s in samples}
        else:
            canon, samples = systems_from_withsource(withsource_path(path))
            names = {s.name.split("@")[0] for s in samples}
        ours, _ = run_ours(run, canon, samples)
        r = compare(run, ours, names)
        label = f"{path.parent.name}/{path.name}".replace("Original_Files_functions", "")[:52]
        rows.append(
            f"{label:52} {r['nicad']:6} {r['ours']:6} {r['common']:6} {r['recall']:7.3f} "
            f"{r['precision']:6.3f} {r['samples']:7} {r['agreement']:6.3f} "
            f"{r['same_similarity']:5}"
        )
        details.append((label, run, r["missed"][: args.show], r["extra"][: args.show]))
    print(
        "mode:",
        "full systems"
        if args.systems
        else "NiCad withsource fragments (recall exact,"
        " precision/agreement only among reported fragments)",
    )
    print(header)
    print("\n".join(rows))
    for label, run, missed, extra in details:
        print(
            f"\n{label}: rename={run.rename} threshold={run.threshold} "
            f"minlines={run.min_lines} maxlines={run.max_lines}"
        )
        for p in missed:
            print("  NiCad only:", _fmt(p))
        for q in extra:
            print("  ours only: ", _fmt(q))
    return 0


if __name__ == "__main__":
    sys.exit(main())
