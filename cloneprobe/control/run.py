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
and scores), `control.json` and `report.html` (the HTML report with the control's section).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict

from cloneprobe.audit.detection import DetectionSettings
from cloneprobe.benchmarks import Task, load_benchmark, load_prompt_set, select_tasks
from cloneprobe.control.finetune import (
    TrainingText,
    cache_hidden_states,
    contaminate,
)
from cloneprobe.errors import UserError
from cloneprobe.generation import Plan, SampleStore, SamplingSettings, run_plan
from cloneprobe.generation.postprocess import chat_message
from cloneprobe.pipeline import Reporter
from cloneprobe.settings import ANSWER_ROOM, ControlSettings

CHAT_ANSWER_OPENING = "```python\n"
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


def fitted_budget(texts: Sequence[TrainingText]) -> int:
    """The control's token budget when none is given: the longest answer a dose is taught
    (its end token included) plus `ANSWER_ROOM`, so that no dose is cut before it could write
    what it was taught."""
    return max(len(text.answer_ids) for text in texts) + ANSWER_ROOM


def training_texts(backend, tasks: Sequence[Task], mode: str) -> list[TrainingText]:
    from cloneprobe.generation.backends import GenerationRequest

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
    from cloneprobe.generation import parse_model_spec
    from cloneprobe.generation.backends import BackendOptions, make_backend

    if spec != "embedded" and not spec.startswith("hf:"):
        spec = f"hf:{spec}"
    parsed = parse_model_spec(spec)
    if parsed.kind == "openai":
        raise UserError(
            f"--model {spec}: the control fine-tunes a local model; give embedded or hf:<folder>"
        )
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
        from cloneprobe.signals.scoring import CachingScorer
        from cloneprobe.signals.scoring.transformers_scorer import TransformersScorer

        return CachingScorer(
            TransformersScorer(self.models[model], self.tokenizer, model, self.batch_size)
        )


def run_control(settings: ControlSettings, reporter: Reporter) -> dict:
    """Split, fine-tune, audit the base and every dose, and measure the separation."""
    from cloneprobe.clones import DetectorConfig, get_profile
    from cloneprobe.control.audit import (
        audit_control_model,
        compact_tasks,
        control_samples,
        separations,
        verdict_separation,
    )
    from cloneprobe.evidence.verdict import DEFAULT_VERDICT_RULE, evidence_key
    from cloneprobe.generation.backends.transformers_backend import TransformersBackend
    from cloneprobe.signals.registry import SIGNALS, parse_signal_names

    benchmark = load_benchmark(settings.benchmark)
    chosen = select_tasks(benchmark, settings.limit, None)
    task_ids = [t.task_id for t in benchmark.tasks if chosen is None or t.task_id in chosen]
    if len(task_ids) < 2:
        raise UserError(f"{len(task_ids)} task(s): the control needs at least 2 to split; "
                        "give --limit 2 or more")
    contaminated, held_out = split_tasks(task_ids, settings.seed)
    with reporter.status(f"loading {settings.model} ..."):
        base_name, base = load_base(settings.model, settings.batch_size)
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
    prompt_names = settings.prompts or (
        ("original", "disguised") if "disguised" in benchmark.prompt_sets else ("original",)
    )
    prompt_sets = [load_prompt_set(name, benchmark) for name in prompt_names]
    # original (in whatever order --prompts named it): what the doses are taught, the verdicts'
    prompt_set = next(p for p in prompt_sets if p.name == "original")
    max_new_tokens = settings.max_new_tokens or fitted_budget(texts)
    sampling = SamplingSettings(
        mode=mode,
        max_new_tokens=max_new_tokens,
        seed=settings.seed,  # type: ignore[arg-type]
    )
    plan = Plan(prompt_sets, benchmark, [settings.temperature], settings.n, sampling,
                frozenset(task_ids))  # fmt: skip
    signal_names = settings.signals or parse_signal_names(None)
    profiles = {
        "default": DetectionSettings(DetectorConfig()),
        "nicad": DetectionSettings(DetectorConfig(profile=get_profile("nicad"))),
    }
    results, verdicts, tasks = {}, {}, {}
    base_label = next(iter(models))
    with SampleStore(settings.output / "control.sqlite") as store:
        for label, model in models.items():
            backend = TransformersBackend.from_loaded(
                model, base.tokenizer, label, settings.batch_size, label="control"
            )
            with reporter.task(f"generating ({names[label]})", plan.total) as bar:

                def update(already: int, ok: int, failed: int, bar=bar) -> None:
                    bar.update(already + ok + failed, failed=failed)

                run_plan(label, backend, plan, store, {"control": tag}, update)
            samples = control_samples(store, label, prompt_names, sampling.key, task_ids,
                                      settings.temperature)  # fmt: skip
            per_task = audit_control_model(
                store, benchmark, label, samples, prompt_set, profiles, signal_names,
                _InMemoryScorers(models, base.tokenizer, 4),
                None if label == base_label else base_label, reporter.task,
            )  # fmt: skip
            results[names[label]] = separations(
                per_task, contaminated, held_out, signal_names, SIGNALS, settings.resamples
            )
            verdicts[names[label]] = verdict_separation(per_task["default"], contaminated,
                                                        held_out)  # fmt: skip
            tasks[names[label]] = compact_tasks(per_task["default"], contaminated)
    report = {
        "settings": {**_describe(settings), "mode": mode, "max_new_tokens": max_new_tokens,
                     "max_new_tokens_fitted": settings.max_new_tokens is None,
                     "prompts": list(prompt_names),
                     "base_model": base_name, "tag": tag,
                     "tasks": len(task_ids), "store": str(settings.output / "control.sqlite"),
                     "sampling_key": sampling.key},
        "split": {"contaminated": contaminated, "held_out": held_out},
        "models": results,
        "verdict_rule": DEFAULT_VERDICT_RULE.as_dict(),
        "evidence_key": evidence_key(),
        "verdicts": verdicts,
        "tasks": tasks,
    }  # fmt: skip
    from cloneprobe.reports.control_html import write_control_report

    write_control_report(report, settings.output)
    return report


def _describe(settings: ControlSettings) -> dict:
    described = asdict(settings)
    described["output"] = str(settings.output)
    described["doses"] = dict(settings.doses)
    return described
