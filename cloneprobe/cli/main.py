"""The `cloneprobe` command line: one group, one module per command.

Command modules import only click and the option helpers at start-up; each imports the
pipeline it runs inside its own function, so `cloneprobe --help` starts fast.
"""

from __future__ import annotations

import logging
import signal
import sqlite3
import sys

import click

from ..errors import UserError
from .audit import audit_command
from .checks import remove_empty_new_stores
from .clones import clones_command
from .control import control_command
from .detect import detect_command
from .execute import execute_command
from .export import export_command
from .generate import generate_command
from .imports import import_command
from .prompts import prompts_command
from .report import report_command
from .scan import scan_command
from .signals import signals_command

USER_ERRORS = (UserError,)
"""Exceptions whose message a user can act on (each stage's errors subclass `UserError`):
printed as one red line, exit code 2."""


def _print_error(label: str, style: str, message: str) -> None:
    from rich.console import Console
    from rich.text import Text

    from cloneprobe.reports.safe_text import one_line

    line = Text(f"{label}: ", style=style)
    line.append(one_line(message))  # plain text: a message quoting user input is never markup
    Console(stderr=True).print(line, highlight=False, soft_wrap=True)


def _usage_message(ctx: click.Context, error: click.UsageError) -> str:
    """click's usage error as one line, with the help to read."""
    command = error.ctx.command_path if error.ctx else ctx.command_path
    return f"{error.format_message()}; see `{command} --help`"


def _sigterm_as_interrupt(signum, frame) -> None:
    """SIGTERM ends a command as Ctrl-C does: what was stored is kept, the run is marked."""
    raise KeyboardInterrupt


def _debug(ctx: click.Context) -> bool:
    return bool(ctx.obj and ctx.obj.get("debug"))


def _refused(error: BaseException) -> bool:
    """An error that ends a command as refused or failed (a store it made and left empty is
    removed): not Ctrl-C, Abort or an exit with code 0."""
    if isinstance(error, (click.exceptions.Exit, click.ClickException)):
        return bool(error.exit_code)
    return isinstance(error, Exception) and not isinstance(error, click.exceptions.Abort)


class _Group(click.Group):
    """Turns user errors into one red line and exit code 2 (a traceback only with --debug)."""

    def invoke(self, ctx: click.Context):
        try:
            previous = signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
        except ValueError:  # not the main thread: leave signals alone
            previous = None
        removed: list = []
        try:
            try:
                return super().invoke(ctx)
            except BaseException as error:
                if _refused(error):  # Ctrl-C is not a refusal: what was stored is kept
                    removed = remove_empty_new_stores(ctx)
                raise
        except USER_ERRORS as error:
            if _debug(ctx):
                raise
            removed_message = error.if_store_removed if error.store in removed else None
            _print_error("error", "red", removed_message or str(error))
            sys.exit(2)
        except click.UsageError as error:
            _print_error("error", "red", _usage_message(ctx, error))
            sys.exit(2)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except sqlite3.Error as error:
            if _debug(ctx):
                raise
            _print_error("error", "red", f"the store cannot be used ({error}); check the --store "
                         "path, or run with --debug for details")  # fmt: skip
            sys.exit(2)
        except OSError as error:
            if _debug(ctx):
                raise
            where = f"{error.filename}: " if error.filename else ""
            _print_error("error", "red", f"{where}{error.strerror or error}; check the path and "
                         "its permissions")  # fmt: skip
            sys.exit(2)
        except KeyboardInterrupt:
            _print_error(
                "interrupted", "yellow",
                "what was stored is kept; run the same command again to resume",
            )  # fmt: skip
            sys.exit(130)
        except Exception as error:  # a bug: still one line, the traceback with --debug
            if _debug(ctx):
                raise
            _print_error("internal error", "red", f"{type(error).__name__}: {error}; run again "
                         "with --debug for the traceback and report it")  # fmt: skip
            sys.exit(1)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logging.")
@click.version_option(package_name="cloneprobe")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """cloneprobe: has a code model memorized the benchmark it is scored on?

    It compares what a model writes with the benchmark's canonical solutions using a
    NiCad-style clone detector (Type-1 exact, Type-2 renamed, Type-3 near-miss).

    \b
    Try:  cloneprobe clones examples/canonical examples/samples
          cloneprobe clones examples/canonical examples/samples --explain
          cloneprobe audit --limit 5 -n 1
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING)


for _command in (clones_command, prompts_command, generate_command, import_command,
                 export_command, audit_command, detect_command, report_command,
                 execute_command, scan_command, signals_command, control_command):  # fmt: skip
    main.add_command(_command)

if __name__ == "__main__":  # pragma: no cover
    main()
