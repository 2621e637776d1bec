"""Bad corpora and bad output folders: one red line naming the file, exit code 2, through the
command line."""

from __future__ import annotations

import gzip
import json

from click.testing import CliRunner

from cloneprobe.cli import main


def run(*args):
    return CliRunner().invoke(main, ["scan", *map(str, args), "--workers", "1"])


def assert_one_error_line(result, *fragments):
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    error_lines = [line for line in lines if line.startswith("error:")]
    assert len(error_lines) == 1, result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in error_lines[0], error_lines[0]


def test_empty_folder(tmp_path):
    (tmp_path / "corpus").mkdir()
    result = run(tmp_path / "corpus", "--output", tmp_path / "out")
    assert_one_error_line(result, str(tmp_path / "corpus"), "no source files matching")


def test_missing_text_field(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.jsonl").write_text(json.dumps({"id": 1, "content": "x = 1"}) + "\n")
    result = run(folder, "--output", tmp_path / "out")
    assert_one_error_line(result, "a.jsonl", "'text'", "--text-field", "content")


def test_missing_text_field_in_a_later_record_stops_the_worker_with_the_file(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    lines = [{"id": 1, "text": "x = 1"}, {"id": 2, "body": "y = 2"}]
    (folder / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    result = run(folder, "--output", tmp_path / "out")
    assert_one_error_line(result, str(folder / "b.jsonl"), "record 1", "'text'")


def test_unreadable_compressed_shard(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    with gzip.open(folder / "good.jsonl.gz", "wt") as handle:
        handle.write(json.dumps({"id": 1, "text": "x = 1"}) + "\n")
    (folder / "broken.jsonl.gz").write_bytes(b"\x1f\x8b\x08\x00 this is not gzip data")
    result = run(folder, "--output", tmp_path / "out")
    assert_one_error_line(result, "broken.jsonl.gz", "cannot read")


def test_truncated_shard_fails_inside_the_worker_naming_it(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    body = "".join(json.dumps({"id": i, "text": "x = 1\n" * 50}) + "\n" for i in range(200))
    data = gzip.compress(body.encode())
    (folder / "cut.jsonl.gz").write_bytes(data[: len(data) // 2])  # first line still reads
    result = run(folder, "--output", tmp_path / "out")
    assert_one_error_line(result, "cut.jsonl.gz", "cannot read")


def test_corrupt_parquet(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "part.parquet").write_bytes(b"PAR1 not really")
    result = run(folder, "--output", tmp_path / "out")
    assert_one_error_line(result, "part.parquet", "cannot read")


def test_no_such_corpus(tmp_path):
    result = run(tmp_path / "nowhere", "--output", tmp_path / "out")
    assert_one_error_line(result, "nowhere", "no such file")


def test_output_folder_of_another_scan_is_refused(tmp_path):
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.py").write_text(f"{name} = 1\n")
    assert run(tmp_path / "one", "--output", tmp_path / "out").exit_code == 0
    result = run(tmp_path / "two", "--output", tmp_path / "out")
    assert_one_error_line(result, "holds a different scan")
