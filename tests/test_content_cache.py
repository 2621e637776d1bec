"""The content cache (`cloneprobe.content_cache`): the canonical fragments, the canonical
profiles and the chance pool's comparisons read from disk give the verdicts and evidence that
computing them gives; a change of any input is a new entry, never the old one; a corrupt,
partly written or misshapen entry is computed again and written over; the folder follows
CLONEPROBE_CACHE_DIR, XDG_CACHE_HOME and ~/.cache, and CLONEPROBE_NO_CACHE turns it off.
Real `cloneprobe detect --json` runs through the CLI into fresh SQLite stores, each test with
its own cache folder, cold (the suite's shared one is not used here)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from cloneprobe.audit.detection import CanonicalFragments, DetectionSettings
from cloneprobe.benchmarks import load_humaneval
from cloneprobe.benchmarks.tasks import Benchmark
from cloneprobe.cli import main
from cloneprobe.clones import DetectorConfig, get_profile
from cloneprobe.content_cache import ContentCache, cache_folder, source_fingerprint
from cloneprobe.evidence.null_model import chance_rates

SAMPLES = Path(__file__).parent / "data" / "humaneval_results.jsonl"
KINDS = {"canonical-fragments", "canonical-hashes", "canonical-profiles", "chance-rates"}


def detect(tmp_path: Path, samples: Path, env: dict, *extra: str) -> dict:
    """`cloneprobe detect FILE --json` into a fresh store; the parsed report."""
    store = tmp_path / f"store-{len(list(tmp_path.glob('store-*')))}.sqlite"
    result = CliRunner().invoke(main, ["detect", str(samples), "--store", str(store), "--model",
                                       "m", "--temperature", "0.2", "--json", *extra],
                                env={"OPENAI_API_KEY": None, **env})  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def cached(folder: Path) -> dict:
    return {"CLONEPROBE_CACHE_DIR": str(folder), "CLONEPROBE_NO_CACHE": None}


OFF = {"CLONEPROBE_NO_CACHE": "1"}


def entries(folder: Path) -> dict[str, list[Path]]:
    return {kind.name: sorted(kind.glob("*.json")) for kind in folder.iterdir()}


@pytest.mark.parametrize("profile", ["default", "nicad"])
def test_verdicts_and_evidence_are_the_same_cold_warm_and_off(tmp_path, profile):
    folder = tmp_path / "cache"
    cold = detect(tmp_path, SAMPLES, cached(folder), "--profile", profile)
    layouts = 1 if profile == "default" else 2  # nicad: its own layout, and the profiles'
    assert {k: len(v) for k, v in entries(folder).items()} == {
        "canonical-fragments": layouts, "canonical-hashes": 1, "canonical-profiles": 1,
        "chance-rates": 1}
    written = {p: p.stat().st_ino for paths in entries(folder).values() for p in paths}
    warm = detect(tmp_path, SAMPLES, cached(folder), "--profile", profile)
    off = detect(tmp_path, SAMPLES, {**cached(tmp_path / "unused"), **OFF}, "--profile", profile)
    assert cold == warm == off
    if profile == "default":  # the chance pool finds clones there (none under nicad's floor)
        assert cold["evidence_rule"]["chance"]["pairs"] > 0
    assert {p: p.stat().st_ino for paths in entries(folder).values()
            for p in paths} == written  # read, not written again (a write: a new inode)
    assert not (tmp_path / "unused").exists()  # off: nothing read or written


def test_other_settings_and_other_samples_never_read_an_entry_of_other_inputs(tmp_path):
    folder = tmp_path / "cache"
    other = tmp_path / "other.jsonl"  # as many samples, every other one answered otherwise
    records = [json.loads(line) for line in SAMPLES.read_text().splitlines()]
    other.write_text("".join(json.dumps({**r, "completion": "    return None\n"} if i % 2 else r)
                             + "\n" for i, r in enumerate(records)))  # fmt: skip
    runs = [(SAMPLES, ()), (SAMPLES, ("--profile", "nicad")), (other, ()),
            (SAMPLES, ("--threshold", "0.5"))]  # fmt: skip
    shared = [detect(tmp_path, samples, cached(folder), *extra) for samples, extra in runs]
    alone = [detect(tmp_path, samples, OFF, *extra) for samples, extra in runs]
    assert shared == alone
    chance = [(r["evidence_rule"]["chance"]["pairs"], r["evidence_rule"]["chance"]["pool"])
              for r in alone]  # fmt: skip
    assert len(set(chance)) == len(chance)  # each run's inputs give other chance figures
    assert len(entries(folder)["chance-rates"]) == len(runs)


def test_corrupt_partly_written_and_misshapen_entries_are_computed_again(tmp_path):
    folder = tmp_path / "cache"
    expected = detect(tmp_path, SAMPLES, OFF)
    detect(tmp_path, SAMPLES, cached(folder))
    damaged = {"canonical-fragments": lambda text: text[: len(text) // 2],
               "canonical-profiles": lambda text: '{"HumanEval/0": [1, 2]}',
               "canonical-hashes": lambda text: '{"HumanEval/0": "0123"}',
               "chance-rates": lambda text: "\x00\xff not json"}  # fmt: skip
    for kind, damage in damaged.items():
        for path in entries(folder)[kind]:
            path.write_text(damage(path.read_text()), encoding="utf-8")
    assert detect(tmp_path, SAMPLES, cached(folder)) == expected
    for paths in entries(folder).values():  # written over, whole
        for path in paths:
            json.loads(path.read_text(encoding="utf-8"))
    hashes = json.loads(entries(folder)["canonical-hashes"][0].read_text(encoding="utf-8"))
    assert len(hashes) == len(load_humaneval())  # the entry of one task was not taken as all
    assert detect(tmp_path, SAMPLES, cached(folder)) == expected


def test_a_folder_that_cannot_be_written_is_passed_over(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert detect(tmp_path, SAMPLES, cached(blocker)) == detect(tmp_path, SAMPLES, OFF)


def test_a_changed_canonical_is_a_new_entry_never_the_old_one(tmp_path):
    humaneval = load_humaneval()
    changed_task = replace(humaneval.get("HumanEval/0"), canonical_solution=(
        "    ordered = sorted(numbers)\n"
        "    return any(b - a < threshold for a, b in zip(ordered, ordered[1:]))\n"))  # fmt: skip
    changed = Benchmark(humaneval.name, tuple(changed_task if t.task_id == "HumanEval/0" else t
                                              for t in humaneval))  # fmt: skip
    disk = ContentCache(tmp_path / "cache")
    settings = DetectionSettings(DetectorConfig())
    pool = [(t.task_id, t.prompt + changed_task.canonical_solution) for t in list(humaneval)[:6]]
    for benchmark in (humaneval, changed):  # the original's entries first, then the change's
        computed = CanonicalFragments(benchmark, ContentCache(None))
        read = CanonicalFragments(benchmark, disk)
        assert render(read.of("HumanEval/0")) == render(computed.of("HumanEval/0"))
        assert read.profile("HumanEval/0") == computed.profile("HumanEval/0")
        for cross_task in (False, True):
            assert read.content_hash("HumanEval/0", cross_task) == computed.content_hash(
                "HumanEval/0", cross_task)  # fmt: skip
        assert chance_rates(read, settings, pool) == chance_rates(computed, settings, pool)
    assert render(CanonicalFragments(humaneval, disk).of("HumanEval/0")) != render(
        CanonicalFragments(changed, disk).of("HumanEval/0"))
    assert CanonicalFragments(humaneval, disk).content_hash("HumanEval/0") != (
        CanonicalFragments(changed, disk).content_hash("HumanEval/0"))
    assert chance_rates(CanonicalFragments(humaneval, disk), settings, pool)["HumanEval/0"] != (
        chance_rates(CanonicalFragments(changed, disk), settings, pool)["HumanEval/0"])


def render(fragments) -> list:
    return [(f.file, f.start_line, f.end_line, f.name, f.lines, f.body_start, f.has_errors,
             f.one_liner, f.layout) for f in fragments]  # fmt: skip


def test_fragments_read_back_are_those_extracted_in_both_layouts(tmp_path):
    humaneval = load_humaneval()
    for layout in ("statements", get_profile("nicad").layout):
        computed = CanonicalFragments(humaneval, ContentCache(None))
        CanonicalFragments(humaneval, ContentCache(tmp_path)).of("HumanEval/0", layout)  # writes
        read = CanonicalFragments(humaneval, ContentCache(tmp_path))
        for task in humaneval:
            assert render(read.of(task.task_id, layout)) == render(
                computed.of(task.task_id, layout))
            assert read.profile(task.task_id) == computed.profile(task.task_id)


def test_the_folder_follows_the_variables_and_the_home():
    home = Path.home() / ".cache" / "cloneprobe"
    assert cache_folder({}) == home
    assert cache_folder({"XDG_CACHE_HOME": "/x/cache"}) == Path("/x/cache/cloneprobe")
    assert cache_folder({"XDG_CACHE_HOME": "relative"}) == home  # the XDG spec ignores it
    assert cache_folder({"XDG_CACHE_HOME": "/x", "CLONEPROBE_CACHE_DIR": "/y"}) == Path("/y")
    assert cache_folder({"CLONEPROBE_CACHE_DIR": "/y", "CLONEPROBE_NO_CACHE": "1"}) is None
    assert cache_folder({"CLONEPROBE_NO_CACHE": "0"}) == home


def test_the_code_fingerprint_changes_with_any_module_and_a_linked_stage(tmp_path):
    package, stage = tmp_path / "package", tmp_path / "stage"
    package.mkdir()
    stage.mkdir()
    (package / "a.py").write_text("A = 1\n")
    (stage / "b.py").write_text("B = 1\n")
    (package / "stage").symlink_to(stage)
    before = source_fingerprint(package)
    (package / "notes.txt").write_text("not code")
    assert source_fingerprint(package) == before
    (stage / "b.py").write_text("B = 2\n")
    after_stage = source_fingerprint(package)
    (package / "a.py").write_text("A = 2\n")
    assert len({before, after_stage, source_fingerprint(package)}) == 3


def test_each_kind_keeps_its_most_recently_used_entries(tmp_path):
    disk = ContentCache(tmp_path, keep=3)
    for number in range(3):
        disk.write("kind", f"entry{number}", number)
        os.utime(tmp_path / "kind" / f"entry{number}.json", ns=(number * 10**9,) * 2)
    assert disk.read("kind", "entry0", int) == 0  # used now: the most recent
    disk.write("kind", "entry3", 3)
    assert sorted(p.stem for p in (tmp_path / "kind").iterdir()) == ["entry0", "entry2", "entry3"]


def test_the_suite_shares_one_cache_folder_of_its_own():
    folder = cache_folder()  # what every command of the run uses (tests/conftest.py)
    assert folder is not None and folder.name.startswith("cloneprobe-test-cache-")
    assert folder != cache_folder({"HOME": str(Path.home())})  # never the user's
    assert os.environ.get("CLONEPROBE_CACHE_DIR") == str(folder)
