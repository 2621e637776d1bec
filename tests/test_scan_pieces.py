"""A corpus of fewer JSONL or Parquet files than ranks is cut into pieces, one per rank: every
record is scanned by exactly one rank (real files, the real local executor), a record without
an id keeps the name it has in a scan of one rank, and a resumed scan gives the same result."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections import Counter

import pytest
from click.testing import CliRunner
from scan_corpora import planted_corpus

from cloneprobe.cli import main
from cloneprobe.scan.pieces import plan_pieces


def write_records(path, docs, without_id=(), compress=False):
    opener = gzip.open if compress else open
    with opener(path, "wt", encoding="utf-8") as handle:
        for number, doc in enumerate(docs):
            record = {"text": doc.text, "repo": doc.repo}
            if number not in without_id:
                record["id"] = doc.id
            handle.write(json.dumps(record) + "\n")
    return path


def scan(corpus, output, workers: int, tasks: int, *extra) -> dict:
    command = [sys.executable, "-m", "cloneprobe", "scan", str(corpus), "--output", str(output),
               "--workers", str(workers), "--json", *(["--tasks", str(tasks)] if tasks else []),
               *extra]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def scan_alone(corpus, output, *extra) -> dict:
    """The reference: the same corpus scanned by one worker as one rank, in-process (the
    command as CliRunner runs it; a process start and the index cost about 1.7 s of CPU). The
    scans on two workers stay real processes, forking real workers."""
    arguments = ["scan", str(corpus), "--output", str(output), "--workers", "1", "--json",
                 "--ranks", "1", *extra]  # fmt: skip
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def ranks_documents(output) -> dict[int, int]:
    progress = [json.loads(p.read_text()) for p in (output / "progress").glob("*.json")]
    return {p["rank"]: p["documents"] for p in progress}


def comparable(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in ("throughput", "ranks")}


@pytest.fixture(scope="module")
def every_doc_planted():
    # one planted canonical in every document: a document read twice would match twice, one
    # not read would not match
    docs, plants = planted_corpus(count=24, per_kind=8)
    return docs, plants


def planted_matches(summary: dict, plants, names: dict | None = None) -> Counter:
    """How often each plant was matched (`names`: the corpus name of a document, when it is
    not its own id)."""
    names = names or {}
    planted = {(names.get(document, document), task) for document, task, _ in plants}
    return Counter((m["document"], m["task_id"]) for m in summary["matches"]
                   if (m["document"], m["task_id"]) in planted)  # fmt: skip


def once_each(plants, names: dict | None = None) -> Counter:
    names = names or {}
    return Counter({(names.get(document, document), task): 1 for document, task, _ in plants})


@pytest.mark.parametrize("compress", [
    pytest.param(False, id="jsonl"),
    pytest.param(True, id="jsonl.gz", marks=pytest.mark.slow(
        reason="about 2 s of CPU: a scan process forking two workers; a compressed file is "
               "scanned on two workers in the fast suite too "
               "(test_compressed_jsonl_alone_gets_one_rank_per_worker)")),
])  # fmt: skip
def test_one_jsonl_file_is_read_by_every_rank_and_each_record_once(tmp_path, every_doc_planted,
                                                                   compress):  # fmt: skip
    docs, plants = every_doc_planted
    name = "corpus.jsonl" + (".gz" if compress else "")
    corpus = write_records(tmp_path / name, docs, without_id={3, 17}, compress=compress)
    alone = scan_alone(corpus, tmp_path / "alone", "--group-field", "repo")
    out = tmp_path / "split"
    split = scan(corpus, out, 2, 5, "--group-field", "repo")
    per_rank = ranks_documents(out)
    assert len(per_rank) == 5 and all(per_rank.values()) and sum(per_rank.values()) == 24
    names = {docs[n].id: f"{name}/{n}" for n in (3, 17)}  # by line number, as datatrove does
    assert planted_matches(split, plants, names) == once_each(plants, names)
    assert comparable(split) == comparable(alone)
    assert {m["document"] for m in split["matches"]} >= set(names.values())


def test_compressed_jsonl_alone_gets_one_rank_per_worker(tmp_path, every_doc_planted):
    docs, _ = every_doc_planted
    corpus = write_records(tmp_path / "corpus.jsonl.gz", docs, compress=True)
    summary = scan(corpus, tmp_path / "out", 2, 0)
    assert summary["ranks"] == 2  # each rank decompresses the whole file: no more than workers


def test_one_parquet_file_is_cut_by_rows_across_its_row_groups(tmp_path, every_doc_planted):
    import pyarrow as pa
    import pyarrow.parquet as pq

    docs, plants = every_doc_planted
    table = pa.table({"id": [d.id for d in docs], "text": [d.text for d in docs]})
    pq.write_table(table, tmp_path / "corpus.parquet", row_group_size=7)
    alone = scan_alone(tmp_path / "corpus.parquet", tmp_path / "alone")
    out = tmp_path / "split"
    split = scan(tmp_path / "corpus.parquet", out, 2, 0)
    assert split["ranks"] == 8 and sum(ranks_documents(out).values()) == 24
    assert all(ranks_documents(out).values())
    assert planted_matches(split, plants) == once_each(plants)
    assert comparable(split) == comparable(alone)


@pytest.mark.slow(reason="about 3 s of CPU: two scan processes forking two workers each; the "
                  "fast suite resumes a scan of files (test_scan_resume) and splits one file "
                  "(the other tests here)")
def test_a_resumed_split_scan_runs_only_the_unfinished_rank(tmp_path, every_doc_planted):
    docs, _ = every_doc_planted
    corpus = write_records(tmp_path / "corpus.jsonl", docs)
    out = tmp_path / "out"
    first = scan(corpus, out, 2, 4)  # that 2 workers find what 1 finds: test_scan_executors
    for name in ("datatrove/completions/00002", "matches/00002.jsonl", "tallies/00002.json",
                 "progress/00002.json"):  # fmt: skip
        (out / name).unlink()
    resumed = scan(corpus, out, 2, 4)
    assert resumed["throughput"]["ranks_run"] == 1
    assert comparable(resumed) == comparable(first)
    assert json.loads((out / "scan.json").read_text())["pieces"][0][2] == ["corpus.jsonl", 2, 4]


def test_ranks_are_shared_by_size_and_every_file_has_one():
    pieces = plan_pieces(["big", "small", "tiny"], [1000, 100, 1], 8)
    assert Counter(name for name, _, _ in pieces) == Counter({"big": 6, "small": 1, "tiny": 1})
    assert [(part, parts) for name, part, parts in pieces if name == "big"] == [
        (k, 6) for k in range(6)]  # fmt: skip
    assert plan_pieces(["a", "b"], [5, 5], 2) is None  # as many files as ranks: whole files


def test_a_compressed_file_is_cut_in_no_more_pieces_than_there_are_workers():
    # each piece of a compressed file decompresses all of it: beyond the workers, the ranks go
    # to the plain files, or read nothing
    mixed = plan_pieces(["a.jsonl.gz", "b.jsonl"], [1000, 10], 8, workers=2)
    assert len(mixed) == 8 and sum(p[0] == "a.jsonl.gz" for p in mixed if p) == 2
    alone = plan_pieces(["a.jsonl.gz"], [1000], 8, workers=2)
    assert len(alone) == 8 and [p for p in alone if p] == [("a.jsonl.gz", 0, 2),
                                                          ("a.jsonl.gz", 1, 2)]
