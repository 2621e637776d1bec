"""The scan's index read back from the content cache is the index built from the benchmark;
an entry that cannot be used is built again and written over; a changed benchmark is a new
entry."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from cloneprobe.benchmarks import load_benchmark
from cloneprobe.content_cache import ContentCache
from cloneprobe.scan.index import build_index
from cloneprobe.scan.index_cache import KIND, cached_index, index_key


@pytest.fixture(scope="module")
def humaneval():
    return load_benchmark("humaneval")


@pytest.fixture(scope="module")
def built(humaneval):
    return build_index(humaneval)


def assert_same_index(found, expected) -> None:
    assert found.name == expected.name and found.min_fraction == expected.min_fraction
    assert found.tasks == expected.tasks
    for name in ("code", "prose", "short"):
        mine, theirs = getattr(found, name), getattr(expected, name)
        assert (mine.n, mine.bits) == (theirs.n, theirs.bits)
        for field in ("hashes", "tasks", "bitmap"):
            a, b = getattr(mine, field), getattr(theirs, field)
            assert a.dtype == b.dtype and np.array_equal(a, b), (name, field)


def test_index_read_from_the_cache_is_the_built_one(tmp_path, humaneval, built):
    disk = ContentCache(tmp_path)
    first = cached_index(humaneval, disk)
    entry = disk.path(KIND, index_key(humaneval))
    assert entry is not None and entry.is_file()
    again = cached_index(humaneval, disk)
    assert again is not first
    assert_same_index(first, built)
    assert_same_index(again, built)
    assert all(isinstance(t, tuple) and type(t).__name__ == "Token"
               for task in again.tasks for t in task.fragment + task.body)  # fmt: skip


def test_an_unusable_entry_is_built_again_and_written_over(tmp_path, humaneval, built):
    disk = ContentCache(tmp_path)
    cached_index(humaneval, disk)
    entry = disk.path(KIND, index_key(humaneval))
    value = json.loads(entry.read_text())
    value["tasks"][0][1][0] = ["name", "x"]  # a token row cut short
    entry.write_text(json.dumps(value))
    assert_same_index(cached_index(humaneval, disk), built)
    assert json.loads(entry.read_text())["tasks"][0][1][0] == list(built.tasks[0].fragment[0])
    entry.write_text("{not json")
    assert_same_index(cached_index(humaneval, disk), built)


def test_a_changed_benchmark_is_another_entry(tmp_path, humaneval):
    disk = ContentCache(tmp_path)
    task = humaneval.tasks[0]
    changed = dataclasses.replace(
        humaneval,
        tasks=(
            dataclasses.replace(task, canonical_solution=task.canonical_solution + "    pass\n"),
            *humaneval.tasks[1:],
        ),
    )
    assert index_key(changed) != index_key(humaneval)
    cached_index(humaneval, disk)
    index = cached_index(changed, disk)
    assert index.tasks[0].body[-1].text == "pass"
    assert len(list((tmp_path / KIND).glob("*.json"))) == 2


def test_with_the_cache_off_nothing_is_written(tmp_path, humaneval, built):
    assert_same_index(cached_index(humaneval, ContentCache(None)), built)
    assert not any(tmp_path.iterdir())
