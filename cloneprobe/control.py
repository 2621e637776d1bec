"""The positive control: contaminate a local model on purpose and see which signals catch it.

1. The benchmark's tasks are split with a seed into a contaminated and a held-out half.
2. The model is fine-tuned (`finetune.contaminate`: top layers only, from cached states) on
   the contaminated half's prompt and canonical solution, in exactly the form the audit asks
   it: in chat mode the chat-rendered instruction, then the answer the instruction asks for
   (a python fence holding the prompt and the canonical body); in completion mode the prompt,
   then the canonical body; both end with the model's end token. One training run gives each
   dose (a number of epochs).
3. The base model and every dose are audited as any model is: samples generated into a store
   (`generation`), clones detected against the canonicals (default and nicad profiles), and
   every signal computed (`signals`, the likelihood ones with the model in memory).
4. Each per-task score is ranked against the secret split: AUROC with a bootstrap interval,
   and the clone rates per half.

Everything lands in the output folder: `control.sqlite` (the store, so a rerun reuses samples
and scores), `control.json` and `control.html`.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .benchmarks import Task, load_benchmark, load_prompt_set, select_tasks
from .detection import DetectionSettings
from .finetune import FineTuneSettings, TrainingText, cache_hidden_states, contaminate
from .generation import GenerationError, Plan, SampleStore, SamplingSettings, run_plan
from .generation.postprocess import chat_message
from .pipeline import Reporter
from .separation import roc_points, separation

CHAT_ANSWER_OPENING = "```python\n"
DEFAULT_DOSES = (("light", 1), ("heavy", 8))


@dataclass(frozen=True)
class ControlSettings:
    model: str = "embedded"
    """`embedded`, `hf:<folder>` or a folder holding a transformers model."""
    benchmark: str = "humaneval"
    seed: int = 0
    """Decides the split (and the sampling seed)."""
    limit: int | None = None
    """Only the first K tasks (split the same way)."""
    doses: tuple[tuple[str, int], ...] = DEFAULT_DOSES
    """(name, epochs) of each fine-tuned model."""
    finetune: FineTuneSettings = field(default_factory=FineTuneSettings)
    n: int = 2
    temperature: float = 0.8
    max_new_tokens: int = 160
    mode: str | None = None
    """chat or completion; None: chat when the tokenizer has a chat template."""
    signals: tuple[str, ...] = ()
    """Signal names (empty: every signal)."""
    batch_size: int = 16
    resamples: int = 1000
    output: Path = Path("cloneprobe-control")

    def __post_init__(self) -> None:
        if self.n < 1:
            raise GenerationError(f"-n {self.n}: at least one sample per task")
        if not self.doses:
            raise GenerationError("no doses: give at least one, e.g. light=1")

    def fingerprint(self) -> str:
        """What decides the fine-tuned models (their labels in the store carry it)."""
        decided = {
            "model": self.model, "benchmark": self.benchmark, "seed": self.seed,
            "limit": self.limit, "finetune": asdict(self.finetune), "mode": self.mode,
        }  # fmt: skip
        return hashlib.sha256(json.dumps(decided, sort_keys=True).encode()).hexdigest()[:8]


def split_tasks(task_ids: Sequence[str], seed: int) -> tuple[list[str], list[str]]:
    """(contaminated, held out): a seeded shuffle of the ids, cut in half (the contaminated
    half gets the odd one out), each half in benchmark order."""
    shuffled = list(task_ids)
    random.Random(seed).shuffle(shuffled)
    cut = (len(shuffled) + 1) // 2
    chosen = set(shuffled[:cut])
    return [t for t in task_ids if t in chosen], [t for t in task_ids if t not in chosen]


def answer_text(task: Task, mode: str) -> str:
    """What the model is taught to answer: what the audit's chat instruction asks for (the whole
    function in a python fence), or the body that continues the prompt."""
    if mode == "chat":
        body = task.canonical_solution.rstrip("\n") + "\n"
        return CHAT_ANSWER_OPENING + task.prompt + body + "```"
    return task.canonical_solution


def training_texts(backend, tasks: Sequence[Task], mode: str) -> list[TrainingText]:
    from .generation.backends import GenerationRequest

    tokenizer = backend.tokenizer
    end = tokenizer.eos_token_id
    texts = []
    for task in tasks:
        request = GenerationRequest(
            key=task.task_id, prompt=chat_message(task.prompt) if mode == "chat" else task.prompt,
            n=1, temperature=0.0, top_p=1.0, max_new_tokens=1, stop=(), mode=mode,  # type: ignore[arg-type]
        )  # fmt: skip
        answer = list(tokenizer(answer_text(task, mode), add_special_tokens=False)["input_ids"])
        texts.append(TrainingText(backend.prompt_token_ids(request), tuple([*answer, end])))
    return texts


def load_base(spec: str, batch_size: int):
    """The generation backend of the base model (it loads local models offline)."""
    from .generation import parse_model_spec
    from .generation.backends import BackendOptions, make_backend

    if spec != "embedded" and not spec.startswith("hf:"):
        spec = f"hf:{spec}"
    parsed = parse_model_spec(spec)
    if parsed.kind == "openai":
        raise GenerationError(f"{spec}: the control fine-tunes a local model; give embedded or hf:")
    # float32: the control fine-tunes this model, and bfloat16 training loses precision
    options = BackendOptions(batch_size=batch_size, dtype="float32")
    return parsed.label, make_backend(parsed, options)


class _InMemoryScorers:
    """The ScorerFactory of the signals stage for the control's models, already in memory."""

    def __init__(self, models: dict[str, object], tokenizer, batch_size: int) -> None:
        self.models, self.tokenizer, self.batch_size = models, tokenizer, batch_size

    def identity(self, model: str) -> str:
        return model

    def __call__(self, model: str):
        from .signals.scoring import CachingScorer
        from .signals.scoring.transformers_scorer import TransformersScorer

        return CachingScorer(
            TransformersScorer(self.models[model], self.tokenizer, model, self.batch_size)
        )


def run_control(settings: ControlSettings, reporter: Reporter) -> dict:
    """Split, fine-tune, audit the base and every dose, and measure the separation."""
    from .audit_stream import audit_stream
    from .clones import DetectorConfig, get_profile
    from .detection import CanonicalFragments
    from .generation.backends.transformers_backend import TransformersBackend
    from .reports import ReportBuilder
    from .signal_flow import compute_signals
    from .signal_report import tasks_list
    from .signals.registry import SIGNALS, parse_signal_names

    benchmark = load_benchmark(settings.benchmark)
    chosen = select_tasks(benchmark, settings.limit, None)
    task_ids = [t.task_id for t in benchmark.tasks if chosen is None or t.task_id in chosen]
    if len(task_ids) < 2:
        raise GenerationError(f"{len(task_ids)} task(s): the control needs at least 2 to split")
    contaminated, held_out = split_tasks(task_ids, settings.seed)
    with reporter.status(f"loading {settings.model} ..."):
        base_label, base = load_base(settings.model, settings.batch_size)
    mode = settings.mode or base.default_mode
    texts = training_texts(base, [benchmark.get(t) for t in contaminated], mode)  # type: ignore[misc]

    epochs = max(e for _, e in settings.doses)
    with reporter.task("caching states", len(texts)) as bar:
        states = cache_hidden_states(base.model, texts, settings.finetune, bar.advance)
    with reporter.task("fine-tuning", len(texts) * epochs) as bar:
        tuned = contaminate(
            base.model, texts, dict(settings.doses), settings.finetune, bar.advance, states
        )
    del states
    tag = settings.fingerprint()
    models = {f"control:base:{tag}": base.model}
    models |= {f"control:{name}:{tag}": tuned[name] for name, _ in settings.doses}
    names = {label: label.split(":")[1] for label in models}

    settings.output.mkdir(parents=True, exist_ok=True)
    prompt_set = load_prompt_set("original", benchmark)
    sampling = SamplingSettings(
        mode=mode,
        max_new_tokens=settings.max_new_tokens,
        seed=settings.seed,  # type: ignore[arg-type]
    )
    plan = Plan([prompt_set], benchmark, [settings.temperature], settings.n, sampling,
                frozenset(task_ids))  # fmt: skip
    signal_names = settings.signals or parse_signal_names(None)
    profiles = {
        "default": DetectionSettings(DetectorConfig()),
        "nicad": DetectionSettings(DetectorConfig(profile=get_profile("nicad"))),
    }
    results = {}
    with SampleStore(settings.output / "control.sqlite") as store:
        for label, model in models.items():
            backend = TransformersBackend.from_loaded(
                model, base.tokenizer, label, settings.batch_size, label="control"
            )
            with reporter.task(f"generating ({names[label]})", plan.total) as bar:

                def update(already: int, ok: int, failed: int, bar=bar) -> None:
                    bar.update(already + ok + failed, failed=failed)

                run_plan(label, backend, plan, store, {"control": tag}, update)
            samples = [s for s in store.samples([label], [prompt_set.name])
                       if s.settings_key == sampling.key and s.task_id in set(task_ids)
                       and s.temperature == settings.temperature]  # fmt: skip
            reports = {}
            for profile, detection in profiles.items():
                with reporter.task(f"detecting ({names[label]}, {profile})", len(samples)) as bar:
                    builder = ReportBuilder(detection, CanonicalFragments(benchmark), False)
                    reports[profile] = audit_stream(
                        store, benchmark, detection, samples, builder, progress=bar.advance
                    )
            with reporter.task(f"signals ({names[label]})", len(task_ids)) as bar:
                rows = compute_signals(
                    store, benchmark, [label], [prompt_set], signal_names,
                    _InMemoryScorers(models, base.tokenizer, 4), bar.advance, None, samples,
                )  # fmt: skip
            per_task = {
                profile: {e["task_id"]: e for e in tasks_list(rows, report)}
                for profile, report in reports.items()
            }
            results[names[label]] = _separations(
                per_task, contaminated, held_out, signal_names, SIGNALS, settings.resamples
            )
    report = {
        "settings": {**_describe(settings), "mode": mode, "base_model": base_label, "tag": tag,
                     "tasks": len(task_ids), "store": str(settings.output / "control.sqlite")},
        "split": {"contaminated": contaminated, "held_out": held_out},
        "models": results,
    }  # fmt: skip
    from .reports.control_html import write_control_report

    write_control_report(report, settings.output)
    return report


def _describe(settings: ControlSettings) -> dict:
    described = asdict(settings)
    described["output"] = str(settings.output)
    described["doses"] = dict(settings.doses)
    return described


def clone_scores(entry: dict) -> dict[str, float]:
    """A task's clone evidence as scores: the share of its samples with a clone of type k or
    closer (k = 1, 2, 3)."""
    clones = entry.get("clones") or {}
    total = clones.get("samples") or 0
    counts = clones.get("samples_with_clone") or {}
    return {f"type{t}": (counts.get(t, 0) / total if total else 0.0) for t in ("1", "2", "3")}


def _separations(per_task, contaminated, held_out, signal_names, signals, resamples) -> dict:
    """Per score: AUROC and interval, the scores of each half (for the plots), the ROC."""
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
    out = {}
    for name, by_task in scores.items():
        positives = [by_task[t] for t in contaminated if t in by_task]
        negatives = [by_task[t] for t in held_out if t in by_task]
        if not positives or not negatives:
            out[name] = {"available": False, "reason": reasons.get(name, "no scores")}
            continue
        measured = separation(positives, negatives, resamples)
        entry = {"available": True, **measured.to_dict(),
                 "contaminated": positives, "held_out": negatives,
                 "roc": roc_points(positives, negatives)}  # fmt: skip
        if name.startswith("clone_"):
            entry["rate_contaminated"] = sum(v > 0 for v in positives) / len(positives)
            entry["rate_held_out"] = sum(v > 0 for v in negatives) / len(negatives)
        out[name] = entry
    return out
