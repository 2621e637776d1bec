"""The positive control's audit of models already sampled into its store: clones with the
evidence view, every signal (the fine-tuned models' likelihood also relative to the base
model, the control's reference), the per-task verdict, and how each score and the verdict
separate the known halves.

`run_control` calls it with the models in memory;
`python -m cloneprobe.evidence.calibrate.verdict` calls it on a
finished control's folder, where every likelihood score is already stored (no model loaded).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from cloneprobe.audit.detection import CanonicalFragments, DetectionSettings
from cloneprobe.audit.stats import wilson_interval
from cloneprobe.benchmarks import Benchmark, PromptSet
from cloneprobe.control.separation import roc_points, separation
from cloneprobe.evidence.panel.convergence import DEFAULT_CONVERGENCE, ConvergenceRule
from cloneprobe.evidence.verdict import DEFAULT_VERDICT_RULE, FLAGGED, VERDICTS, VerdictRule
from cloneprobe.generation import SampleStore, StoredSample
from cloneprobe.signals.base import SignalError

RELATIVE_SUFFIX = "_vs_base"
"""Scores of a fine-tuned model's likelihood relative to the base model's."""


class StoredScoresOnly:
    """A ScorerFactory for a finished control: every likelihood score is in the store, so a
    missing one is 'not available' instead of loading a model."""

    def identity(self, model: str) -> str:
        return model

    def __call__(self, model: str):
        raise SignalError(f"{model}: not in memory (only stored scores are read)")


def audit_control_model(
    store: SampleStore,
    benchmark: Benchmark,
    label: str,
    samples: Sequence[StoredSample],
    prompt_set: PromptSet,
    profiles: dict[str, DetectionSettings],
    signal_names: Sequence[str],
    scorers,
    reference: str | None,
    task_bar: Callable[[str, int], AbstractContextManager[Any]],
    rule: VerdictRule = DEFAULT_VERDICT_RULE,
) -> dict[str, dict[str, dict]]:
    """Per detector profile, per task: the tasks-list entry (clone evidence, signals, relative
    views, verdict). The default profile's report carries the evidence view; `reference` is
    the base model's label (None for the base model itself). `task_bar(description, total)`
    gives a context manager with `advance`."""
    from cloneprobe.audit.report import ReportBuilder
    from cloneprobe.audit.signal_table import task_convergence, tasks_list
    from cloneprobe.audit.stream import audit_stream
    from cloneprobe.evidence.stream import StreamedEvidence
    from cloneprobe.signals.flow import compute_signals

    name = label.split(":")[1] if label.startswith("control:") else label
    reports = {}
    for profile, detection in profiles.items():
        with task_bar(f"detecting ({name}, {profile})", len(samples)) as bar:
            canonicals = CanonicalFragments(benchmark)
            view = None
            if profile == "default":
                view = StreamedEvidence(canonicals, detection, samples)
            builder = ReportBuilder(detection, canonicals, False, view=view)
            reports[profile] = audit_stream(
                store, benchmark, detection, samples, builder, progress=bar.advance
            )
    own = [s for s in samples if s.prompt_set == prompt_set.name]
    task_count = len({s.task_id for s in own})
    with task_bar(f"signals ({name})", task_count) as bar:
        rows = compute_signals(
            store, benchmark, [label], [prompt_set], signal_names, scorers,
            bar.advance, reference, own,
        )  # fmt: skip
    per_task = {}
    for profile, report in reports.items():
        convergence = task_convergence(report)
        per_task[profile] = {
            e["task_id"]: with_disguise({**e, "convergence": convergence.get(
                (e["model"], e["temperature"], e["prompt_set"], e["task_id"]))}, convergence)
            for e in tasks_list(rows, report, rule)
        }  # fmt: skip
    return per_task


def with_disguise(entry: dict, convergence: dict[tuple, dict]) -> dict:
    """The task's verdict across the model's prompt sets: its original-prompt verdict, made
    `memorized` when a disguised-prompt sample writes the original prompt's names, which the
    disguised prompt no longer shows (evidence by itself). `rests_on_disguise` says whether a
    memorized verdict needed the disguised samples (that, or a short canonical's copy the
    disguised samples do not write)."""
    from cloneprobe.evidence.verdict import MEMORIZED

    disguised = convergence.get((entry["model"], entry["temperature"], "disguised",
                                 entry["task_id"])) or {}  # fmt: skip
    leak = disguised["figure"] if disguised.get("leaked") else None
    entry = {**entry, "disguise_leak": leak}
    if leak and entry["verdict"] != MEMORIZED:
        entry |= {"verdict": MEMORIZED,
                  "verdict_reasons": [f"under the disguised prompt: {leak}",
                                      *entry["verdict_reasons"]]}  # fmt: skip
        return {**entry, "rests_on_disguise": True}
    on_disguise = (entry.get("convergence") or {}).get("basis") == "disguise"
    return {**entry, "rests_on_disguise": entry["verdict"] == MEMORIZED and on_disguise}


def control_samples(store, label: str, prompt_sets: Sequence[str], sampling_key: str,
                    task_ids: Sequence[str], temperature: float) -> list:  # fmt: skip
    """The control's samples of one model: its prompt sets, settings, tasks and
    temperature."""
    wanted = set(task_ids)
    return [s for s in store.samples([label], list(prompt_sets))
            if s.settings_key == sampling_key and s.task_id in wanted
            and s.temperature == temperature]  # fmt: skip


def clone_scores(entry: dict) -> dict[str, float]:
    """A task's clone evidence as scores: the share of its samples with a clone of type k or
    closer (k = 1, 2, 3)."""
    clones = entry.get("clones") or {}
    total = clones.get("samples") or 0
    counts = clones.get("samples_with_clone") or {}
    return {f"type{t}": (counts.get(t, 0) / total if total else 0.0) for t in ("1", "2", "3")}


def separations(per_task, contaminated, held_out, signal_names, signals, resamples) -> dict:
    """Per score: AUROC and interval, the scores of each half with their task ids (for the
    plots, which name each point), the ROC. Scores
    are the clone shares per profile, every signal (oriented: higher is more memorization-
    like) and, for fine-tuned models, every likelihood signal relative to the base model."""
    scores: dict[str, dict[str, float]] = {}
    for profile, entries in per_task.items():
        for task_id, entry in entries.items():
            for name, value in clone_scores(entry).items():
                scores.setdefault(f"clone_{name}_{profile}", {})[task_id] = value
    entries = per_task["default"]
    reasons: dict[str, str] = {}
    for name in signal_names:
        scores[name] = {}
        for task_id, entry in entries.items():
            score = entry["signals"].get(name, {})
            if score.get("value") is None:
                reasons.setdefault(name, score.get("reason") or "not computed")
                continue
            value = score["value"] if signals[name].higher_means_memorized else -score["value"]
            scores[name][task_id] = value
    for task_id, entry in entries.items():
        for name, value in ((entry.get("relative") or {}).get("reference") or {}).items():
            if value is not None:
                scores.setdefault(name + RELATIVE_SUFFIX, {})[task_id] = value
    out = {}
    for name, by_task in scores.items():
        positive_ids = [t for t in contaminated if t in by_task]
        negative_ids = [t for t in held_out if t in by_task]
        positives = [by_task[t] for t in positive_ids]
        negatives = [by_task[t] for t in negative_ids]
        if not positives or not negatives:
            out[name] = {"available": False, "reason": reasons.get(name, "no scores")}
            continue
        measured = separation(positives, negatives, resamples)
        entry = {"available": True, **measured.to_dict(),
                 "contaminated": positives, "held_out": negatives,
                 "contaminated_tasks": positive_ids, "held_out_tasks": negative_ids,
                 "roc": roc_points(positives, negatives)}  # fmt: skip
        if name.startswith("clone_"):
            entry["rate_contaminated"] = sum(v > 0 for v in positives) / len(positives)
            entry["rate_held_out"] = sum(v > 0 for v in negatives) / len(negatives)
        out[name] = entry
    return out


def verdict_separation(entries: dict[str, dict], contaminated, held_out) -> dict:
    """How the combined verdict splits the halves: verdict counts per half, and the share of
    each half flagged (memorized or suspected) with its 95% Wilson interval: on the held-out
    half that share is a false-positive rate, on the contaminated half a true-positive rate."""
    out: dict = {}
    for half, ids in (("contaminated", contaminated), ("held_out", held_out)):
        verdicts = [entries[t]["verdict"] for t in ids if t in entries]
        flagged = sum(v in FLAGGED for v in verdicts)
        low, high = wilson_interval(flagged, len(verdicts))
        disguise = sum(bool(entries[t].get("rests_on_disguise")) for t in ids if t in entries)
        out[half] = {"tasks": len(verdicts), "flagged": flagged,
                     "memorized_on_disguise": disguise,
                     "rate": flagged / len(verdicts) if verdicts else None,
                     "ci95": [low, high],
                     "verdicts": {v: verdicts.count(v) for v in VERDICTS}}  # fmt: skip
    return out


def compact_tasks(entries: dict[str, dict], contaminated: Sequence[str]) -> list[dict]:
    """control.json's per-task rows: what calibrating the verdict needs, and the HTML view."""
    chosen = set(contaminated)
    rows = []
    for task_id, e in entries.items():
        clones = e.get("clones") or {}
        rows.append({
            "task_id": task_id, "half": "contaminated" if task_id in chosen else "held_out",
            "clone_tier": clones.get("tier"), "best_type": clones.get("best_type"),
            "clone_reasons": clones.get("reasons") or [], "informative": e["informative"],
            "signals": {n: s.get("value") for n, s in e["signals"].items()},
            "relative": e.get("relative") or {}, "pass@1": e.get("pass@1"),
            "convergence": e.get("convergence"),
            "verdict": e["verdict"], "verdict_reasons": e["verdict_reasons"],
            "rests_on_disguise": bool(e.get("rests_on_disguise")),
            "disguise_leak": e.get("disguise_leak"),
        })  # fmt: skip
    return rows


def reaudit_control(folder, rule: VerdictRule = DEFAULT_VERDICT_RULE,
                    convergence: ConvergenceRule = DEFAULT_CONVERGENCE) -> dict:  # fmt: skip
    """A finished control's per-task rows and verdict separation again, from its folder
    (control.json's settings and split, control.sqlite's samples and stored scores): for
    outputs written before control.json carried `tasks`, or to judge them under another
    rule (`rule`, `convergence`). Works on a copy of the store (a score not stored, e.g. CDD,
    is computed and kept)."""
    import contextlib
    import shutil
    import tempfile
    from pathlib import Path

    from cloneprobe.benchmarks import load_benchmark, load_prompt_set
    from cloneprobe.clones import DetectorConfig
    from cloneprobe.generation import SamplingSettings
    from cloneprobe.signals.registry import SIGNALS, parse_signal_names

    folder = Path(folder)
    from cloneprobe.control.saved import load_control

    control = load_control(folder, option="")
    settings = control["settings"]
    benchmark = load_benchmark(settings["benchmark"])
    prompt_set = load_prompt_set("original", benchmark)
    sampling_key = (
        settings.get("sampling_key")
        or SamplingSettings(
            mode=settings["mode"], max_new_tokens=settings["max_new_tokens"], seed=settings["seed"]
        ).key
    )
    contaminated, held_out = control["split"]["contaminated"], control["split"]["held_out"]
    task_ids = contaminated + held_out
    names = ["base", *settings["doses"]]
    labels = {name: f"control:{name}:{settings['tag']}" for name in names}
    signal_names = settings["signals"] or parse_signal_names(None)
    profiles = {"default": DetectionSettings(DetectorConfig(), convergence=convergence)}

    @contextlib.contextmanager
    def quiet(description: str, total: int):
        class _Bar:
            def advance(self, count: int = 1) -> None:
                pass

        yield _Bar()

    tasks, verdicts, models = {}, {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "control.sqlite"
        shutil.copyfile(folder / "control.sqlite", copy)
        with SampleStore(copy) as store:
            for name in names:
                samples = control_samples(store, labels[name],
                                          settings.get("prompts") or ["original"],
                                          sampling_key, task_ids,
                                          settings["temperature"])  # fmt: skip
                per_task = audit_control_model(
                    store, benchmark, labels[name], samples, prompt_set, profiles,
                    signal_names, StoredScoresOnly(),
                    None if name == "base" else labels["base"], quiet, rule,
                )  # fmt: skip
                tasks[name] = compact_tasks(per_task["default"], contaminated)
                verdicts[name] = verdict_separation(per_task["default"], contaminated, held_out)
                models[name] = separations(per_task, contaminated, held_out, signal_names,
                                           SIGNALS, settings.get("resamples", 1000))  # fmt: skip
    return {**control, "models": models, "tasks": tasks, "verdicts": verdicts,
            "verdict_rule": rule.as_dict()}  # fmt: skip
