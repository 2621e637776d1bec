"""Running a sampling plan: ask the backend for what the store lacks, store results as they come."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..benchmarks import Benchmark, PromptSet
from .backends import Backend, GenerationRequest, GenerationResult
from .postprocess import chat_message, understand
from .sampling import SamplingSettings
from .store import SampleStore, StoredSample

Progress = Callable[[int, int, int], None]
"""Called with (samples already stored before this run, samples stored by it, samples failed)
once before the first request and after each request finishes."""


@dataclass(frozen=True)
class Plan:
    """n samples per task and prompt variant, per temperature, with one set of settings."""

    prompt_sets: Sequence[PromptSet]
    benchmark: Benchmark
    temperatures: Sequence[float]
    n: int
    settings: SamplingSettings
    task_ids: frozenset[str] | None = None
    """Only these tasks (None: every task of the prompt sets)."""

    def slots(self) -> list[tuple[PromptSet, str, str, str, float]]:
        """(prompt set, variant, task id, prompt text, temperature) for every prompt asked."""
        return [
            (prompt_set, prompt.variant, prompt.task_id, prompt.text, temperature)
            for prompt_set in self.prompt_sets
            for prompt in prompt_set.prompts
            if self.task_ids is None or prompt.task_id in self.task_ids
            for temperature in self.temperatures
        ]

    @property
    def total(self) -> int:
        return len(self.slots()) * self.n


@dataclass(frozen=True)
class RunSummary:
    model: str
    run_id: int
    planned: int
    already_stored: int
    generated: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    status: str


@dataclass(frozen=True)
class _Pending:
    prompt_set: str
    variant: str
    task_id: str
    temperature: float
    indices: tuple[int, ...]
    prompt: str
    entry_point: str


def run_plan(
    model: str,
    backend: Backend,
    plan: Plan,
    store: SampleStore,
    versions: dict,
    progress: Progress | None = None,
    config: dict | None = None,
) -> RunSummary:
    """Fill the store with what the plan asks and it does not have yet; `config` (the resolved
    experiment configuration, if any) is kept with the run."""
    settings = plan.settings
    done = store.done_keys(model, settings.key)
    requests = []
    for prompt_set, variant, task_id, text, temperature in plan.slots():
        missing = tuple(
            i
            for i in range(plan.n)
            if (prompt_set.name, variant, task_id, float(temperature), i) not in done
        )
        task = plan.benchmark.get(task_id)
        # one request per run of consecutive missing indices: sample i of a request is
        # sample (first index + i), so a seeded sample's draw depends only on its own index
        for indices in _consecutive_runs(missing):
            pending = _Pending(
                prompt_set.name, variant, task_id, float(temperature), indices, text,
                task.entry_point if task else "",
            )  # fmt: skip
            requests.append(
                GenerationRequest(
                    key=pending,
                    prompt=chat_message(text) if settings.mode == "chat" else text,
                    n=len(indices),
                    temperature=temperature,
                    top_p=settings.top_p,
                    max_new_tokens=settings.max_new_tokens,
                    stop=settings.stop if settings.mode == "completion" else (),
                    mode=settings.mode,
                    # offset by the first index: growing n adds new draws, not copies
                    seed=None if settings.seed is None else settings.seed + indices[0],
                )
            )
    run_settings = {**settings.to_dict(), **backend.describe(), "config": config or {}}
    run_id = store.start_run(model, run_settings, versions)
    counts = {"ok": 0, "failed": 0, "prompt_tokens": 0, "completion_tokens": 0}
    started = time.monotonic()

    def on_result(result: GenerationResult) -> None:
        rows = _samples(model, run_id, settings, result)
        store.add(rows)
        failed = sum(1 for row in rows if row.error)
        counts["ok"] += len(rows) - failed
        counts["failed"] += failed
        counts["prompt_tokens"] += result.prompt_tokens or 0
        counts["completion_tokens"] += result.completion_tokens or 0
        if progress:
            progress(already, counts["ok"], counts["failed"])

    already = plan.total - sum(r.n for r in requests)
    if progress:
        progress(already, 0, 0)
    status = "interrupted"
    try:
        if requests:
            backend.generate(requests, on_result)
        status = "finished"
    finally:
        store.end_run(run_id, status)
    return RunSummary(
        model=model,
        run_id=run_id,
        planned=plan.total,
        already_stored=already,
        generated=counts["ok"],
        failed=counts["failed"],
        prompt_tokens=counts["prompt_tokens"],
        completion_tokens=counts["completion_tokens"],
        seconds=time.monotonic() - started,
        status=status,
    )


def _consecutive_runs(indices: tuple[int, ...]) -> list[tuple[int, ...]]:
    """(0, 1, 4, 5, 7) -> [(0, 1), (4, 5), (7,)]."""
    runs: list[list[int]] = []
    for index in indices:
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return [tuple(run) for run in runs]


def _samples(
    model: str, run_id: int, settings: SamplingSettings, result: GenerationResult
) -> list[StoredSample]:
    pending: _Pending = result.request.key  # type: ignore[assignment]
    base = {
        "model": model,
        "settings_key": settings.key,
        "prompt_set": pending.prompt_set,
        "variant": pending.variant,
        "task_id": pending.task_id,
        "temperature": pending.temperature,
        "mode": settings.mode,
        "run_id": run_id,
    }
    if result.error is not None or len(result.texts) < len(pending.indices):
        error = result.error or "fewer samples returned than asked"
        return [StoredSample(**base, sample_index=i, error=error) for i in pending.indices]
    count = max(len(result.texts), 1)
    rows = []
    for index, text, reason in zip(
        pending.indices, result.texts, result.finish_reasons, strict=False
    ):
        stops = settings.stop if settings.mode == "completion" else ()
        understood = understand(text, pending.prompt, pending.entry_point, stops)
        rows.append(
            StoredSample(
                **base,
                sample_index=index,
                raw=text,
                completion=understood.completion,
                program=understood.program,
                form=understood.form,
                finish_reason=reason,
                prompt_tokens=(result.prompt_tokens or 0) // count,
                completion_tokens=(result.completion_tokens or 0) // count,
                latency=result.latency,
            )
        )
    return rows
