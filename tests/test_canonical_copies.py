"""A verbatim copy of every HumanEval canonical solution is a Type-1 clone.

Each sample is the prompt followed by the canonical solution, as a perfect memorizer would
write it, judged through the audit's own detection path. The canonical fragment drops the
prompt's docstring wherever it stands (HumanEval/115 puts `import math` before it), and the
nicad profile judges samples as the study prepared them (docstrings removed; twelve prompts
use a `'''` docstring, which NiCad's grammar alone would keep as a statement).
"""

from __future__ import annotations

from cloneprobe.audit.detection import (
    CanonicalFragments,
    DetectionSettings,
    SampleProgram,
    detect_task,
)
from cloneprobe.benchmarks import load_humaneval, nicad_min_lines
from cloneprobe.clones import DEFAULT, NICAD, DetectorConfig

HUMANEVAL = load_humaneval()


def verdicts(profile):
    canonicals = CanonicalFragments(HUMANEVAL)
    settings = DetectionSettings(DetectorConfig(profile=profile))
    found = {}
    for number, task in enumerate(HUMANEVAL):
        sample = SampleProgram(number, task.task_id, task.prompt + task.canonical_solution)
        (verdict,) = detect_task(canonicals, settings, task.task_id, [sample])
        found[task.task_id] = verdict
    return canonicals, found


def test_every_verbatim_canonical_is_type_1_under_the_default_profile():
    _, found = verdicts(DEFAULT)
    trivial = sorted(t for t, v in found.items() if v.clone_type is None)
    assert all(found[t].trivial_type == "1" for t in trivial), trivial
    assert len(trivial) == 12  # bodies under the 12-token floor, reported apart as trivial
    assert {t: v.clone_type for t, v in found.items() if t not in trivial} == {
        t: "1" for t in found if t not in trivial
    }
    assert found["HumanEval/115"].clone_type == "1"


def test_every_verbatim_canonical_of_at_least_the_minimum_size_is_type_1_under_nicad():
    canonicals, found = verdicts(NICAD)
    sized = {
        task.task_id
        for task in HUMANEVAL
        if canonicals.of(task.task_id, NICAD.layout)[0].size >= nicad_min_lines(task)
    }
    assert len(sized) >= 100
    assert {t: found[t].clone_type for t in sized} == {t: "1" for t in sized}
    assert all(found[t].clone_type is None for t in found if t not in sized)
    for task_id in ("HumanEval/19", "HumanEval/69", "HumanEval/119"):  # dict; ''' docstrings
        assert task_id in sized
