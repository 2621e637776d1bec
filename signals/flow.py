"""Computing memorization signals on stored samples, resumably, and their relative views.

`compute_signals` gives one `TaskSignals` row per model x sampling settings x temperature x
prompt set (and variant) x task, with every chosen signal's score. Scores are looked up in the
store first; only what is missing is computed (a model is loaded only when a likelihood score
is missing) and stored as it is made.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from cloneprobe.benchmarks import Benchmark, PromptSet, canonical_source
from cloneprobe.benchmarks.canonical import strip_comments
from cloneprobe.benchmarks.docstrings import docstring_holders
from cloneprobe.generation import SampleStore, StoredSample
from cloneprobe.generation.postprocess import chat_message
from cloneprobe.signals.base import LogProbScorer, Signal, SignalError, SignalScore, TaskInputs
from cloneprobe.signals.registry import get_signal
from cloneprobe.signals.relative import original_vs_fixed, target_vs_reference
from cloneprobe.signals.store import ScoreKey, SignalStore, settings_key


class ScorerFactory(Protocol):
    """Makes the log-prob scorer of a model named as the store names it, and says the identity
    its scores are stored under (without loading anything)."""

    def identity(self, model: str) -> str: ...

    def __call__(self, model: str) -> LogProbScorer: ...


CHUNK = 16
"""Tasks scored (and stored) at a time: a batch for the scorer, a step of the progress bar."""
SAMPLES_SCORER = "samples"
"""The scorer column of scores read from samples."""


@dataclass(frozen=True)
class TaskSignals:
    """One task of one group, with every chosen signal's score and the relative views."""

    model: str
    settings_key: str
    temperature: float
    prompt_set: str
    variant: str
    task_id: str
    mode: str
    samples: int
    scores: dict[str, SignalScore] = field(default_factory=dict)
    relative: dict[str, dict[str, float | None]] = field(default_factory=dict)
    """"fixed": likelihood after the original prompt over after the fixed one (original
    rows); "reference": over the reference model (when one is given)."""


def comparable_code(code: str, entry_point: str | None = None) -> str:
    """Code without docstrings or comments, in one layout (ast.unparse) when it parses; with
    `entry_point`, only that function when the code defines it (imports and helpers the
    prompt brought are not the answer)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return strip_comments(code)
    for holder in docstring_holders(tree):
        holder.body = holder.body[1:] or [ast.Pass()]
    functions = [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point
    ]
    return ast.unparse(functions[-1] if functions else tree) + "\n"


@dataclass(frozen=True)
class _Group:
    model: str
    settings_key: str
    prompt_set: str
    variant: str
    temperature: float


def group_samples(
    samples: Sequence[StoredSample], prompt_sets: Sequence[PromptSet], benchmark: Benchmark
) -> dict[_Group, dict[str, list[StoredSample]]]:
    """Samples per group and task, for the tasks the prompt sets and benchmark know."""
    known = {(p.name, q.variant, q.task_id) for p in prompt_sets for q in p.prompts}
    groups: dict[_Group, dict[str, list[StoredSample]]] = defaultdict(lambda: defaultdict(list))
    for sample in samples:
        if (sample.prompt_set, sample.variant, sample.task_id) in known and benchmark.get(
            sample.task_id
        ):
            group = _Group(sample.model, sample.settings_key, sample.prompt_set,
                           sample.variant, sample.temperature)  # fmt: skip
            groups[group][sample.task_id].append(sample)
    return groups


def count_rows(
    samples: Sequence[StoredSample], prompt_sets: Sequence[PromptSet], benchmark: Benchmark
) -> int:
    """How many rows `compute_signals` gives for these samples."""
    return sum(len(tasks) for tasks in group_samples(samples, prompt_sets, benchmark).values())


def compute_signals(
    store: SampleStore,
    benchmark: Benchmark,
    models: Sequence[str],
    prompt_sets: Sequence[PromptSet],
    signal_names: Sequence[str],
    scorer_factory: ScorerFactory,
    progress: Callable[[int], None] | None = None,
    reference_model: str | None = None,
    samples: Sequence[StoredSample] | None = None,
    stored_only: bool = False,
) -> list[TaskSignals]:
    """Every chosen signal for the stored samples of `models` (all when empty) on
    `prompt_sets`, computing only what the store lacks; `progress` advances once per row
    (model x settings x temperature x prompt set x task) as its last score is ready. With
    `stored_only`, nothing is computed or written: a score the store lacks is unavailable."""
    if samples is None:
        samples = list(store.samples(list(models) or None, [p.name for p in prompt_sets] or None))
    prompts = {(p.name, q.variant, q.task_id): q.text for p in prompt_sets for q in p.prompts}
    groups = group_samples(samples, prompt_sets, benchmark)
    greedy = {
        (g.model, g.settings_key, g.prompt_set, g.variant, task): [s.program or "" for s in ss]
        for g, tasks in groups.items()
        if g.temperature == 0
        for task, ss in tasks.items()
    }
    signals = [get_signal(name) for name in signal_names]
    rows: list[TaskSignals] = []
    todo: list[_Pending] = []
    references: dict[int, dict[str, SignalScore]] = {}
    for group, tasks in groups.items():
        for task_id in sorted(tasks):
            task = benchmark.get(task_id)
            assert task is not None
            members = tasks[task_id]
            mode = members[0].mode or "completion"
            prompt = prompts[(group.prompt_set, group.variant, task_id)]
            greedy_programs = greedy.get(
                (group.model, group.settings_key, group.prompt_set, group.variant, task_id), []
            )
            inputs = TaskInputs(
                task_id=task_id,
                prompt=prompt,
                canonical=task.canonical_solution,
                canonical_function=comparable_code(canonical_source(task), task.entry_point),
                samples=tuple(comparable_code(s.program or "", task.entry_point) for s in members),
                greedy=tuple(comparable_code(p, task.entry_point) for p in greedy_programs),
                temperature=group.temperature,
                mode=mode,  # type: ignore[arg-type]
                user_message=chat_message(prompt) if mode == "chat" else "",
            )
            row = TaskSignals(
                group.model, group.settings_key, group.temperature, group.prompt_set,
                group.variant, task_id, mode, len(members),
            )  # fmt: skip
            rows.append(row)
            for signal in signals:
                key = _key(scorer_factory, signal, group, inputs, group.model)
                todo.append(_Pending(row, row.scores, signal, inputs, key, group.model))
                if reference_model and signal.needs_scorer:
                    into = references.setdefault(id(row), {})
                    key = _key(scorer_factory, signal, group, inputs, reference_model)
                    todo.append(_Pending(row, into, signal, inputs, key, reference_model))
    if stored_only:
        _read(SignalStore(store.db, create=False), todo, progress)
    else:
        _fill(SignalStore(store.db), todo, scorer_factory, progress)
    for row in rows:
        if id(row) in references:
            row.relative["reference"] = target_vs_reference(row.scores, references[id(row)])
    _add_fixed_views(rows)
    return rows


@dataclass(frozen=True)
class _Pending:
    """A score a row needs: where it goes, what computes it, and its store key."""

    row: TaskSignals
    into: dict
    signal: Signal
    inputs: TaskInputs
    key: ScoreKey
    model: str
    """The model whose scorer computes it (the row's, or the reference model)."""


def _key(factory: ScorerFactory, signal: Signal, group: _Group, inputs: TaskInputs, model: str):
    """Where a score is stored: likelihood by scorer and scored text, sample signals by the
    samples they read."""
    if signal.needs_scorer:
        text = inputs.scoring_text()
        digest = settings_key(
            signal.settings(), text.mode, text.prompt, text.answer_prefix, text.target
        )
        return ScoreKey(model, factory.identity(model), group.prompt_set, group.variant,
                        inputs.task_id, "", signal.name, digest)  # fmt: skip
    digest = settings_key(
        signal.settings(), inputs.canonical_function, *inputs.samples, "\x01", *inputs.greedy
    )
    samples_key = f"{group.settings_key}|T={group.temperature:g}"
    return ScoreKey(model, SAMPLES_SCORER, group.prompt_set, group.variant, inputs.task_id,
                    samples_key, signal.name, digest)  # fmt: skip


def stored_signal_names(store: SampleStore, models: Sequence[str]) -> list[str]:
    """The signals the store holds scores of for any of `models`, in the registry's order."""
    from cloneprobe.signals.registry import SIGNALS

    if not store.db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'signal_scores'"
    ).fetchone():
        return []
    marks = ", ".join("?" * len(models))
    found = {row[0] for row in store.db.execute(
        f"SELECT DISTINCT signal FROM signal_scores WHERE model IN ({marks})", list(models))}
    return [name for name in SIGNALS if name in found]


def _read(keeper: SignalStore, todo: list[_Pending], progress) -> None:
    """Stored scores only; the rest unavailable (`cloneprobe signals` computes them)."""
    stored = keeper.get(p.key for p in todo)
    for pending in todo:
        pending.into[pending.signal.name] = stored.get(pending.key) or SignalScore.unavailable(
            pending.signal.name, "not in the store; `cloneprobe signals` computes it")
    if progress:
        progress(len({id(p.row) for p in todo}))


def _fill(keeper: SignalStore, todo: list[_Pending], factory: ScorerFactory, progress) -> None:
    """Stored scores first; the rest computed a chunk of tasks at a time per signal and
    scorer, stored as each chunk ends. Progress advances as each row gets its last score."""
    stored = keeper.get(p.key for p in todo)
    missing: dict[tuple[str, str], list[_Pending]] = defaultdict(list)
    left: dict[int, int] = defaultdict(int)
    for pending in todo:
        if pending.key in stored:
            pending.into[pending.signal.name] = stored[pending.key]
        else:
            scorer_model = pending.model if pending.signal.needs_scorer else ""
            missing[(pending.signal.name, scorer_model)].append(pending)
            left[id(pending.row)] += 1
    if progress:
        progress(len({id(p.row) for p in todo} - set(left)))
    scorers: dict[str, LogProbScorer | str] = {}
    for (_, model) in missing:
        if model and model not in scorers:
            try:
                scorers[model] = factory(model)
            except SignalError as error:
                scorers[model] = str(error)
    # a chunk of rows gets every signal before the next chunk starts, so rows finish (and the
    # progress advances) all along, not only once the last signal's turn comes
    longest = max((len(pendings) for pendings in missing.values()), default=0)
    for begin in range(0, longest, CHUNK):
        for (_, model), pendings in missing.items():
            chunk = pendings[begin : begin + CHUNK]
            if not chunk:
                continue
            scorer = scorers.get(model)
            if isinstance(scorer, str):
                scores = [SignalScore.unavailable(p.signal.name, scorer) for p in chunk]
            else:
                scores = chunk[0].signal.score_tasks(
                    [replace(p.inputs, scorer=scorer) for p in chunk]
                )
            keeper.add((p.key, score) for p, score in zip(chunk, scores, strict=True))
            finished = 0
            for p, score in zip(chunk, scores, strict=True):
                p.into[p.signal.name] = score
                left[id(p.row)] -= 1
                finished += left[id(p.row)] == 0
            if progress and finished:
                progress(finished)


def check_computed(
    rows: Sequence[TaskSignals], names: Sequence[str], failures: dict[str, str]
) -> str | None:
    """Signals asked for that none of the rows got are an error, not a table of n/a: raises
    when no row has any signal's value (naming what could not score, or each signal's reason).
    When some were computed but a model could not score (`failures`: model -> why, e.g. a
    server that gives no prompt log-probs), the warning to show; else None."""
    failed = "; ".join(dict.fromkeys(failures.values()))
    if not rows:
        return None
    if any(score.available for row in rows for score in row.scores.values()):
        return (f"{failed}; the signals that need log-probs are n/a for it, the others were "
                "computed") if failed else None  # fmt: skip
    reasons: dict[str, defaultdict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        for score in row.scores.values():
            reasons[score.signal][score.reason or "no value"] += 1
    why = [failed] if failed else []
    for name, counts in reasons.items():  # each signal's commonest reason, the failure once
        reason = max(counts, key=counts.__getitem__)
        if reason not in failures.values():
            why.append(f"{name}: {reason}")
    advice = "" if failed else "; see the reason of each, or ask for other --signals"
    raise SignalError(f"--signals {','.join(names)}: none could be computed for these "
                      f"{len(rows)} task row(s): {'; '.join(why)}{advice}")


def _add_fixed_views(rows: list[TaskSignals]) -> None:
    """Original rows get their likelihood over the fixed prompt set's, task by task."""
    fixed = {
        (r.model, r.settings_key, r.temperature, r.task_id): r
        for r in rows
        if r.prompt_set == "fixed"
    }
    for row in rows:
        if row.prompt_set != "original":
            continue
        other = fixed.get((row.model, row.settings_key, row.temperature, row.task_id))
        if other is not None:
            row.relative["fixed"] = original_vs_fixed(row.scores, other.scores)


class StoredScorers:
    """A scorer factory for reading stored scores only: a model's scorer identity is the one
    its stored likelihood scores were computed under; no scorer is ever made."""

    def __init__(self, store: SampleStore) -> None:
        self.store = store

    def identity(self, model: str) -> str:
        row = self.store.db.execute(
            "SELECT scorer FROM signal_scores WHERE model = ? AND scorer != ? LIMIT 1",
            (model, SAMPLES_SCORER),
        ).fetchone()
        return row[0] if row else model

    def __call__(self, model: str) -> LogProbScorer:
        raise SignalError(f"{model}: not in the store; `cloneprobe signals` computes it")
