"""First contact: the audit's quick default plan, and the plan every long command prints
before it starts (what it will do, where, and about how long from the store's history)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import click

from ..reports.durations import estimate_text

QUICK_LIMIT = 8
"""8 tasks x 2 prompt sets x 1 sample: one batch of 16 for a local model."""
QUICK_N = 1
QUICK_MAX_NEW_TOKENS = 128
STUDY_SCALE = "--limit 164 -n 20 --max-new-tokens 512"
"""The reference study's scale (all 164 HumanEval tasks, 20 samples each, 512 new tokens)."""

EMBEDDED_SECONDS_PER_SAMPLE = 6.0
"""A rough figure for the embedded model at 128 new tokens on a 2-core CPU (bfloat16 or
float32, batch 16, a shared machine), used only while the store has no history of it."""


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


def history_seconds_per_sample(store: Path, model: str,
                               max_new_tokens: int | None) -> tuple[float, int] | None:  # fmt: skip
    """Seconds per stored sample of `model` over the store's finished generation runs (the
    ones with the same --max-new-tokens when there are any), and how many samples that rests
    on; None without history."""
    if not Path(store).is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{Path(store).resolve()}?mode=ro", uri=True, timeout=1)
        try:
            rows = db.execute(
                "SELECT r.settings, r.ended_at - r.started_at, "
                "(SELECT COUNT(*) FROM samples s WHERE s.run_id = r.id AND s.error IS NULL) "
                "FROM runs r WHERE r.model = ? AND r.ended_at IS NOT NULL",
                (model,),
            ).fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    runs = []
    for settings, seconds, count in rows:
        try:
            recorded = json.loads(settings)
        except (TypeError, ValueError):
            continue
        if not isinstance(recorded, dict) or "imported_from" in recorded or not count:
            continue
        runs.append((recorded.get("max_new_tokens"), float(seconds or 0), int(count)))
    same = [r for r in runs if r[0] == max_new_tokens]
    chosen = same or runs
    total = sum(c for _, _, c in chosen)
    if not total:
        return None
    return sum(s for _, s, _ in chosen) / total, total


def estimate(store: Path, models: list[str], samples_per_model: int, max_new_tokens: int | None,
             per_model: dict | None = None) -> Estimate | None:  # fmt: skip
    """Time for `samples_per_model` new samples of each model, from the store's history, or
    a rough figure for the embedded model; None when nothing is known (an API model never
    run on this store)."""
    seconds, bases = 0.0, []
    for model in models:
        known = history_seconds_per_sample(store, model, max_new_tokens)
        if known is not None:
            rate, count = known
            bases.append(f"{model}: {rate:.2g} s/sample over {count} earlier samples in the store")
        elif model == "embedded":
            rate = EMBEDDED_SECONDS_PER_SAMPLE * (max_new_tokens or 512) / QUICK_MAX_NEW_TOKENS
            bases.append(f"{model}: a rough {rate:.2g} s/sample on a 2-core CPU (no history yet)")
        else:
            return None
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
    else:
        lines.append("estimate: none yet (no history of this model in the store); the ETA "
                     "appears once the first samples are back")  # fmt: skip
    if scope is not None:
        lines.append(scope["note"])
    return lines
