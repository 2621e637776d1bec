"""One vocabulary: an option name means the same thing in every command that has it, old
spellings still work (hidden, with a note), and each default is written once (the settings)."""

from __future__ import annotations

from collections import defaultdict

import click
import pytest
from click.testing import CliRunner

from cloneprobe.cli import main
from cloneprobe.cli.options import VOCABULARY
from cloneprobe.settings import ExecutionSettings, GenerationSettings, SampleSource

FAMILIES = {"integer range": "integer", "float range": "float", "file": "path",
            "directory": "path", "path": "path", "text": "path"}  # fmt: skip
"""Types that take the same values from a user (a number; a name or path)."""


def visible_options() -> dict[str, list[tuple[str, click.Option]]]:
    """Every visible option spelling -> (command, option) over the whole command tree."""
    found = defaultdict(list)
    for name, command in main.commands.items():
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                for spelling in param.opts:
                    found[spelling].append((name, param))
    return found


def family(param: click.Option) -> str:
    return FAMILIES.get(param.type.name, param.type.name)


def test_an_option_shared_by_commands_has_one_meaning_and_one_type():
    wrong = []
    for spelling, uses in visible_options().items():
        if len(uses) < 2 or spelling in ("--help", "-h"):
            continue
        helps = {param.help for _, param in uses}
        if len(helps) > 1:  # declared more than once: each help starts with the one meaning
            stem = VOCABULARY.get(spelling)
            if stem is None:
                commands = sorted(c for c, _ in uses)
                wrong.append(f"{spelling}: declared differently in {commands} with no entry "
                             "in VOCABULARY")  # fmt: skip
                continue
            wrong += [f"{spelling} in {c}: help {p.help!r} does not start with {stem!r}"
                      for c, p in uses if not (p.help or "").startswith(stem)]  # fmt: skip
        kinds = {(c, family(p)) for c, p in uses}
        if len({k for _, k in kinds}) > 1:
            wrong.append(f"{spelling}: types differ {sorted(kinds)}")
    assert wrong == []


@pytest.mark.parametrize("spelling", ["--prompts", "--model", "--limit", "--config",
                                      "--benchmark", "--store"])  # fmt: skip
def test_the_common_names_are_where_they_make_sense(spelling):
    commands = {c for c, _ in visible_options()[spelling]}
    expected = {
        "--prompts": {"generate", "audit", "import", "export", "detect", "report", "execute",
                      "signals", "prompts", "control"},
        "--model": {"generate", "audit", "import", "export", "detect", "report", "execute",
                    "signals", "control"},
        "--limit": {"generate", "audit", "control"},
        "--config": set(main.commands) - {"clones", "prompts"},
        "--benchmark": set(main.commands) - {"clones", "export"},
        "--store": {"generate", "audit", "import", "export", "detect", "report", "execute",
                    "signals"},
    }[spelling]
    assert commands == expected


def test_old_spellings_are_hidden_and_still_accepted(tmp_path):
    runner = CliRunner()
    help_text = runner.invoke(main, ["report", "--help"]).output
    assert "--prompts" in help_text and "--prompt-set" not in help_text
    scan_help = runner.invoke(main, ["scan", "--help"]).output
    assert "--max-docs" in scan_help and "--ranks" in scan_help
    assert "--limit" not in scan_help and "--tasks" not in scan_help
    # the old spelling still reaches the same setting
    result = runner.invoke(main, ["prompts", "--set", "fixed", "--show", "0"])
    assert result.exit_code == 0, result.output
    assert "fixed/fixed" in result.stdout
    assert "--set is the old spelling of --prompts" in result.stderr
    new = runner.invoke(main, ["prompts", "--prompts", "fixed", "--show", "0"])
    assert new.stdout == result.stdout and "old spelling" not in new.stderr


def test_help_shows_the_defaults_of_the_settings():
    runner = CliRunner()
    audit = " ".join(runner.invoke(main, ["audit", "--help"], terminal_width=200).output.split())
    generation, execution = GenerationSettings(), ExecutionSettings()
    # -n and --max-new-tokens: generate's defaults; a bare audit shows its quick look's
    generate = " ".join(runner.invoke(main, ["generate", "--help"],
                                      terminal_width=200).output.split())  # fmt: skip
    assert f"default: {generation.n};" in generate
    assert f"default: {generation.max_new_tokens};" in generate
    assert f"{generation.n} for the study" in audit
    assert f"{generation.max_new_tokens} for the study" in audit
    assert f"default: {generation.prompts}" in audit
    assert f"default: {generation.top_p}" in audit
    assert f"default: {execution.workers}" in audit
    assert f"default: {generation.store}" in audit
    detect = " ".join(runner.invoke(main, ["detect", "--help"], terminal_width=200).output.split())
    assert f"default: {SampleSource().max_sample_bytes}" in detect


def test_signal_help_lists_the_registry():
    from cloneprobe.signals.registry import SIGNALS

    text = " ".join(CliRunner().invoke(main, ["signals", "--help"], terminal_width=300)
                    .output.split())  # fmt: skip
    assert ", ".join(SIGNALS) in text
