"""A refused command leaves no store file behind: neither when click refuses a value nor when
the refusal comes after the store was opened (a sample file that is not JSON, a file that does
not say its model, a local model that does not exist). A store that existed before is never
removed. Through the real CLI with SQLite files in tmp_path."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from cloneprobe.cli import main

GOOD = {"task_id": "HumanEval/0", "completion": "    return True\n"}


def run(*args: str):
    return CliRunner().invoke(main, list(args), env={"OPENAI_API_KEY": None})


def leftovers(store: Path) -> list[str]:
    return sorted(p.name for p in store.parent.glob(store.name + "*"))


@pytest.fixture
def files(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not json\n", encoding="utf-8")
    unnamed = tmp_path / "unnamed.jsonl"
    unnamed.write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    return {"bad": str(bad), "unnamed": str(unnamed)}


REFUSED = {
    "audit --limit 0": ["audit", "--limit", "0"],
    "audit -n 0": ["audit", "-n", "0"],
    "generate --tasks nope": ["generate", "--tasks", "nope"],
    "audit missing hf model": ["audit", "--model", "hf:./no-such-model", "--limit", "1"],
    "generate missing hf model": ["generate", "--model", "hf:./no-such-model", "--limit", "1"],
    "import bad json": ["import", "{bad}", "--model", "m", "--temperature", "0.2"],
    "detect bad json": ["detect", "{bad}", "--model", "m", "--temperature", "0.2"],
    "audit bad json": ["audit", "{bad}", "--model", "m", "--temperature", "0.2"],
    "execute bad json": ["execute", "{bad}", "--model", "m", "--temperature", "0.2"],
    "signals bad json": ["signals", "{bad}", "--model", "m", "--temperature", "0.2"],
    "detect file without its model": ["detect", "{unnamed}"],
    "import file without its model": ["import", "{unnamed}"],
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_refused_command_leaves_no_store_file(tmp_path, files, name):
    store = tmp_path / "new.sqlite"
    args = [a.format(**files) for a in REFUSED[name]] + ["--store", str(store)]
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "error:" in result.output
    assert leftovers(store) == [], (name, result.output)


def test_a_store_that_existed_is_kept_with_its_samples_after_a_refusal(tmp_path, files):
    store = tmp_path / "kept.sqlite"
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    assert run("import", str(good), "--model", "m", "--temperature", "0.2",
               "--store", str(store)).exit_code == 0  # fmt: skip
    refused = run("import", files["bad"], "--model", "m", "--temperature", "0.2",
                  "--store", str(store))  # fmt: skip
    assert refused.exit_code == 2, refused.output
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM samples").fetchone()[0] == 1


def test_an_empty_file_given_as_the_store_is_not_removed(tmp_path, files):
    # not made by this command: whatever it is, a refusal leaves it alone
    store = tmp_path / "mine.sqlite"
    store.write_bytes(b"")
    result = run("import", files["bad"], "--model", "m", "--temperature", "0.2",
                 "--store", str(store))  # fmt: skip
    assert result.exit_code == 2, result.output
    assert store.exists()
