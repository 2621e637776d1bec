"""Throughput of the clone detector on a paper-scale workload, built in memory.

The workload (perf/workload.py): the 164 HumanEval canonical solutions (prompt + canonical
solution) against 164 tasks x 20 samples x 2 temperatures x 10 models = 65,600 candidates made
by mutating the canonical solutions (identifier renames, inserted and deleted statements,
re-indentation, blank lines, comments, wrapping in parentheses) plus unrelated functions (the
canonical of another task, or a generated function). A seeded `random.Random` makes it
deterministic.

Printed, all measured in this run: extraction fragments per second; for Type-1, 2 and 3
separately (nicad profile, --min-lines 5, then the default profile) the wall time, comparisons
per second and clone pairs; the whole nicad run (extraction + the Type-1/2/3 ladder) against the
20 s target; and a small workload (164 canonicals vs 1,640 samples) per clone type next to NiCad
7's reference figure of about 35-42 s per clone type. The two targets are reference figures, not
measurements, and are labelled so.

Comparisons: for exact types (1, 2) the candidate fragments hashed (every kept fragment of the
candidate system); for Type-3 the (a, b) pairs of distinct compared sequences inside NiCad's
size window, which is what the LCS scorer actually scores (the fragment pairs inside the window,
duplicates included, are printed too). Both counts are computed outside the timed sections.

    python perf/detect_throughput.py --scale 0.05      # quick check
    python perf/detect_throughput.py                   # paper scale (a minute or two)
    python perf/detect_throughput.py --json
    python perf/detect_throughput.py --cprofile        # top 25 of the whole run, cumulative
    python perf/detect_throughput.py --evidence        # also the evidence view's cost, as a
                                                       # ratio to the whole run without it

Runs on one core: the process pins itself to a single CPU where the OS allows it; the detector
is single-threaded: rapidfuzz's `process.extract` has no worker pool, and the detector calls
`process.cdist` (large Type-3 windows) with `workers=1`.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import random
import sys
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from cloneprobe.clones import (
    CLONE_TYPES,
    DEFAULT,
    LADDER,
    NICAD,
    CloneType,
    DetectorConfig,
    Fragment,
    FragmentExtractor,
    Profile,
    SourceFile,
    compare_systems,
    get_language,
)
from cloneprobe.clones.compare import size_window
from cloneprobe.clones.normalize import compared_items

# perf/ is a folder of scripts, not a package, so the workload is imported as the top-level
# module `workload`. Python puts a script's own folder on sys.path only when it runs it as a
# script without -P / PYTHONSAFEPATH; inserting the folder here makes the import work however
# this file is started or loaded, from any working directory.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from workload import candidate_system, canonical_system, load_templates

TASKS = 164
SAMPLES, TEMPERATURES, MODELS = 20, 2, 10
FULL_CANDIDATES = TASKS * SAMPLES * TEMPERATURES * MODELS  # 65,600
SMALL_PER_TASK = 10
FULL_SMALL = TASKS * SMALL_PER_TASK  # 1,640
NICAD_MIN_LINES = 5

# Reference targets (not measured here).
TARGET_WHOLE_RUN_S = 20.0
NICAD7_PER_TYPE_S = (35.0, 42.0)


# ---------------------------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------------------------


def timed(action: Callable[[], Any], profiler: cProfile.Profile | None = None) -> tuple[Any, float]:
    """(result, wall seconds) of `action()` after a garbage collection, under `profiler` if any."""
    gc.collect()
    start = time.perf_counter()
    result = profiler.runcall(action) if profiler else action()
    return result, time.perf_counter() - start


def extract_all(extractor: FragmentExtractor, files: Sequence[SourceFile]) -> list[Fragment]:
    """Every fragment of every file, in file order."""
    extract = extractor.extract
    return [fragment for source in files for fragment in extract(source)]


def window_pairs(
    kept_a: Sequence[Fragment], kept_b: Sequence[Fragment], profile: Profile, ctype: CloneType
) -> tuple[int, int]:
    """(distinct-sequence pairs in `ctype`'s size window, fragment pairs in it)."""

    def sequences(fragments: Sequence[Fragment]) -> list[tuple[str, ...]]:
        out = []
        for fragment in fragments:
            seq = tuple(
                compared_items(fragment, ctype.rename, profile.grain, profile.compare_header)
            )
            if seq:
                out.append(seq)
        return out

    seq_a, seq_b = sequences(kept_a), sequences(kept_b)

    def count(queries: Sequence[int], sizes: list[int]) -> int:
        sizes.sort()
        total = 0
        for n in queries:
            low, high = size_window(n, ctype.threshold)
            total += bisect_right(sizes, high) - bisect_left(sizes, low)
        return total

    unique_a, unique_b = set(seq_a), set(seq_b)
    distinct = count([len(s) for s in unique_a], [len(s) for s in unique_b])
    fragments = count([len(s) for s in seq_a], [len(s) for s in seq_b])
    return distinct, fragments


def run_type(
    frags_a: Sequence[Fragment],
    frags_b: Sequence[Fragment],
    profile: Profile,
    type_name: str,
    min_lines: int | None,
) -> dict[str, Any]:
    """Time one clone type on its own; count its comparisons outside the timed section."""
    ctype = CLONE_TYPES[type_name]
    config = DetectorConfig(profile=profile, types=(ctype,), min_lines=min_lines)
    report, seconds = timed(lambda: compare_systems(frags_a, frags_b, config))
    kept_a = [f for f in frags_a if config.keeps(f)]
    kept_b = [f for f in frags_b if config.keeps(f)]
    result: dict[str, Any] = {
        "type": type_name,
        "seconds": seconds,
        "kept_a": len(kept_a),
        "kept_b": len(kept_b),
        "clone_pairs": len(report.clone_pairs),
        "trivial_pairs": len(report.pairs) - len(report.clone_pairs),
        "clone_classes": len(report.classes),
    }
    if ctype.exact:
        result["comparisons"] = len(kept_b)
        result["comparisons_are"] = "candidate fragments hashed"
    else:
        distinct, fragment_pairs = window_pairs(kept_a, kept_b, profile, ctype)
        result["comparisons"] = distinct
        result["comparisons_are"] = "distinct-sequence pairs in the size window (LCS scored)"
        result["fragment_pairs_in_window"] = fragment_pairs
    result["comparisons_per_s"] = result["comparisons"] / seconds if seconds else float("inf")
    return result


def pin_one_core() -> str:
    """Pin the process to one CPU where the OS allows it; says what was done."""
    if hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu} of {os.cpu_count()}"
    return f"not pinned (no sched_setaffinity); {os.cpu_count()} CPUs"


def benchmark(
    scale: float, seed: int, profile_whole: bool, evidence: bool = False
) -> dict[str, Any]:
    """Build the workload and measure everything; the figures, as printed or dumped as JSON."""
    figures: dict[str, Any] = {
        "scale": scale,
        "seed": seed,
        "cpu": pin_one_core(),
        "python": platform.python_version(),
        "targets_reference": {
            "whole_run_s": TARGET_WHOLE_RUN_S,
            "nicad7_per_type_s": list(NICAD7_PER_TYPE_S),
        },
    }
    rng = random.Random(seed)
    n_candidates = max(1, round(FULL_CANDIDATES * scale))
    n_small = max(1, round(FULL_SMALL * scale))

    def build() -> tuple[list[SourceFile], list[SourceFile], list[SourceFile]]:
        templates = load_templates()
        big = candidate_system(templates, n_candidates, rng, (SAMPLES, TEMPERATURES, MODELS))
        small = candidate_system(templates, n_small, random.Random(seed + 1), (SMALL_PER_TASK,))
        return canonical_system(templates), big, small

    (canon, big, small), build_s = timed(build)
    figures["workload"] = {
        "canonicals": len(canon),
        "candidates": len(big),
        "small_samples": len(small),
        "build_seconds": build_s,
    }

    spec = get_language("python")
    extractor = FragmentExtractor(spec, NICAD.layout)
    (frags_a, frags_b), extract_s = timed(
        lambda: (extract_all(extractor, canon), extract_all(extractor, big))
    )
    statements = FragmentExtractor(spec, DEFAULT.layout)
    (default_a, default_b), default_extract_s = timed(
        lambda: (extract_all(statements, canon), extract_all(statements, big))
    )
    n_frags = len(frags_a) + len(frags_b)
    figures["extraction"] = {
        "files": len(canon) + len(big),
        "fragments": n_frags,
        "seconds": extract_s,
        "fragments_per_s": n_frags / extract_s,
        "layout": NICAD.layout,
        "statements_layout_seconds": default_extract_s,
        "statements_layout_fragments_per_s": (len(default_a) + len(default_b)) / default_extract_s,
    }

    figures["nicad"] = {
        "min_lines": NICAD_MIN_LINES,
        "types": [run_type(frags_a, frags_b, NICAD, t, NICAD_MIN_LINES) for t in ("1", "2", "3")],
    }
    figures["default"] = {
        "min_lines": DEFAULT.min_lines,
        "types": [run_type(default_a, default_b, DEFAULT, t, None) for t in ("1", "2", "3")],
    }
    del frags_a, frags_b, default_a, default_b

    ladder = DetectorConfig(profile=NICAD, types=LADDER, min_lines=NICAD_MIN_LINES)

    candidates: list[Fragment] = []

    def whole_run():
        fresh = FragmentExtractor(spec, NICAD.layout)
        candidates[:] = extract_all(fresh, big)
        return compare_systems(extract_all(fresh, canon), candidates, ladder)

    profiler = cProfile.Profile() if profile_whole else None
    report, whole_s = timed(whole_run, profiler)
    if evidence:
        from evidence_cost import evidence_pass

        counted, evidence_s = timed(partial(evidence_pass, report, candidates, ladder))
        figures["evidence"] = {
            **counted,
            "seconds": evidence_s,
            "whole_run_seconds": whole_s,
            "ratio_with_evidence": (whole_s + evidence_s) / whole_s,
        }
    candidates.clear()
    if profiler:
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(25)
        figures["cprofile_top25_cumulative"] = stream.getvalue()
    parts = extract_s + sum(t["seconds"] for t in figures["nicad"]["types"])
    figures["whole_run"] = {
        "seconds": whole_s,
        "under_cprofile": profile_whole,
        "ratio_to_target": whole_s / TARGET_WHOLE_RUN_S,
        "clone_pairs": len(report.clone_pairs),
        "pairs_by_type": {
            t.name: sum(1 for p in report.clone_pairs if p.clone_type == t) for t in LADDER
        },
        "sum_of_separate_parts_seconds": parts,
        "sum_ratio_to_target": parts / TARGET_WHOLE_RUN_S,
    }
    del report

    small_extractor = FragmentExtractor(spec, NICAD.layout)
    (small_a, small_b), small_extract_s = timed(
        lambda: (extract_all(small_extractor, canon), extract_all(small_extractor, small))
    )
    small_types = []
    for type_name in ("1", "2", "3"):
        row = run_type(small_a, small_b, NICAD, type_name, NICAD_MIN_LINES)
        row["with_extraction_seconds"] = row["seconds"] + small_extract_s
        row["ratio_to_nicad7"] = [row["with_extraction_seconds"] / s for s in NICAD7_PER_TYPE_S]
        small_types.append(row)
    figures["small"] = {
        "canonicals": len(canon),
        "samples": len(small),
        "fragments": len(small_a) + len(small_b),
        "extraction_seconds": small_extract_s,
        "min_lines": NICAD_MIN_LINES,
        "types": small_types,
    }
    return figures


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def print_types(rows: Sequence[dict[str, Any]]) -> None:
    """One line per clone type: time, comparisons per second, pairs; then what was counted."""
    for row in rows:
        pairs = f"{row['clone_pairs']:,} clone pairs"
        if row["trivial_pairs"]:
            pairs += f" (+{row['trivial_pairs']:,} trivial)"
        print(
            f"  Type-{row['type']}: {row['seconds']:7.2f} s  "
            f"{row['comparisons_per_s']:>13,.0f} comparisons/s  {pairs}"
        )
        extra = f"{row['comparisons']:,} {row['comparisons_are']}"
        if "fragment_pairs_in_window" in row:
            extra += f"; {row['fragment_pairs_in_window']:,} fragment pairs in the window"
        print(f"           {extra}")


def print_profile(name: str, section: dict[str, Any]) -> None:
    """The separate Type-1/2/3 runs of one profile, under a heading."""
    first = section["types"][0]
    print(
        f"{name} profile, min_lines {section['min_lines']} "
        f"({first['kept_a']:,} x {first['kept_b']:,} fragments kept):"
    )
    print_types(section["types"])


def print_report(figures: dict[str, Any]) -> None:
    """The figures as text, each target labelled as a reference figure."""
    workload, extraction = figures["workload"], figures["extraction"]
    print(
        f"cloneprobe clone detector throughput: scale {figures['scale']}, "
        f"seed {figures['seed']}, {figures['cpu']}, Python {figures['python']}"
    )
    print(
        f"workload: {workload['canonicals']} canonicals vs {workload['candidates']:,} candidates "
        f"(+ {workload['small_samples']:,} small-workload samples), "
        f"built in {workload['build_seconds']:.1f} s"
    )
    print(
        f"extraction (parse + pretty-print): {extraction['files']:,} files -> "
        f"{extraction['fragments']:,} fragments in {extraction['seconds']:.2f} s = "
        f"{extraction['fragments_per_s']:,.0f} fragments/s ({extraction['layout']} layout, "
        f"nicad; statements layout, default: {extraction['statements_layout_seconds']:.2f} s = "
        f"{extraction['statements_layout_fragments_per_s']:,.0f} fragments/s)"
    )
    print_profile("nicad", figures["nicad"])
    print_profile("default", figures["default"])
    whole = figures["whole_run"]
    note = " under cProfile" if whole["under_cprofile"] else ""
    print(
        f"whole run{note} (extraction + Type-1/2/3 ladder, nicad, min_lines "
        f"{figures['nicad']['min_lines']}): {whole['seconds']:.1f} s = "
        f"{whole['ratio_to_target']:.2f} x the {TARGET_WHOLE_RUN_S:.0f} s target "
        f"(target: reference figure)"
    )
    by_type = ", ".join(f"Type-{k} {v:,}" for k, v in whole["pairs_by_type"].items())
    print(
        f"  {whole['clone_pairs']:,} clone pairs ({by_type}); extraction + the three separate "
        f"runs above sum to {whole['sum_of_separate_parts_seconds']:.1f} s = "
        f"{whole['sum_ratio_to_target']:.2f} x the target"
    )
    small = figures["small"]
    low, high = NICAD7_PER_TYPE_S
    print(
        f"small workload: {small['canonicals']} canonicals vs {small['samples']:,} samples "
        f"({small['fragments']:,} fragments, extraction {small['extraction_seconds']:.2f} s), "
        f"nicad, min_lines {small['min_lines']}:"
    )
    for row in small["types"]:
        to_low, to_high = row["ratio_to_nicad7"]
        print(
            f"  Type-{row['type']}: {row['with_extraction_seconds']:6.2f} s with extraction "
            f"({row['seconds']:.2f} s compare, {row['clone_pairs']:,} clone pairs) = "
            f"{to_high:.4f}-{to_low:.4f} x NiCad 7's about {low:.0f}-{high:.0f} s per clone type "
            f"(reference figure, not measured here)"
        )
    if figures["scale"] != 1.0:
        print(
            f"note: scale {figures['scale']}: the ratios to the targets are meaningful only at "
            f"scale 1"
        )
    if "evidence" in figures:
        e = figures["evidence"]
        print(
            f"evidence (profiles, {e['answers']:,} answers' features, {e['pair_features']:,} "
            f"pairs' features, chance pool: {e['chance_pairs']:,} pairs): {e['seconds']:.1f} s; "
            f"whole run with evidence {e['whole_run_seconds'] + e['seconds']:.1f} s = "
            f"{e['ratio_with_evidence']:.2f} x the whole run without it (limit 1.5 x)"
        )
    if "cprofile_top25_cumulative" in figures:
        print("\ncProfile of the whole run, top 25 by cumulative time:")
        print(figures["cprofile_top25_cumulative"])


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, run the benchmark, print the report (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the workload")
    parser.add_argument("--seed", type=int, default=0, help="seed of the workload generator")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON only")
    parser.add_argument(
        "--cprofile", action="store_true", help="profile the whole run (top 25, cumulative)"
    )
    parser.add_argument(
        "--evidence", action="store_true", help="also time the evidence view (ratio printed)"
    )
    args = parser.parse_args(argv)
    if not args.scale > 0:
        parser.error("--scale must be above 0")
    figures = benchmark(args.scale, args.seed, args.cprofile, args.evidence)
    if args.json:
        json.dump(figures, sys.stdout, indent=2)
        print()
    else:
        print_report(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
