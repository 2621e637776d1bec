"""Running a sampling plan: ask the backend for what the store lacks, store results as they come."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..benchmarks import Benchmark, PromptSet
from .backends import Backend, GenerationRequest, GenerationResult
from .postprocess import Understood, chat_message, understand
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


def stored_already(model: str, plan: Plan, store: SampleStore) -> bool:
    """Whether the store holds every sample of the plan without error (nothing to generate)."""
    done = store.done_keys(model, plan.settings.key)
    return all(
        (prompt_set.name, variant, task_id, float(temperature), i) in done
        for prompt_set, variant, task_id, _, temperature in plan.slots()
        for i in range(plan.n)
    )


WITHHELD = "content_filter"
"""The finish reason of a text the server's filter withheld (OpenAI's name, which vLLM and
other compatible servers use too)."""


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
    claimed_elsewhere: int = 0
    """Samples of the plan another live run was generating (left to it)."""
    first_error: str | None = None
    """The first failed request's error, if any failed."""
    withheld: int = 0
    """Samples the server said it withheld (finish reason `content_filter`): stored as the
    (often empty) text it sent, so they count as answers that fail."""


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
    redact: Callable[[str], str] | None = None,
) -> RunSummary:
    """Fill the store with what the plan asks and it has neither stored nor another live run
    claimed; `config` (the resolved experiment configuration, if any, without secrets) is kept
    with the run, and `redact` hides secrets in the errors stored."""
    settings = plan.settings
    redact = redact or (lambda text: text)
    run_settings = {**settings.to_dict(), **backend.describe(), "config": config or {}}
    run_id = store.start_run(model, run_settings, versions)
    try:
        done = store.done_keys(model, settings.key)
        wanted = [
            (prompt_set.name, variant, task_id, float(temperature), i)
            for prompt_set, variant, task_id, _, temperature in plan.slots()
            for i in range(plan.n)
            if (prompt_set.name, variant, task_id, float(temperature), i) not in done
        ]
        claimed = store.claim(run_id, model, settings.key, wanted)
    except BaseException:
        store.end_run(run_id, "interrupted")
        raise
    renamed = {
        (prompt_set.name, prompt.variant, prompt.task_id): prompt.entry_point
        for prompt_set in plan.prompt_sets
        for prompt in prompt_set.prompts
        if prompt.entry_point
    }  # prompt variants that rename the entry point (the study's _P6 files)
    requests = []
    for prompt_set, variant, task_id, text, temperature in plan.slots():
        missing = tuple(
            i
            for i in range(plan.n)
            if (prompt_set.name, variant, task_id, float(temperature), i) in claimed
        )
        task = plan.benchmark.get(task_id)
        entry_point = renamed.get((prompt_set.name, variant, task_id)) or (
            task.entry_point if task else ""
        )
        # one request per run of consecutive missing indices: sample i of a request is
        # sample (first index + i), so a seeded sample's draw depends only on its own index
        for indices in _consecutive_runs(missing):
            pending = _Pending(
                prompt_set.name, variant, task_id, float(temperature), indices, text, entry_point
            )
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
    counts = {"ok": 0, "failed": 0, "prompt_tokens": 0, "completion_tokens": 0, "withheld": 0}
    errors: list[str] = []
    started = time.monotonic()
    writer = _Writer(store, run_id, held=backend.signals_bursts)

    def on_result(result: GenerationResult) -> None:
        rows = [
            replace(row, error=redact(row.error)) if row.error else row
            for row in _samples(model, run_id, settings, result)
        ]
        writer.add(rows)
        failed = sum(1 for row in rows if row.error)
        errors.extend(row.error for row in rows[:1] if row.error)
        counts["ok"] += len(rows) - failed
        counts["withheld"] += sum(row.finish_reason == WITHHELD for row in rows)
        counts["failed"] += failed
        counts["prompt_tokens"] += result.prompt_tokens or 0
        counts["completion_tokens"] += result.completion_tokens or 0
        if progress:
            progress(already, counts["ok"], counts["failed"])

    on_result.flush = writer.flush  # type: ignore[attr-defined]  # the backend's bursts
    elsewhere = len(wanted) - len(claimed)
    already = plan.total - len(wanted)
    if progress:
        progress(already, 0, 0)
    status = "interrupted"
    try:
        if requests:
            backend.generate(requests, on_result)
        status = "finished"
    finally:
        try:
            writer.flush()  # what an interrupt or an error left held is stored all the same
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
        claimed_elsewhere=elsewhere,
        first_error=errors[0] if errors else None,
        withheld=counts["withheld"],
    )


MAX_HELD_SAMPLES = 1000
"""Samples a burst of results may hold unwritten before they are written all the same."""
MAX_HELD_SECONDS = 1.0
"""Seconds a burst may hold samples unwritten before they are written all the same."""


class _Writer:
    """Writes the samples of each result as it comes (`held` False), or holds them until the
    backend says a burst of results has been handed over (`flush`), and writes the burst in
    one transaction: a commit per result cost 0.4-1 ms, as much as sending its request. A
    burst holds at most MAX_HELD_SAMPLES samples or MAX_HELD_SECONDS seconds, so a
    crash (SIGKILL) loses at most those besides the requests in flight; an interrupt or an
    error stores what is held before the run ends (`run_plan`'s `finally`)."""

    def __init__(self, store: SampleStore, run_id: int, held: bool) -> None:
        self.store, self.run_id, self.held = store, run_id, held
        self.rows: list[StoredSample] = []
        self.since = 0.0

    def add(self, rows: list[StoredSample]) -> None:
        if not self.rows:
            self.since = time.monotonic()
        self.rows.extend(rows)
        if not self.held or len(self.rows) >= MAX_HELD_SAMPLES or (
            time.monotonic() - self.since >= MAX_HELD_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        if self.rows:
            rows, self.rows = self.rows, []
            self.store.add(rows)
        self.store.beat(self.run_id)


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
    tokens, estimated = sample_token_counts(result)
    stops = settings.stop if settings.mode == "completion" else ()
    # `understand` is a pure function of the text (the prompt, entry point and stops are the
    # request's): a text the request's answer repeats (a model at a low temperature writes
    # the same body several times out of 20) is understood once, each parse 40-150 us
    understood_as: dict[str, Understood] = {}
    rows = []
    for index, text, reason, completion_tokens in zip(
        pending.indices, result.texts, result.finish_reasons, tokens, strict=False
    ):
        text = text.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate: stored as ?
        understood = understood_as.get(text)
        if understood is None:
            understood = understood_as[text] = understand(
                text, pending.prompt, pending.entry_point, stops
            )
        rows.append(
            StoredSample(
                **base,
                sample_index=index,
                raw=text,
                completion=understood.completion,
                program=understood.program,
                form=understood.form,
                entry_point=pending.entry_point or None,
                repairs="; ".join(understood.repairs) or None,
                unrepairable=understood.unrepairable,
                finish_reason=reason,
                prompt_tokens=(
                    result.prompt_tokens_each
                    if result.prompt_tokens_each is not None
                    else (result.prompt_tokens or 0) // max(len(result.texts), 1)
                ),
                completion_tokens=completion_tokens,
                tokens_estimated=estimated,
                latency=result.latency,
            )
        )
    return rows


def sample_token_counts(result: GenerationResult) -> tuple[list[int | None], bool | None]:
    """Each text's completion tokens, and whether they are estimates: the backend's own
    per-text counts when it has them (exact), else the request's total shared out so that the
    shares add up to it (an estimate, marked as such); None where nothing was counted."""
    texts = len(result.texts)
    if result.text_tokens is not None and len(result.text_tokens) == texts:
        return list(result.text_tokens), False
    if result.completion_tokens is None or not texts:
        return [None] * texts, None
    share, rest = divmod(result.completion_tokens, texts)
    return [share + (1 if i < rest else 0) for i in range(texts)], texts > 1
