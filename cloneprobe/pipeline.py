"""The audit's flow, stage by stage: generate, import, execute, detect, report.

Commands call these functions with typed settings (`settings.py`) and a `Reporter` for
progress; the functions know nothing of the command line. Data flows one way: benchmarks ->
generation -> execution and detection -> aggregation -> the report (`AuditReport`, one typed
value for every command and every Python caller: `report_store` gives what `cloneprobe report`
renders).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cloneprobe.audit.ahead import detect_while
from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.audit.detection import CanonicalFragments, DetectionSettings
from cloneprobe.audit.stream import audit_stream
from cloneprobe.generation.selection import SampleSelection

from .audit.report import ReportBuilder
from .benchmarks import (
    Benchmark,
    BenchmarkError,
    PromptSet,
    load_benchmark,
    load_prompt_set,
    load_prompt_sets,
    select_tasks,
)
from .errors import UserError
from .evidence.stream import StreamedEvidence
from .execution import ExecutionStore, execute_samples
from .generation import (
    GenerationError,
    ImportDefaults,
    SampleStore,
    StoredSample,
    import_sample_files,
    library_versions,
)
from .reports.durations import estimate_text, measured_text
from .settings import ExecutionSettings, GenerationSettings, SampleSource, SignalSettings

if TYPE_CHECKING:
    from .generation import Plan, RunSummary
    from .generation.secrets import Redactor

# Generation's backends and secrets, the signals' flow and scoring, and the warm-up are
# imported by the functions that use them: `execute`, `detect` and `report` never do (about
# 40 ms of every such command on a quiet machine).

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

    def warn(self, text: str) -> None:
        """Something the user must know (samples skipped, left to another run)."""

    def plan(self, lines: list[str]) -> None:
        """The plan of the work about to start (the CLI prints it before long work)."""


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

    def warn(self, text: str) -> None:
        pass

    def plan(self, lines: list[str]) -> None:
        pass


@dataclass(frozen=True)
class Generated:
    """What a generation step left in the store: per model, its run summary and the settings
    key of its samples."""

    summaries: list[RunSummary]
    settings_keys: list[str]


def generate(settings: GenerationSettings, reporter: Reporter) -> Generated:
    """Plan and run generation for every model, filling only what the store lacks; raises
    when a model's every request failed (nothing to audit)."""
    from .generation import check_temperatures, parse_model_spec
    from .generation.secrets import Redactor, url_secrets

    benchmark = load_benchmark(settings.benchmark)
    prompt_sets = load_prompt_sets(settings.prompts, benchmark)
    temperatures = check_temperatures(list(settings.temperatures))
    task_ids = select_tasks(benchmark, settings.limit, settings.tasks)
    specs = [parse_model_spec(m) for m in settings.models]
    api_key = settings.api_key or os.environ.get("OPENAI_API_KEY")
    redactor = Redactor.of([api_key, *url_secrets(settings.base_url)])
    with hidden_in_logs(redactor):
        return _generate(settings, reporter, benchmark, prompt_sets, temperatures, task_ids,
                         specs, api_key, redactor)  # fmt: skip


def _generate(settings, reporter, benchmark, prompt_sets, temperatures, task_ids, specs,
              api_key, redactor) -> Generated:  # fmt: skip
    from .generation import (
        HUMANEVAL_STOPS,
        BackendOptions,
        Plan,
        SamplingSettings,
        make_backend,
        run_plan,
    )
    from .generation.backends import local_sampling_defaults
    from .generation.history import seconds_per_sample
    from .generation.runner import stored_already
    from .generation.secrets import redact_url
    from .warmup import WarmUp, first_wave

    recorded = redactor.data({**settings.recorded, "base_url": redact_url(settings.base_url)})
    backend_options = BackendOptions(
        base_url=settings.base_url,
        api_key=api_key,
        concurrency=settings.concurrency,
        timeout=settings.timeout,
        batch_size=settings.batch_size,
        dtype=settings.dtype,
    )
    summaries, keys = [], []
    with SampleStore(settings.store) as store:
        for spec in specs:

            def plan_of(mode: str, dtype: str | None) -> Plan:
                sampling = SamplingSettings(
                    mode=settings.mode or mode,
                    top_p=settings.top_p,
                    max_new_tokens=settings.max_new_tokens,
                    stop=settings.stops or HUMANEVAL_STOPS,
                    seed=settings.seed,
                    dtype=dtype,
                )
                return Plan(prompt_sets, benchmark, temperatures, settings.n, sampling, task_ids)

            expected = local_sampling_defaults(spec, backend_options)
            held = plan_of(*expected) if expected else None
            if held and held.total and stored_already(spec.label, held, store):
                # every sample is stored: a local model is not loaded (that can take minutes)
                summaries.append(stored_summary(spec.label, held))
                keys.append(held.settings.key)
                continue
            with reporter.status(f"loading {spec.label} ..."):
                backend = make_backend(spec, backend_options)
            plan = plan_of(backend.default_mode, getattr(backend, "dtype", None))
            sampling = plan.settings
            if not plan.total:
                raise GenerationError(
                    f"the plan holds no samples: prompt sets {settings.prompts!r} have no prompt "
                    "for the selected tasks; check --prompts and --tasks/--limit"
                )
            keys.append(sampling.key)
            unknown = seconds_per_sample(settings.store, spec.label, settings.max_new_tokens)
            warm = WarmUp(first_wave(backend, settings.n)) if unknown is None else None
            with reporter.task(spec.label, plan.total) as bar:

                def update(already: int, ok: int, failed: int, bar=bar, warm=warm,
                           total=plan.total, label=spec.label) -> None:  # fmt: skip
                    bar.update(already + ok + failed, failed=failed, made=ok + failed)
                    measured = warm.measure(already, total, ok) if warm else None
                    if measured:
                        reporter.plan([measured_text(label, *astuple(measured))])

                try:
                    summary = run_plan(
                        spec.label, backend, plan, store, library_versions(), update,
                        recorded, redactor.text,
                    )  # fmt: skip
                finally:
                    backend.close()
            summaries.append(summary)
            check_generated(summary, store)
            if summary.claimed_elsewhere:
                reporter.warn(
                    f"{spec.label}: {summary.claimed_elsewhere} samples were being generated by "
                    "another run on this store and were left to it; run the command again "
                    "when it has finished to audit them all"
                )
            if summary.withheld:
                reporter.warn(
                    f"{spec.label}: the server withheld {summary.withheld} samples (finish "
                    "reason content_filter); they are stored as the text it sent, and a "
                    "withheld answer fails its tests like any other"
                )
            if summary.failed:
                reporter.warn(
                    f"{spec.label}: {summary.failed} samples failed (first error: "
                    f"{summary.first_error}); they are stored and retried by the next run"
                )
    return Generated(summaries, keys)


def stored_summary(model: str, plan: Plan) -> RunSummary:
    """The summary of a plan the store already held in full (no run was started)."""
    from .generation import RunSummary

    return RunSummary(model=model, run_id=0, planned=plan.total, already_stored=plan.total,
                      generated=0, failed=0, prompt_tokens=0, completion_tokens=0, seconds=0.0,
                      status="stored")  # fmt: skip


def check_generated(summary: RunSummary, store: SampleStore) -> None:
    """A run that asked and got nothing back is an error, not an empty report."""
    if summary.failed and not summary.generated and not summary.already_stored:
        failed = (f"{summary.model}: all {summary.failed} requested samples failed (first error: "
                  f"{summary.first_error}); check the model, --base-url and API key, then run "
                  "the same command again")  # fmt: skip
        error = GenerationError(f"{failed} (the failures are stored in {store.path} and "
                                "retried)")  # fmt: skip
        # a store this command made holds nothing else, so the command removes it again
        error.store = Path(os.path.abspath(store.path))
        error.if_store_removed = (f"{failed} ({store.path}, which this command made, held "
                                  "nothing else and is removed)")  # fmt: skip
        raise error


@contextmanager
def hidden_in_logs(redactor: Redactor) -> Iterator[None]:
    """Hide the secrets in every log record while generating (--debug logs HTTP requests)."""
    from .generation.secrets import RedactingFilter

    handlers = logging.getLogger().handlers
    hiding = RedactingFilter(redactor)
    for handler in handlers:
        handler.addFilter(hiding)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(hiding)


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
) -> SampleSelection:
    """Stored samples without errors, filtered (None: no filter), streamed when iterated."""
    return SampleSelection(
        store, tuple(models or ()), tuple(prompt_sets or ()), tuple(temperatures or ()),
        tuple(settings_keys or ()), task_ids,
    )  # fmt: skip


def generated_samples(
    store: SampleStore, settings: GenerationSettings, generated: Generated
) -> SampleSelection:
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


def source_samples(store: SampleStore, source: SampleSource, benchmark: Benchmark,
                   claims: dict | None = None):  # fmt: skip
    """The samples `detect`, `execute` and `report` work on: those imported from the source's
    files (imported first; the files' own verdicts go into `claims`), or the store's, filtered
    by the source's models and prompt sets."""
    models, prompt_sets = list(source.models), list(source.prompt_sets)
    settings_keys: list[str] = []
    if source.files:
        defaults = ImportDefaults(source.model, source.temperature, source.prompt_set,
                                  source.max_sample_bytes, source.as_written)  # fmt: skip
        imported = []
        for done in import_sample_files(
            store, list(source.files), benchmark, defaults, library_versions()
        ):
            imported.extend(done.samples)
            if claims is not None:
                claims.update(done.claims)
        models = sorted({s.model for s in imported})
        prompt_sets = sorted({s.prompt_set for s in imported})
        settings_keys = sorted({s.settings_key for s in imported})
    return select_samples(store, models, prompt_sets, settings_keys=settings_keys)


def add_file_verdicts(report: AuditReport, store: SampleStore, benchmark: Benchmark,
                      samples: SampleSelection, claims: dict) -> AuditReport:  # fmt: skip
    """The files' own verdicts against the sandbox's, as the report's `file_verdicts`."""
    if claims:
        from cloneprobe.audit.file_verdicts import compare_file_verdicts

        return report.with_sections(
            file_verdicts=compare_file_verdicts(store, benchmark, samples, claims))
    return report


def execute(
    store: SampleStore,
    benchmark: Benchmark,
    samples: SampleSelection,
    settings: ExecutionSettings,
    reporter: Reporter,
    required: bool = False,
) -> None:
    """Run the samples not yet executed (on the same program and tests) in the sandbox. Samples
    of tasks without Python tests (Java tasks) cannot be executed: said, and with `required`
    an error when no sample can be."""
    rows = [(s.id, s.task_id, s.program or "", s.entry_point) for s in samples]
    runnable = sum(1 for _, task_id, *_ in rows if _executable(benchmark, task_id))
    if rows and runnable < len(rows):
        reporter.warn(
            f"{len(rows) - runnable} of {len(rows)} samples not executed: their tasks have no "
            "Python tests (Java tasks, or tasks without a `test`); pass@k leaves them out"
        )
        if required and not runnable:
            raise UserError(
                f"none of the {len(rows)} samples can be executed: their tasks have no Python "
                "tests (execute runs Python tests only); use `detect` for clone detection"
            )
    with reporter.task("executing", len(rows)) as bar:
        execute_samples(
            store.db, benchmark, rows,  # type: ignore[arg-type]
            workers=settings.workers, limits=settings.limits, progress=bar.advance,
        )  # fmt: skip


def _executable(benchmark: Benchmark, task_id: str) -> bool:
    task = benchmark.get(task_id)
    return task is not None and bool(task.test) and task.language == "python"


def _unmatched(samples: SampleSelection) -> str:
    """Why a selection is empty: the --model or --prompts given that the store does not hold
    (naming what it holds), else that nothing is stored without error."""
    rows = samples.store.db.execute(
        "SELECT DISTINCT model, prompt_set FROM samples WHERE error IS NULL").fetchall()
    for flag, wanted, held in (("--model", samples.models, {r[0] for r in rows}),
                               ("--prompts", samples.prompt_sets, {r[1] for r in rows})):
        missing = [name for name in wanted if name not in held]
        if missing and held:
            return (f": {flag} {', '.join(missing)} matches nothing stored (it holds "
                    f"{', '.join(sorted(held))}); give one of those")  # fmt: skip
    return (" (none stored without error matches); generate or import samples first, or "
            "check --model/--prompts")


def detect_and_report(
    store: SampleStore,
    benchmark: Benchmark,
    settings: DetectionSettings,
    samples: SampleSelection,
    reporter: Reporter,
    execution: ExecutionSettings | None = None,
    required_execution: bool = False,
) -> AuditReport:
    """Execute (when `execution` is given) and detect what is not yet done, then build the
    report; no sample to report on is an error."""
    total = samples.count()
    if not total:
        raise UserError(f"{store.path}: no samples to report on{_unmatched(samples)}")
    announce(reporter, _judging_plan(store, total, execution))
    canonicals = CanonicalFragments(benchmark)
    view = None
    if execution is not None:
        view = execute_and_detect_ahead(store, benchmark, settings, samples, canonicals,
                                        execution, reporter, required_execution)  # fmt: skip
    with reporter.task("detecting", total) as bar:
        view = view or StreamedEvidence(canonicals, settings, samples)
        builder = ReportBuilder(settings, canonicals, view=view)
        report = audit_stream(store, benchmark, settings, samples, builder, progress=bar.advance)
    if not report.groups:
        reasons = ", ".join(f"{n} {why}" for why, n in report.skipped.items())
        raise UserError(
            f"{store.path}: none of the {total} samples could be judged ({reasons}); give the "
            "--benchmark the samples answer"
        )
    return report


def execute_and_detect_ahead(
    store: SampleStore,
    benchmark: Benchmark,
    settings: DetectionSettings,
    samples: SampleSelection,
    canonicals: CanonicalFragments,
    execution: ExecutionSettings,
    reporter: Reporter,
    required: bool = False,
    ahead: bool | None = None,
) -> StreamedEvidence | None:
    """Execute the samples, detecting ahead meanwhile where a core is idle (`audit.ahead`):
    the evidence's view, or None when the caller is to build it."""
    return detect_while(
        lambda: execute(store, benchmark, samples, execution, reporter, required),
        store, benchmark, settings, samples, canonicals, ahead,
    )  # fmt: skip


def announce(reporter: Reporter, lines: list[str]) -> None:
    """The plan of the work about to start (`Reporter.plan`)."""
    reporter.plan(lines)


def _judging_plan(store: SampleStore, total: int, execution: ExecutionSettings | None):
    """What detection (and execution) will do, with the store's history of sandbox runs as
    the estimate (results already stored are reused, so it is an upper bound)."""
    lines = [f"{total:,} samples from {store.path}: clone detection against the canonicals "
             "(verdicts already stored are reused)"]  # fmt: skip
    if execution is not None:
        history = ExecutionStore(store.db, read_only=True).history()
        guess = (f"{estimate_text(history[0] * total / execution.workers)} at most, from "
                 f"{history[1]:,} earlier sandbox runs in the store" if history else
                 "no history yet; the ETA follows the rate")  # fmt: skip
        lines.append(f"execution in the sandbox: {execution.workers} workers, "
                     f"{execution.timeout:g} s timeout per sample; estimate: {guess}")  # fmt: skip
    return lines


def report_on_source(
    source: SampleSource,
    settings: DetectionSettings,
    reporter: Reporter,
    execution: ExecutionSettings | None = None,
) -> AuditReport:
    """`detect` and `execute`: the source's samples (files imported first), executed when
    `execution` is given, detected, and reported."""
    benchmark = load_benchmark(source.benchmark)
    with SampleStore(source.store) as store:
        claims: dict = {}
        samples = source_samples(store, source, benchmark, claims)
        report = detect_and_report(store, benchmark, settings, samples, reporter, execution,
                                   required_execution=execution is not None)  # fmt: skip
        return add_file_verdicts(report, store, benchmark, samples, claims)


def attach_signals(
    report: AuditReport,
    store: SampleStore,
    benchmark: Benchmark,
    selection: Iterable[StoredSample],
    prompt_sets: list[PromptSet],
    settings: SignalSettings,
    reporter: Reporter,
) -> AuditReport:
    """Compute the chosen signals for the report's samples (resuming from the store): the
    report with the `signals` section and the `tasks` list. The samples are read once (a
    signal reads a task's samples together)."""
    from cloneprobe.audit.signal_table import signals_section, tasks_list
    from cloneprobe.audit.signals_asked import remember_signals_asked
    from cloneprobe.signals.flow import CHUNK, check_computed, compute_signals, count_rows

    from .signals.registry import parse_signal_names
    from .signals.scoring import ScorerFactory, ScorerOptions
    from .warmup import MeasuredProgress

    samples = list(selection)
    names = settings.names or parse_signal_names(None)
    options = ScorerOptions(
        base_url=settings.base_url, api_key=os.environ.get("OPENAI_API_KEY"),
        batch_size=settings.batch_size, concurrency=settings.concurrency,
        timeout=settings.timeout,
    )  # fmt: skip
    total = count_rows(samples, prompt_sets, benchmark)
    models = sorted({s.model for s in samples})
    announce(reporter, signals_plan_lines(store, names, models, len(samples), total, reporter,
                                          settings.reference_model))  # fmt: skip
    factory = ScorerFactory(options)
    with reporter.task("signals", total) as bar:
        timed = MeasuredProgress(bar.advance, total, CHUNK, lambda measured: reporter.plan(
            [measured_text("the signals", *astuple(measured), unit="task row")]))
        rows = compute_signals(
            store, benchmark, models, prompt_sets, names,
            factory, timed.advance, settings.reference_model, samples,
        )  # fmt: skip
    warning = check_computed(rows, names, factory.failures)  # nothing computed: an error
    if warning:
        reporter.warn(warning)
    section = signals_section(rows, names, settings.reference_model)
    remember_signals_asked(store.db, section)  # `report` shows what was asked, n/a too
    return report.with_sections(signals=section, tasks=tasks_list(rows, report))


def signals_plan_lines(store: SampleStore, names: list[str], models: list[str], samples: int,
                       total: int, reporter: Reporter,
                       reference_model: str | None = None) -> list[str]:  # fmt: skip
    """What `signals` (and `audit --signals`) will score, and an estimate from the store's
    history of signal scores (`signals.history`), as the generation plan gives one; a
    line-printing `reporter` shows it as the ETA until the first rows are scored."""
    from cloneprobe.signals.flow import CHUNK
    from cloneprobe.signals.history import seconds_per_score

    lines = [f"signals {', '.join(names)} on {samples:,} samples of {', '.join(models)}, "
             f"scored per task, prompt set and temperature ({total:,} in all; scores already "
             "stored are reused)"]  # fmt: skip
    known = seconds_per_score(store.db, models + ([reference_model] if reference_model else []))
    if known is not None:
        rate, count = known
        seconds = rate * total * len(names)
        planned = getattr(reporter, "planned", None)
        if isinstance(planned, dict):
            planned["signals"] = seconds
        lines.append(f"estimate: about {estimate_text(seconds)} if none is stored yet "
                     f"({rate:.2g} s per score over {count:,} earlier scores in the store); "
                     "the ETA follows the measured rate")  # fmt: skip
    elif total <= CHUNK:
        lines.append(f"estimate: none yet (no signal history of these models in the store); "
                     f"the plan is one chunk of {total} task rows, so the first scores back "
                     "are all of them and nothing is measured before")  # fmt: skip
    else:
        lines.append("estimate: none yet (no signal history of these models in the store); "
                     "it is measured on this machine from the first chunk of tasks scored and "
                     "printed then (`measured: ...`), and the ETA follows")  # fmt: skip
    return lines


def stored_prompt_sets(samples: Iterable[StoredSample], benchmark: Benchmark) -> list[PromptSet]:
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
) -> AuditReport:
    """`cloneprobe signals`: the source's samples detected (stored verdicts reused) and their
    signals computed (stored scores reused), as one report with the `tasks` list."""
    benchmark = load_benchmark(source.benchmark)
    with SampleStore(source.store) as store:
        samples = source_samples(store, source, benchmark)
        report = detect_and_report(store, benchmark, detection, samples, reporter)
        prompt_sets = stored_prompt_sets(samples, benchmark)
        return attach_signals(report, store, benchmark, samples, prompt_sets, settings, reporter)


@dataclass(frozen=True)
class ReportSections:
    """Sections a report can take from outside the store: a corpus scan's folder (the
    contamination split) and a finished positive control's folder."""

    contamination_dir: Path | None = None
    control_dir: Path | None = None


def complete_report(report: AuditReport, sections: ReportSections) -> AuditReport:
    """The report with the contamination split and the control's section, when asked for."""
    if sections.control_dir is not None:
        from cloneprobe.control.saved import load_control

        report = report.with_sections(control=load_control(sections.control_dir))
    if sections.contamination_dir is not None:
        from cloneprobe.audit.contamination import found_tasks, split_by_contamination

        found, _ = found_tasks(sections.contamination_dir)
        report = report.with_sections(contamination=split_by_contamination(
            report, found, str(sections.contamination_dir)))  # fmt: skip
    return report


def report_store(
    store: SampleStore,
    benchmark: Benchmark,
    detection: DetectionSettings,
    reporter: Reporter,
    models: list[str] | None = None,
    prompt_sets: list[str] | None = None,
    sections: ReportSections = ReportSections(),
) -> AuditReport:
    """`cloneprobe report`: everything the (read-only) store holds for the selection: clone
    verdicts (those not stored yet computed for this report only), the signals `signals` or
    `audit --signals` stored with the per-task verdicts, and the sections asked for."""
    samples = select_samples(store, models, prompt_sets)
    report = detect_and_report(store, benchmark, detection, samples, reporter)
    report = stored_signals(report, store, benchmark, samples, reporter)
    scope = stored_scope(store, samples)
    if scope is not None:
        report = report.with_sections(scope=scope)
    return complete_report(report, sections)


def stored_scope(store: SampleStore, selection: SampleSelection) -> dict | None:
    """The scope note (`audit`'s quick first look) of the runs that made the selection's
    samples, as the audit recorded it with its run (None: every run was given in full)."""
    quick = {}
    for run in store.runs():
        config = run["settings"].get("config") if isinstance(run["settings"], dict) else None
        if isinstance(config, dict) and isinstance(config.get("quick_scope"), dict):
            quick[run["id"]] = config["quick_scope"]
    if not quick:
        return None
    rows = store.samples(list(selection.models) or None, list(selection.prompt_sets) or None,
                         light=True)  # fmt: skip
    found = [quick[s.run_id] for s in rows if s.run_id in quick and selection.keeps(s)]
    return found[-1] if found else None


def stored_signals(
    report: AuditReport,
    store: SampleStore,
    benchmark: Benchmark,
    selection: Iterable[StoredSample],
    reporter: Reporter,
) -> AuditReport:
    """The report with the signals the store holds for its samples (nothing computed, no model
    loaded; a score not stored is shown as not available) and the per-task verdicts; the
    report unchanged when the store holds no signal for them."""
    from cloneprobe.audit.signal_table import signals_section, tasks_list
    from cloneprobe.audit.signals_asked import signals_asked, with_asked_reasons
    from cloneprobe.signals.flow import (
        StoredScorers,
        compute_signals,
        count_rows,
        stored_signal_names,
    )
    from cloneprobe.signals.registry import SIGNALS

    samples = list(selection)
    models = sorted({s.model for s in samples})
    asked = signals_asked(store.db, models)
    wanted = set(stored_signal_names(store, models)) | {n for m in asked.values() for n in m}
    names = [name for name in SIGNALS if name in wanted]
    if not names:
        return report
    prompt_sets = stored_prompt_sets(samples, benchmark)
    total = count_rows(samples, prompt_sets, benchmark)
    with reporter.task("stored signals", total) as bar:
        rows = compute_signals(
            store, benchmark, models, prompt_sets, names,
            StoredScorers(store), bar.advance, None, samples, stored_only=True,
        )  # fmt: skip
    section = with_asked_reasons(signals_section(rows, names, None), asked)
    return report.with_sections(signals=section, tasks=tasks_list(rows, report))
