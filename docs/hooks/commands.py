"""mkdocs hook: the command reference (reference/commands.md), generated at build time from the
commands' own `--help`, so the page cannot drift from the options.

The repository root is put first on `sys.path`, so the build documents this checkout's
commands (not another installed copy).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = "reference/commands.md"
WIDTH = 100

INTRO = """# Commands

Every command's `--help`, as `cloneprobe <command> --help` prints it (this page is generated
from the commands when the site is built). What the commands are for:
[the audit](../audit.md), [the clone detector](../clone-detector.md),
[generation](../generation.md), [execution](../execution.md), [signals](../signals.md),
[the positive control](../control.md), [the corpus scan](../scan.md),
[benchmarks and prompt sets](../benchmarks.md). Errors:
[errors and secrets](errors.md).
"""


def command_reference() -> str:
    """The page: the group's help, then each command's, in the group's order."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import click

    from cloneprobe.cli import main

    def help_text(command: click.Command, name: str, parent: click.Context | None) -> str:
        context = command.make_context(
            name, [], parent=parent, resilient_parsing=True, terminal_width=WIDTH,
            max_content_width=WIDTH,
        )  # fmt: skip
        return command.get_help(context)

    root = main.make_context("cloneprobe", [], resilient_parsing=True, terminal_width=WIDTH)
    sections = [INTRO, "## cloneprobe\n", f"```text\n{help_text(main, 'cloneprobe', None)}\n```\n"]
    for name in main.list_commands(root):
        command = main.get_command(root, name)
        if command is None or command.hidden:
            continue
        sections.append(f"## cloneprobe {name}\n")
        sections.append(f"```text\n{help_text(command, name, root)}\n```\n")
    return "\n".join(sections)


def on_files(files, config):
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=command_reference()))
    return files
