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
The study's data stays outside this repository (fetch it to e.g. /tmp/study).

Measured 2026-11-23 on the study's GPT-3.5 run (s2e-lab/Datasets-Quality,
Code_Clone_Results/GPT-3.5; NiCad 6, functions, minlines 10, maxlines 2500), withsource mode:
Type-1 0 pairs (NiCad found none); Type-2 6/6 pairs (recall 1.000, precision 1.000);
Type-3-2 (blind, 0.30) 40/40 (1.000, 1.000); Type-3-1 (no renaming, 0.30) 0 of a 5-pair
subset (classes HumanEval/126 and /157): NiCad prints a multi-line string statement (a leading
`\'\'\'` docstring is one) as one line per source row, blank rows included, and counts and
compares those rows; the nicad profile keeps it as one line, so its fragments are too small
for minlines 10 and lose the shared rows. Rows counted that way reproduce NiCad's nlines
(126: 25, 157: 11) and similarities (90%) exactly. Blind renaming turns the string into one
`"x"` line, which is why Type-2 and Type-3-2 agree. By NiCad's own class list, 281 of its 288
Type-3-1 pairs are in the classes of canonicals holding such a string (HumanEval 77, 92, 115,
126, 134, 136, 151, 157), mostly matched against the prompt stub (`def` plus the same
docstring) that opens each GPT-3.5 sample file, so the nicad profile's Type-3-1 recall on this
run is at most 7/288 until it counts a multi-line string's rows.
"""

from __future__ import annotations

import argparse
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
    flagged_nicad = {p.sample.file for p in theirs}
    flagged_ours = {p.sample.file for p in ours}
    universe = sample_names | flagged_nicad | flagged_ours
    agree = sum((s in flagged_nicad) == (s in flagged_ours) for s in universe)
    return {
        "nicad": len(theirs),
        "ours": len(ours),
        "common": len(matched_theirs),
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
    parser.add_argument("xml", nargs="+", type=Path, help="NiCad crossclones pairs XML files")
    parser.add_argument("--systems", type=Path, help="folder with Original_Files/ and Files/")
    parser.add_argument("--show", type=int, default=20, help="disagreements listed per type")
    args = parser.parse_args(argv)

    header = (
        f"{'run':52} {'nicad':>6} {'ours':>6} {'common':>6} {'recall':>7} {'prec':>6} "
        f"{'samples':>7} {'agree':>6}"
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
            f"{r['precision']:6.3f} {r['samples']:7} {r['agreement']:6.3f}"
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
