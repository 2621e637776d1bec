"""The "write a file" options: `--out FILE` writes one JSONL file in every command that has it
(`export --out`, `prompts --out`, where `prompts --export` is kept as the same option), and
`--report DIR` / `--output DIR` name folders. Through the CLI, files in tmp_path."""

from __future__ import annotations

import json

import click
from click.testing import CliRunner

from cloneprobe.cli import main

WRITERS = {"--out": "file", "--export": "file", "--report": "folder", "--output": "folder"}


def test_prompts_out_and_export_write_the_same_file(tmp_path):
    runner = CliRunner()
    outputs = []
    for spelling in ("--out", "--export"):
        path = tmp_path / f"{spelling.strip('-')}.jsonl"
        result = runner.invoke(main, ["prompts", "--prompts", "fixed", spelling, str(path)])
        assert result.exit_code == 0, result.output
        outputs.append(path.read_text(encoding="utf-8"))
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0].splitlines()[0])["task_id"] == "HumanEval/0"


def test_help_names_both_spellings_and_the_shared_meaning():
    runner = CliRunner()
    prompts_help = " ".join(runner.invoke(main, ["prompts", "--help"]).output.split())
    assert "--export, --out FILE.jsonl" in prompts_help
    assert "`export --out`" in prompts_help
    export_help = " ".join(runner.invoke(main, ["export", "--help"]).output.split())
    assert "--out PATH The JSONL file to write" in export_help
    assert "`prompts --out`" in export_help


def test_each_write_option_name_means_one_kind_of_path_in_every_command():
    kinds: dict[str, set] = {}
    for name, command in main.commands.items():
        for param in command.params:
            if not isinstance(param, click.Option) or not isinstance(param.type, click.Path):
                continue
            for spelling in param.opts:
                if spelling in WRITERS:
                    kind = "folder" if not param.type.file_okay else (
                        "file" if not param.type.dir_okay else "either")  # fmt: skip
                    kinds.setdefault(spelling, set()).add((kind, name))
    assert {s for s in kinds} >= {"--out", "--export", "--report", "--output"}
    for spelling, found in kinds.items():
        assert {kind for kind, _ in found} <= {WRITERS[spelling], "either"}, (spelling, found)
    assert {c for _, c in kinds["--out"]} == {"export", "prompts"}
