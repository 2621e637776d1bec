"""The audit's flow, stage by stage: generate, import, execute, detect, report.

Commands call these functions with typed settings (`settings.py`) and a `Reporter` for
progress; the functions know nothing of the command line. Data flows one way: benchmarks ->
generation -> execution and detection -> aggregation -> the report dictionary.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from .aggregate import group_samples
from .benchmarks import (
    Benchmark,
    BenchmarkError,
    PromptSet,
    load_benchmark,
    load_prompt_set,
    load_prompt_sets,
    select_tasks,
)
from .detection import (
    CanonicalFragments,
    DetectionSettings,
    DetectionStore,
    SampleProgram,
    detect_samples,
)
from .execution import ExecutionStore, execute_samples
from .generation import (
    HUMANEVAL_STOPS,
    BackendOptions,
    GenerationError,
    ImportDefaults,
    Plan,
    RunSummary,
    SampleStore,
    SamplingSettings,
    StoredSample,
    check_temperatures,
    import_sample_files,
    library_versions,
    make_backend,
    parse_model_spec,
    run_plan,
)
from .reports import build_report
from .settings import ExecutionSettings, GenerationSettings, SampleSource, SignalSettings
from .signal_flow import compute_signals, count_rows
from .signal_report import signals_section, tasks_list
from .signals.registry import parse_signal_names
from .signals.scoring import ScorerFactory, ScorerOptions

log = logging.getLogger(__name__)


class ProgressTask(Protocol):
    def advance(self, count: int = 1) -> None: ...

    def update(self, completed: int, failed: int = 0, made: int = 0) -> None: ...


class Reporter(Protocol):
    """How the pipeline shows progress (the CLI draws bars; a library caller may not)."""

    def task(self, description: str, total: int, completed: int = 0) -> Any:
        """A context manager giving a `ProgressTask`."""

    def status(self, text: str) -> Any:
        """A context manager shown while something without a count runs (loading a model)."""


class SilentReporter:
    """A Reporter that shows nothing."""

    class _Task:
        def advance(self, count: int = 1) -> None:
            pass

        def update(self, completed: int, failed: int = 0, made: int = 0) -> None:
            pass

    @contextmanager
    def task(self, description: str, total: int, completed: int = 0) -> Iterator[_Task]:
        yield self._Task()

    @contextmanager
    def status(self, text: str) -> Iterator[None]:
        yield


@dataclass(frozen=True)
class Generated:
    """What a generation step left in the store: per model, its run summary and the settings
    key of its samples."""

    summaries: list[RunSummary]
    settings_keys: list[str]


def generate(settings: GenerationSettings, reporter: Reporter) -> Generated:
    """Plan and run generation for every model, filling only what the store lacks."""
    benchmark = load_benchmark(settings.benchmark)
    prompt_sets = load_prompt_sets(settings.prompts, benchmark)
    temperatures = check_temperatures(list(settings.temperatures))
    task_ids = select_tasks(benchmark, settings.limit, settings.tasks)
    specs = [parse_model_spec(m) for m in settings.models]
    backend_options = BackendOptions(
        base_url=settings.base_url,
        api_key=os.environ.get("OPENAI_API_KEY"),
        concurrency=settings.concurrency,
        timeout=settings.timeout,
        batch_size=settings.batch_size,
    )
    summaries, keys = [], []
    with SampleStore(settings.store) as store:
        for spec in specs:
            with reporter.status(f"loading {spec.label} ..."):
                backend = make_backend(spec, backend_options)
            sampling = SamplingSettings(
                mode=settings.mode or backend.default_mode,
                top_p=settings.top_p,
                max_new_tokens=settings.max_new_tokens,
                stop=settings.stops or HUMANEVAL_STOPS,
                seed=settings.seed,
            )
            plan = Plan(prompt_sets, benchmark, temperatures, settings.n, sampling, task_ids)
            keys.append(sampling.key)
            with reporter.task(spec.label, plan.total) as bar:

                def update(already: int, ok: int, failed: int, bar=bar) -> None:
                    bar.update(already + ok + failed, failed=failed, made=ok + failed)

                summary = run_plan(
                    spec.label, backend, plan, store, library_versions(), update,
                    settings.recorded,
                )  # fmt: skip
            summaries.append(summary)
            backend.close()
    return Generated(summaries, keys)


def prompt_set_names(spec: str, benchmark: Benchmark) -> list[str]:
    """The names of the prompt sets a comma-separated spec loads."""
    return [load_prompt_set(s.strip(), benchmark).name for s in spec.split(",") if s.strip()]


def select_samples(
    store: SampleStore,
    models: list[str] | None = None,
    prompt_sets: list[str] | None = None,
    temperatures: list[float] | None = None,
    settings_keys: list[str] | None = None,
    task_ids: frozenset[str] | None = None,
) -> list[StoredSample]:
    """Stored samples without errors, filtered (None: no filter)."""
    return [
        s
        for s in store.samples(models or None, prompt_sets or None)
        if (not temperatures or s.temperature in temperatures)
        and (not settings_keys or s.settings_key in settings_keys)
        and (task_ids is None or s.task_id in task_ids)
    ]


def generated_samples(
    store: SampleStore, settings: GenerationSettings, generated: Generated
) -> list[StoredSample]:
    """The samples a generation step planned (whatever run stored them)."""
    benchmark = load_benchmark(settings.benchmark)
    return select_samples(
        store,
        models=[s.model for s in generated.summaries],
        prompt_sets=prompt_set_names(settings.prompts, benchmark),
        temperatures=sorted({float(t) for t in settings.temperatures}),
        settings_keys=generated.settings_keys,
        task_ids=select_tasks(benchmark, settings.limit, settings.tasks),
    )


def source_samples(store: SampleStore, source: SampleSource, benchmark: Benchmark):
    """The samples `detect`, `execute` and `report` work on: those imported from the source's
    files (imported first), or the store's, filtered by the source's models and prompt sets."""
    models, prompt_sets = list(source.models), list(source.prompt_sets)
    if source.files:
        defaults = ImportDefaults(source.model, source.temperature, source.prompt_set)
        imported = [
            sample
            for done in import_sample_files(
                store, list(source.files), benchmark, defaults, library_versions()
            )
            for sample in done.samples
        ]
        models = sorted({s.model for s in imported})
        prompt_sets = sorted({s.prompt_set for s in imported})
    samples = select_samples(store, models, prompt_sets)
    if not samples:
        raise GenerationError(f"{store.path}: no samples to detect in")
    return samples


def execute(
    store: SampleStore,
    benchmark: Benchmark,
    samples: list[StoredSample],
    settings: ExecutionSettings,
    reporter: Reporter,
) -> None:
    """Run the samples not yet executed against their tests in the sandbox."""
    done = ExecutionStore(store.db).results()
    already = sum(1 for s in samples if s.id in done)
    with reporter.task("executing", len(samples), already) as bar:
        execute_samples(
            store.db, benchmark,
            [(s.id, s.task_id, s.program or "", s.entry_point) for s in samples],
            workers=settings.workers, limits=settings.limits, progress=bar.advance,
        )  # fmt: skip


def audit_samples(
    store: SampleStore,
    benchmark: Benchmark,
    settings: DetectionSettings,
    samples: list[StoredSample],
    progress: Callable[[int], None] | None = None,
    evidence: bool = True,
) -> dict:
    """Judge the samples (reusing stored verdicts) and build the report dictionary, with the
    correctness figures of whatever samples have been executed."""
    programs = [
        SampleProgram(s.id, s.task_id, s.program or "", s.entry_point)  # type: ignore[arg-type]
        for s in samples
    ]
    detect_samples(store.db, benchmark, settings, programs, progress)
    verdicts = DetectionStore(store.db).verdicts(settings.key)
    groups = group_samples(samples, verdicts)
    run_ids = {s.run_id for s in samples}
    sampling = [
        {"run": run["id"], "model": run["model"], "settings": run["settings"],
         "versions": run["versions"], "status": run["status"]}
        for run in store.runs()
        if run["id"] in run_ids
    ]  # fmt: skip
    executions = ExecutionStore(store.db).results()
    return build_report(
        groups, settings, CanonicalFragments(benchmark), sampling, evidence, executions
    )


def detect_and_report(
    store: SampleStore,
    benchmark: Benchmark,
    settings: DetectionSettings,
    samples: list[StoredSample],
    reporter: Reporter,
    execution: ExecutionSettings | None = None,
) -> dict:
    """Execute (when `execution` is given) and detect what is not yet done, then build the
    report dictionary."""
    if execution is not None:
        execute(store, benchmark, samples, execution, reporter)
    judged = DetectionStore(store.db).done(settings.key)
    already = sum(1 for s in samples if s.id in judged)
    with reporter.task("detecting", len(samples), already) as bar:
        return audit_samples(store, benchmark, settings, samples, progress=bar.advance)


def report_on_source(
    source: SampleSource,
    settings: DetectionSettings,
    reporter: Reporter,
    execution: ExecutionSettings | None = None,
) -> dict:
    """`detect` and `execute`: the source's samples (files imported first), executed when
    `execution` is given, detected, and reported."""
    benchmark = load_benchmark(source.benchmark)
    with SampleStore(source.store) as store:
        samples = source_samples(store, source, benchmark)
        return detect_and_report(store, benchmark, settings, samples, reporter, execution)


def attach_signals(
    report: dict,
    store: SampleStore,
    benchmark: Benchmark,
    samples: list[StoredSample],
    prompt_sets: list[PromptSet],
    settings: SignalSettings,
    reporter: Reporter,
) -> dict:
    """Compute the chosen signals for the report's samples (resuming from the store) and add
    the `tasks` list and the `signals` section to the report."""
    names = settings.names or parse_signal_names(None)
    options = ScorerOptions(
        base_url=settings.base_url, api_key=os.environ.get("OPENAI_API_KEY"),
        batch_size=settings.batch_size, concurrency=settings.concurrency,
        timeout=settings.timeout,
    )  # fmt: skip
    total = count_rows(samples, prompt_sets, benchmark)
    with reporter.task("signals", total) as bar:
        rows = compute_signals(
            store, benchmark, sorted({s.model for s in samples}), prompt_sets, names,
            ScorerFactory(options), bar.advance, settings.reference_model, samples,
        )  # fmt: skip
    report["signals"] = signals_section(rows, names, settings.reference_model)
    report["tasks"] = tasks_list(rows, report)
    return report


def stored_prompt_sets(samples: list[StoredSample], benchmark: Benchmark) -> list[PromptSet]:
    """The prompt sets the samples answer, loaded by the names the store keeps (a set loaded
    from a path the store does not name cannot be reloaded; its tasks are left out)."""
    sets = []
    for name in sorted({s.prompt_set for s in samples}):
        try:
            sets.append(load_prompt_set(name, benchmark))
        except BenchmarkError as error:
            log.warning(
                "prompt set %s: not reloadable (%s); its samples get no signals", name, error
            )
    return sets


def signals_on_source(
    source: SampleSource,
    detection: DetectionSettings,
    settings: SignalSettings,
    reporter: Reporter,
) -> dict:
    """`cloneprobe signals`: the source's samples detected (stored verdicts reused) and their
    signals computed (stored scores reused), as one report with the `tasks` list."""
    benchmark = load_benchmark(source.benchmark)
    with SampleStore(source.store) as store:
        samples = source_samples(store, source, benchmark)
        report = detect_and_report(store, benchmark, detection, samples, reporter)
        prompt_sets = stored_prompt_sets(samples, benchmark)
        return attach_signals(report, store, benchmark, samples, prompt_sets, settings, reporter)
