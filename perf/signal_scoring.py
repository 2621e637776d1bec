"""Likelihood scoring speed of the embedded model (SmolLM2-135M, GGUF loaded by transformers).

Scores the canonical body of the first K HumanEval tasks after their prompts, as the audit's
chat mode sends them (chat template, instruction, answer fence and prompt), once with batch
size 1 and once with the chosen batch size, and prints, all measured in this run: texts per
second and scored tokens per second for each, and their ratio; then the four likelihood
signals' medians over the tasks (from one scoring, shared through the cache).

    python perf/signal_scoring.py --tasks 16
    python perf/signal_scoring.py --tasks 164 --batch-size 8
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.generation.postprocess import chat_message
from cloneprobe.signals.base import TaskInputs, TokenLogProbs
from cloneprobe.signals.registry import LIKELIHOOD_SIGNALS, get_signal
from cloneprobe.signals.scoring import CachingScorer, ScorerFactory, ScorerOptions


def timed_scoring(scorer, texts) -> tuple[float, int]:
    started = time.perf_counter()
    results = scorer.score(texts)
    seconds = time.perf_counter() - started
    tokens = sum(len(r.logprobs) for r in results if isinstance(r, TokenLogProbs))
    return seconds, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    tasks = load_humaneval().tasks[: args.tasks]
    inputs = [
        TaskInputs(
            t.task_id,
            t.prompt,
            t.canonical_solution,
            mode="chat",
            user_message=chat_message(t.prompt),
        )
        for t in tasks
    ]
    texts = [i.scoring_text() for i in inputs]
    started = time.perf_counter()
    scorer = ScorerFactory(ScorerOptions(batch_size=1))("embedded")
    print(f"model loaded in {time.perf_counter() - started:.1f} s; torch threads "
          f"{torch.get_num_threads()}")  # fmt: skip
    inner = scorer.inner  # type: ignore[attr-defined]
    rates = {}
    for batch in (1, args.batch_size):
        inner.batch_size = batch
        seconds, tokens = timed_scoring(inner, texts)
        rates[batch] = len(texts) / seconds
        print(f"batch {batch}: {len(texts)} texts in {seconds:.1f} s = {rates[batch]:.2f} "
              f"texts/s, {tokens / seconds:.0f} scored tokens/s")  # fmt: skip
    print(f"batch {args.batch_size} / batch 1: {rates[args.batch_size] / rates[1]:.2f}x")
    cached = CachingScorer(inner)
    for name in LIKELIHOOD_SIGNALS:
        signal = get_signal(name)
        scores = signal.score_tasks(
            [TaskInputs(**{**i.__dict__, "scorer": cached}) for i in inputs]
        )
        values = [s.value for s in scores if s.value is not None]
        print(f"{name}: median {statistics.median(values):.4g} over {len(values)} tasks")


if __name__ == "__main__":
    main()
