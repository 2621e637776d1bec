"""The evidence view's work on a detection run's output, for perf/detect_throughput.py --evidence.

What the audit adds to detection for evidence, done here on the in-memory workload: each
canonical's profile (its own tokens, names, literals, the prompt's lines), each candidate's
answer (entry point and the helpers it calls) and its features against its own task's
canonical, the features and tier of every clone pair, and the chance rate (a pool of other tasks'
answers against every canonical, the detector's ladder). No timing here.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.clones import CloneReport, DetectorConfig, Fragment, compare_systems
from cloneprobe.detection import CanonicalFragments
from cloneprobe.evidence.null_model import CHANCE_POOL, _renamed
from cloneprobe.evidence.strength import best_answer_features, features_of
from cloneprobe.evidence.tiers import NullContext, assess_pair

TASK_OF_FILE = re.compile(r"HumanEval_(\d+)\.py$")


def _answer(fragments: Sequence[Fragment], entry_point: str) -> tuple[list[Fragment], bool]:
    """The entry point's fragments (every fragment when there is none). The audit selects the
    answer while parsing (`FragmentExtractor.extract_answer`, part of detection's cost); the
    workload here is already extracted, so this stands in for it."""
    named = [f for f in fragments if f.name == entry_point]
    return (named, True) if named else (list(fragments), False)


def evidence_pass(
    report: CloneReport, candidates: Sequence[Fragment], config: DetectorConfig
) -> dict[str, int]:
    """Everything evidence computes beyond detection; returns what it counted."""
    benchmark = load_humaneval()
    canonicals = CanonicalFragments(benchmark)
    tasks = list(benchmark)
    profiles = {t.task_id: canonicals.profile(t.task_id) for t in tasks}
    by_file: dict[str, list[Fragment]] = defaultdict(list)
    for fragment in candidates:
        by_file[fragment.file].append(fragment)
    answers = 0
    pool: list[Fragment] = []
    pool_owner: dict[str, str] = {}
    for file, fragments in by_file.items():
        task = tasks[int(TASK_OF_FILE.search(file).group(1))]
        profile = profiles[task.task_id]
        if profile is None:
            continue
        features = best_answer_features(
            profile, _answer(fragments, profile.entry_point)[0], ""
        )
        answers += features is not None
        if len(pool_owner) < CHANCE_POOL:
            answer, found = _answer(fragments, task.entry_point)
            if found:
                pool_owner[file] = task.task_id
                pool += [_renamed(f, task.entry_point) for f in answer]
    pairs = 0
    for pair in report.pairs:
        match = TASK_OF_FILE.search(pair.a.file)
        target = tasks[int(match.group(1))].task_id if match else None
        profile = profiles.get(target) if target else None
        if profile is not None:
            features = features_of(profile, pair.b)
            own = tasks[int(TASK_OF_FILE.search(pair.b.file).group(1))].task_id
            record = {"canonical_task": target, "trivial": pair.trivial, "in_answer": True,
                      "sample_function": pair.b.name}  # fmt: skip
            assess_pair(record, own, profile, features, NullContext())
            pairs += 1
    renamed = []
    for task in tasks:
        entry = canonicals.entry(task.task_id, config.profile.layout)
        if entry is not None:
            renamed.append(_renamed(entry, task.entry_point))
    chance = compare_systems(renamed, pool, replace(config))
    return {"answers": answers, "pair_features": pairs, "chance_pairs": len(chance.pairs)}
