"""Each corpus format through the real command (datatrove's readers and ours), one worker in
process so the tests stay fast; the JSON summary and its `matches` list."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from scan_corpora import (
    planted_corpus,
    write_files,
    write_hf_dataset,
    write_jsonl,
    write_parquet,
)

from cloneprobe.cli import main
from cloneprobe.scan.steps import READ_CHUNK, read_local_file


@pytest.fixture(scope="module")
def corpus():
    return planted_corpus(count=12, per_kind=2)


def scan(corpus_path, output, *extra) -> dict:
    result = CliRunner().invoke(
        main, ["scan", str(corpus_path), "--output", str(output), "--workers", "1",
               "--ranks", "2", "--json", *extra],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def found(summary: dict) -> set[tuple[str, str]]:
    return {(m["document"], m["task_id"]) for m in summary["matches"] if m["evidence"] == "copy"}


def planted_keys(plants) -> set[tuple[str, str]]:
    return {(document, task) for document, task, _ in plants}


def check_match_record(summary: dict) -> None:
    match = summary["matches"][0]
    assert set(match) >= {"task_id", "document", "span", "similarity", "clone_type", "matched"}
    assert match["matched"] in ("solution", "prompt", "both")
    assert summary["documents"] == 12 and summary["ranks"] == 2


def test_jsonl_shards(tmp_path, corpus):
    docs, plants = corpus
    summary = scan(write_jsonl(tmp_path / "c", docs), tmp_path / "out", "--group-field", "repo")
    assert found(summary) == planted_keys(plants)
    check_match_record(summary)
    groups = {t["task_id"]: t["repositories"] for t in summary["tasks"] if t["found"]}
    assert groups["HumanEval/0"] == {"email": 1}


def test_compressed_jsonl_with_another_text_field(tmp_path, corpus):
    docs, plants = corpus
    folder = write_jsonl(tmp_path / "c", docs, compress=True, text_field="content")
    summary = scan(folder, tmp_path / "out", "--text-field", "content")
    assert found(summary) == planted_keys(plants)


def test_parquet(tmp_path, corpus):
    pytest.importorskip("pyarrow", reason="the corpus extra (pyarrow) is not installed")
    docs, plants = corpus
    summary = scan(write_parquet(tmp_path / "c", docs), tmp_path / "out")
    assert found(summary) == planted_keys(plants)
    check_match_record(summary)


def test_hugging_face_dataset_saved_to_disk(tmp_path, corpus):
    pytest.importorskip("datasets", reason="the corpus extra (datasets) is not installed")
    docs, plants = corpus
    summary = scan(write_hf_dataset(tmp_path / "c", docs), tmp_path / "out")
    assert found(summary) == planted_keys(plants)


def test_folder_of_source_files_groups_by_first_folder(tmp_path, corpus):
    docs, plants = corpus
    summary = scan(write_files(tmp_path / "c", docs), tmp_path / "out")
    expected = {(f"{d.split('/')[0]}/{d.split('/')[-1]}", t) for d, t in planted_keys(plants)}
    assert found(summary) == expected
    match = next(m for m in summary["matches"] if m["evidence"] == "copy")
    assert match["group"] == match["document"].split("/")[0]


def test_text_output_lists_the_matches(tmp_path, corpus):
    docs, _ = corpus
    corpus = write_jsonl(tmp_path / "c", docs)
    result = CliRunner().invoke(
        main, ["scan", str(corpus), "--output", str(tmp_path / "o"), "--workers", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "HumanEval/0" in result.stdout and "found in the corpus:" in result.stdout


@pytest.mark.parametrize("size", [0, 1, READ_CHUNK, READ_CHUNK + 1, 3 * READ_CHUNK + 5])
def test_a_source_file_is_read_whole_whatever_its_size(tmp_path, size):
    path = tmp_path / "big.py"
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path.write_bytes(data)
    assert read_local_file(str(path)) == data


def test_a_folder_walked_once_is_detected_and_listed_as_datatrove_lists_it(tmp_path):
    from datatrove.io import get_datafolder

    from cloneprobe.scan.readers import CorpusSettings, resolve_and_list

    for name in ("b/c/y.py", "a/x.py", "z.py", "notes.txt", "b/deep/w.pyc", "q/r/s/t.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("def f():\n    return 1\n")

    def datatrove_listing(glob):
        return sorted(get_datafolder(str(tmp_path)).list_files(recursive=True,
                                                               glob_pattern=glob))  # fmt: skip

    corpus, files = resolve_and_list(CorpusSettings(str(tmp_path)))
    assert corpus.format == "files" and files == datatrove_listing("**/*.py")
    assert files == ["a/x.py", "b/c/y.py", "q/r/s/t.py", "z.py"]
    (tmp_path / "b" / "c" / "part.jsonl").write_text('{"text": "x = 1"}\n')
    corpus, files = resolve_and_list(CorpusSettings(str(tmp_path)))
    assert corpus.format == "jsonl" and files == datatrove_listing("**/*.jsonl*")
    assert files == ["b/c/part.jsonl"]
    (tmp_path / "link.py").symlink_to(tmp_path / "z.py")  # the longer way: the same answer
    corpus, files = resolve_and_list(CorpusSettings(str(tmp_path)))
    assert corpus.format == "jsonl" and files == ["b/c/part.jsonl"]
