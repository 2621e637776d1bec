"""`cloneprobe control`: the positive control (contaminate a local model, see what catches it)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import UserError
from ..settings import ANSWER_ROOM, DEFAULT_DOSES, ControlSettings
from ..signals.registry import signals_help
from .checks import TEMPERATURE, CheckedPath, FiniteFloat
from .options import benchmark_option, config_option, meaning, option

CONTROL = ControlSettings()
"""The control's own defaults, shown in --help."""


MAX_EPOCHS = 1000
"""More epochs than this is a typo (each epoch fine-tunes on half the benchmark)."""


def _doses(values: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    doses: list[tuple[str, int]] = []
    for value in values:
        name, _, epochs = value.partition("=")
        name = name.strip()
        if (not name or not epochs.isdecimal() or not 1 <= int(epochs) <= MAX_EPOCHS
                or name == "base"):  # fmt: skip
            raise UserError(
                f"--dose {value!r}: give NAME=EPOCHS with a name other than base and 1 to "
                f"{MAX_EPOCHS} epochs, e.g. --dose light=1 --dose heavy=8"
            )
        if name in dict(doses):
            raise UserError(f"--dose {value!r}: the dose {name!r} is given twice (also "
                            f"{name}={dict(doses)[name]}); give each dose once")  # fmt: skip
        doses.append((name, int(epochs)))
    return tuple(doses)


def _prompts(spec: str | None) -> tuple[str, ...] | None:
    if spec is None:
        return None
    return tuple(dict.fromkeys(p.strip() for p in spec.split(",") if p.strip()))


@click.command("control")
@config_option
@click.option("--model", default=CONTROL.model, show_default=True, metavar="SPEC",
              help=meaning("--model", " and contaminates: embedded, or hf:<folder> / a "
                           "folder with a transformers model."))  # fmt: skip
@benchmark_option
@click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1), default=CONTROL.seed,
              show_default=True,
              help=meaning("--seed", "; it also decides the split into contaminated and "
                           "held-out halves."))  # fmt: skip
@click.option("--limit", type=click.IntRange(min=2), help=meaning("--limit", "."))
@option("--dose", "doses", multiple=True, metavar="NAME=EPOCHS", parse=_doses,
              help="A fine-tuned model per dose (repeat); default "
              + ", ".join(f"{name}={epochs}" for name, epochs in DEFAULT_DOSES) + ".")  # fmt: skip
@click.option("--top-layers", type=click.IntRange(min=1),
              default=CONTROL.finetune.top_layers, show_default=True,
              help="Decoder layers trained, from the top.")  # fmt: skip
@click.option("--learning-rate", type=FiniteFloat(0, low_open=True),
              default=CONTROL.finetune.learning_rate,
              show_default=True)  # fmt: skip
@click.option("-n", "n", type=click.IntRange(min=1), default=CONTROL.n, show_default=True,
              help=meaning("-n", " and model."))  # fmt: skip
@click.option("--temperature", type=TEMPERATURE, default=CONTROL.temperature,
              show_default=True,
              help=meaning("--temperature", "."))  # fmt: skip
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=None,
              help=meaning("--max-new-tokens", f" (default: fitted, the longest answer the "
                           f"doses are taught plus {ANSWER_ROOM}: in chat mode the answer "
                           "restates the prompt, and a shorter budget cuts the body)."))
@click.option("--mode", type=click.Choice(["completion", "chat"]),
              help=meaning("--mode", " (default: chat when the model's tokenizer has a chat "
                           "template)."))  # fmt: skip
@click.option("--prompts", "prompts_spec", default=None, metavar="SETS",
              help=meaning("--prompts", " to sample, comma-separated: original (what the "
                           "doses are taught; the verdicts are its) and disguised (names "
                           "changed: a model that writes the canonical under the original "
                           "prompt but not under the disguise remembers it). Default: "
                           "original,disguised where the benchmark has a disguised set, "
                           "else original."))  # fmt: skip
@click.option("--signals", "signal_spec", default=None, metavar="NAMES",
              help=meaning("--signals", f" to compute, comma-separated (default: all: "
                           f"{signals_help()})."))  # fmt: skip
@click.option("--batch-size", type=click.IntRange(min=1), default=CONTROL.batch_size,
              show_default=True,
              help=meaning("--batch-size", ": sequences sampled and texts scored."))
@click.option("--bootstrap", type=click.IntRange(min=100), default=CONTROL.resamples,
              show_default=True,
              help="Resamples for the AUROC intervals.")  # fmt: skip
@click.option("--output", type=CheckedPath(path_type=Path, file_okay=False),
              default=CONTROL.output, show_default=True,
              help=meaning("--output", ": control.sqlite, control.json and "
                           "report.html."))  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help=meaning("--json", ": control.json."))
def control_command(**options) -> None:
    """Positive control: contaminate a local model on purpose and measure which signals
    catch it.

    The tasks are split with --seed into a contaminated and a held-out half; the model is
    fine-tuned on the contaminated half's prompts and canonical solutions, exactly as the
    audit asks it, at each dose; the base model and every dose are audited (samples, clones,
    every signal), and each per-task score is ranked against the split (AUROC with a 95%
    bootstrap interval, clone rates per half); each task gets the combined verdict, whose
    false- and true-positive rates on the halves are reported. The HTML report (report.html)
    has ROC curves and score distributions per half.

    \b
      cloneprobe control                          # embedded SmolLM2-135M, all of HumanEval
      cloneprobe control --limit 40 -n 1          # a quick look
      cloneprobe control --model hf:./my-model --dose heavy=10 --top-layers 2
    """
    doses = _doses(options["doses"]) or DEFAULT_DOSES  # checked before the slow imports
    kind = str(options["model"]).partition(":")[0]
    if kind == "openai":  # a served model: no weights here to fine-tune
        raise UserError(f"--model {options['model']!r}: the control fine-tunes the model's "
                        "weights, so it needs a local model; give embedded, or hf:<folder> "
                        "(a transformers model)")  # fmt: skip
    from cloneprobe.control.run import run_control

    from ..settings import FineTuneSettings
    from ..signals.registry import parse_signal_names
    from .console import error_console, output_console, progress_reporter
    from .plan import print_plan

    settings = ControlSettings(
        model=options["model"], benchmark=options["benchmark_spec"], seed=options["seed"],
        limit=options["limit"], doses=doses,
        finetune=FineTuneSettings(options["top_layers"], options["learning_rate"]),
        n=options["n"], temperature=options["temperature"],
        max_new_tokens=options["max_new_tokens"], mode=options["mode"],
        signals=parse_signal_names(options["signal_spec"]), batch_size=options["batch_size"],
        resamples=options["bootstrap"], output=options["output"],
        prompts=_prompts(options["prompts_spec"]),
    )  # fmt: skip
    tasks = f"the first {settings.limit}" if settings.limit else "all"
    models = 1 + len(settings.doses)
    print_plan(error_console(), "control", [
        f"{settings.model}: fine-tuned at {len(settings.doses)} doses ("
        + ", ".join(f"{name} {epochs} epoch{'s' * (epochs != 1)}"
                    for name, epochs in settings.doses)
        + f") on half of {tasks} tasks of {settings.benchmark} (seed {settings.seed})",
        f"{models} models x {tasks} tasks x {settings.n} samples, prompts "
        f"{', '.join(settings.prompts or ('original', 'disguised (where the benchmark has it)'))}"
        ", "
        f"{settings.max_new_tokens or 'fitted'} new tokens; signals "
        f"{', '.join(settings.signals)}",
        f"output: {settings.output} (its store is reused: a re-run resumes); the ETA of each "
        "step follows its measured rate",
    ])  # fmt: skip
    report = run_control(settings, progress_reporter())
    if options["as_json"]:
        click.echo(json.dumps(report, indent=1))
        return
    from rich.table import Table

    from cloneprobe.evidence.verdict import calibration_line
    from cloneprobe.reports.safe_text import terminal_text

    from ..reports.control_html import HEADER, VERDICT_HEADER, control_rows, verdict_rows

    table = Table(*HEADER, title="positive control: separation of the halves")
    for row in control_rows(report):
        table.add_row(*map(str, row))
    output_console().print(table)
    verdicts = Table(*VERDICT_HEADER, title="the combined verdict on the known halves "
                     f"(rule {report['verdict_rule']})")  # fmt: skip
    for row in verdict_rows(report):
        verdicts.add_row(*row)
    output_console().print(verdicts)
    output_console().print(terminal_text(calibration_line()), highlight=False, soft_wrap=True)
    output_console().print(f"report: {settings.output / 'report.html'}", highlight=False)
