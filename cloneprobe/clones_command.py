"""`cloneprobe clones A B`: cross-clone detection between two systems."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .clones import (
    LADDER,
    LANGUAGES,
    PROFILES,
    CloneDetectorError,
    ConfigError,
    DetectorConfig,
    clone_type,
    find_clones,
    get_clone_type,
    get_profile,
)
from .render_clones import print_report

TYPE_CHOICES = ["1", "2", "2c", "3", "3-2c"]


def build_config(
    profile: str,
    type_name: str | None,
    threshold: float | None,
    rename: str | None,
    min_lines: int | None,
    max_lines: int | None,
    min_tokens: int | None,
    lang: str | None,
    granularity: str,
) -> DetectorConfig:
    """Detector settings from command-line options (shared by every command that detects)."""
    if type_name is None and threshold is None and rename is None:
        types = LADDER
    else:
        base = get_clone_type(type_name or "3")
        chosen = clone_type(
            base.name,
            base.threshold if threshold is None else threshold,
            base.rename if rename is None else rename,  # type: ignore[arg-type]
        )
        if (chosen.threshold, chosen.rename) != (base.threshold, base.rename):
            chosen = clone_type(
                f"custom(t={float(chosen.threshold):g},{chosen.rename})",
                chosen.threshold,
                chosen.rename,
            )
        types = (chosen,)
    return DetectorConfig(
        profile=get_profile(profile),
        types=types,
        granularity=granularity,  # type: ignore[arg-type]
        language=lang,
        min_lines=min_lines,
        max_lines=max_lines,
        min_tokens=min_tokens,
    )


def detector_options(command=None, files: bool = True):
    """The detector's options, for `clones` and the commands that detect in samples
    (`files=False` leaves out --lang and --granularity, which the benchmark decides)."""
    if command is None:
        return lambda decorated: detector_options(decorated, files)
    options = [
        click.option(
            "--profile",
            type=click.Choice(sorted(PROFILES)),
            default="default",
            show_default=True,
            help="default: token LCS over bodies, sees short functions; "
            "nicad: NiCad's line-based semantics exactly.",
        ),
        click.option(
            "--type",
            "type_name",
            type=click.Choice(TYPE_CHOICES),
            help="Run one clone type only (1: exact; 2: blind-renamed exact; 2c: consistently "
            "renamed exact; 3: blind-renamed, 30% difference; 3-2c: consistent, 30%). "
            "Default: 1, 2 and 3, each pair labelled with the most specific.",
        ),
        click.option(
            "--threshold",
            type=click.FloatRange(0, 1, max_open=True),
            help="Difference threshold (0 exact, 0.3 Type-3); overrides the type's.",
        ),
        click.option(
            "--rename",
            type=click.Choice(["none", "blind", "consistent"]),
            help="Identifier renaming; overrides the type's.",
        ),
        click.option(
            "--min-lines",
            type=click.IntRange(min=0),
            help="Drop fragments under this many pretty-printed lines "
            "(profile default: nicad 10, default 2).",
        ),
        click.option(
            "--max-lines",
            type=click.IntRange(min=1),
            help="Drop fragments over this many pretty-printed lines (default 2500).",
        ),
        click.option(
            "--min-tokens",
            type=click.IntRange(min=0),
            help="Report pairs under this many body tokens as trivial (default profile: 12).",
        ),
        click.option(
            "--lang",
            type=click.Choice(sorted(LANGUAGES)),
            help="Source language (default: from file extensions).",
        ),
        click.option(
            "--granularity",
            type=click.Choice(["functions", "files"]),
            default="functions",
            show_default=True,
            help="Fragments are functions, or whole files.",
        ),
    ]
    if not files:
        options = options[:-2]
    for option in reversed(options):
        command = option(command)
    return command


@click.command("clones")
@click.argument("system_a", type=click.Path(path_type=Path))
@click.argument("system_b", type=click.Path(path_type=Path))
@detector_options
@click.option("--json", "as_json", is_flag=True, help="Print only JSON pairs and classes.")
@click.option(
    "--explain",
    is_flag=True,
    help="Show the compared (pretty-printed, renamed) lines of each pair side by side.",
)
def clones_command(system_a: Path, system_b: Path, as_json: bool, explain: bool, **options) -> None:
    """Find clones between SYSTEM_A and SYSTEM_B (files or folders).

    Only pairs with one fragment from each system are reported (NiCad's cross-clone mode),
    e.g. canonical solutions against generated samples:

    \b
      cloneprobe clones examples/canonical examples/samples
      cloneprobe clones canon/ samples/ --profile nicad --min-lines 5
      cloneprobe clones canon/ samples/ --type 3 --json | jq '.pairs | length'
    """
    try:
        config = build_config(**options)
    except ValueError as error:
        raise ConfigError(str(error)) from error
    report = find_clones(system_a, system_b, config)
    if as_json:
        click.echo(json.dumps(report.to_dict(explain=explain), indent=2))
    else:
        print_report(report, explain=explain)


__all__ = ["CloneDetectorError", "build_config", "clones_command", "detector_options"]
