"""First contact: the audit's quick default plan, and the plan every long command prints
before it starts (what it will do, where, and about how long from the store's history; without
history, the run measures its first wave and prints the estimate then, `cloneprobe.warmup`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from ..generation.history import seconds_per_sample
from ..reports.durations import estimate_text

QUICK_LIMIT = 8
"""8 tasks x 2 prompt sets x 1 sample: one batch of 16 for a local model."""
QUICK_N = 1
QUICK_MAX_NEW_TOKENS = 128
STUDY_SCALE = "--limit 164 -n 20 --max-new-tokens 512"
"""The reference study's scale (all 164 HumanEval tasks, 20 samples each, 512 new tokens)."""


def _given(ctx: click.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT", "DEFAULT_MAP")


def apply_quick_defaults(options: dict) -> dict | None:
    """The bare `audit` plans a first complete report within minutes: the first
    QUICK_LIMIT tasks, QUICK_N sample each, QUICK_MAX_NEW_TOKENS new tokens, unless the
    command line or the config says otherwise. Returns the report's `scope` note (what was
    left out and how to ask for the study's scale), or None when the plan was given in full."""
    ctx = click.get_current_context()
    quick = {}
    if not (_given(ctx, "limit") or _given(ctx, "tasks")):
        options["limit"] = quick["limit"] = QUICK_LIMIT
    if not _given(ctx, "n"):
        options["n"] = quick["n"] = QUICK_N
    if not _given(ctx, "max_new_tokens"):
        options["max_new_tokens"] = quick["max_new_tokens"] = QUICK_MAX_NEW_TOKENS
    if not quick:
        return None
    parts = []
    if "limit" in quick:
        parts.append(f"the first {QUICK_LIMIT} tasks")
    if "n" in quick:
        parts.append(f"{QUICK_N} sample per prompt")
    if "max_new_tokens" in quick:
        parts.append(f"{QUICK_MAX_NEW_TOKENS} new tokens")
    return {
        "subset": True,
        "quick_defaults": quick,
        "note": "a quick first look, not the study's scale: " + ", ".join(parts)
        + f"; for the reference study's scale run `cloneprobe audit {STUDY_SCALE}`",
        "study_scale": f"cloneprobe audit {STUDY_SCALE}",
    }


@dataclass(frozen=True)
class Estimate:
    seconds: float
    basis: str


def estimate(store: Path, models: list[str], samples_per_model: int, max_new_tokens: int | None,
             per_model: dict | None = None) -> Estimate | None:  # fmt: skip
    """Time for `samples_per_model` new samples of each model, from the store's history; None
    when a model has none (no figure is guessed: the run measures its first wave and prints
    the revised estimate, `cloneprobe.warmup`)."""
    seconds, bases = 0.0, []
    for model in models:
        known = seconds_per_sample(store, model, max_new_tokens)
        if known is None:
            return None
        rate, count = known
        bases.append(f"{model}: {rate:.2g} s/sample over {count} earlier samples in the store")
        seconds += rate * samples_per_model
        if per_model is not None:
            per_model[model] = rate * samples_per_model
    return Estimate(seconds, "; ".join(bases))


def print_plan(console, command: str, lines: list[str]) -> None:
    """`command: plan` and its lines, on stderr before the work starts."""
    from rich.text import Text

    from cloneprobe.reports.safe_text import terminal_text

    console.print(Text(command if command == "plan" else f"{command}: plan", style="bold"),
                  highlight=False)  # fmt: skip
    for line in lines:
        console.print(terminal_text("  " + line), highlight=False)


def _wave(spec: str, settings) -> int:
    """Samples the first wave of a model holds, as `warmup.first_wave` counts them once it
    is loaded (a server has no batch)."""
    from ..generation import parse_model_spec
    from ..warmup import wave_size

    batch = None if parse_model_spec(spec).kind == "openai" else settings.batch_size
    return wave_size(batch, settings.concurrency, settings.n)


def generation_plan_lines(settings, scope: dict | None = None, reporter=None) -> list[str]:
    """What a generation will ask for: samples, tasks, prompt sets, models, the store, and an
    estimate (new samples only are generated; the store's are reused), which a plain-line
    `reporter` shows as the ETA until the first samples are back."""
    from ..benchmarks import load_benchmark, load_prompt_sets, select_tasks
    from ..generation import parse_model_spec

    labels = [parse_model_spec(m).label for m in settings.models]  # a bad spec: its error first
    benchmark = load_benchmark(settings.benchmark)
    prompt_sets = load_prompt_sets(settings.prompts, benchmark)
    task_ids = select_tasks(benchmark, settings.limit, settings.tasks)
    prompts = sum(
        1 for ps in prompt_sets for p in ps.prompts if task_ids is None or p.task_id in task_ids
    )
    tasks = len(task_ids) if task_ids is not None else len(benchmark)
    per_model = prompts * len(settings.temperatures) * settings.n
    models = list(settings.models)
    temperatures = ", ".join(f"{t:g}" for t in settings.temperatures)
    lines = [
        f"{per_model * len(models):,} samples: {tasks} of {len(benchmark)} tasks, "
        f"{prompts} prompts ({', '.join(ps.name for ps in prompt_sets)}), "
        f"{settings.n} per prompt, temperatures {temperatures}, "
        f"{settings.max_new_tokens} new tokens",
        f"models: {', '.join(models)}; store: {settings.store} (samples it holds are reused)",
    ]
    planned: dict[str, float] = {}
    guess = estimate(settings.store, models, per_model, settings.max_new_tokens, planned)
    if guess is not None and hasattr(reporter, "planned"):
        label = dict(zip(models, labels, strict=True))
        reporter.planned.update({label[m]: seconds for m, seconds in planned.items()})
    if guess is not None:
        lines.append(f"estimate: about {estimate_text(guess.seconds)} if none is stored yet "
                     f"({guess.basis}); the ETA follows the measured rate")  # fmt: skip
    elif all(per_model <= _wave(spec, settings) for spec in models):
        lines.append(f"estimate: none yet (no history of this model in the store); the plan "
                     f"is one batch ({per_model} samples a model), so the first samples back "
                     "are all of them and nothing is measured before")  # fmt: skip
    else:
        lines.append("estimate: none yet (no history of this model in the store); it is "
                     "measured on this machine from the first batch of samples back and "
                     "printed then (`measured: ...`), and the ETA follows")  # fmt: skip
    if scope is not None:
        lines.append(scope["note"])
    return lines
