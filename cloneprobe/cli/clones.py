"""`cloneprobe clones A B`: cross-clone detection between two systems."""

from __future__ import annotations

from pathlib import Path

import click

from .checks import CheckedPath
from .options import clone_detector_options, detector_config, meaning


@click.command("clones")
@click.argument("system_a", type=CheckedPath(path_type=Path))
@click.argument("system_b", type=CheckedPath(path_type=Path))
@clone_detector_options
@click.option("--json", "as_json", is_flag=True,
              help=meaning("--json", ": the pairs and classes, nothing else."))
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
    import json

    from ..clones import find_clones
    from ..errors import UserError
    from ..reports.clones_text import print_clone_report
    from .checks import same_file
    from .console import output_console

    if same_file(Path(system_a), Path(system_b)):  # every pair would be a fragment and itself
        raise UserError(f"{system_a} is both SYSTEM_A and SYSTEM_B; only pairs across the two "
                        "systems are reported, so give two different files or folders")
    report = find_clones(system_a, system_b, detector_config(options))
    if as_json:
        click.echo(json.dumps(report.to_dict(explain=explain), indent=2))
    else:
        print_clone_report(report, output_console(), explain=explain)
