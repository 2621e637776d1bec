"""Local generation speed of the embedded model (SmolLM2-135M-Instruct), all measured in one run.

    python perf/local_generation.py [--tasks 24] [--n 2] [--max-new-tokens 128]
                                    [--batch-size 16] [--rounds 2] [--threads 2]
                                    [--dtype auto|float32|bfloat16] [--clock wall|cpu]
                                    [--json]

The workload: the first `--tasks` HumanEval prompts in chat mode (as the audit sends them),
`--n` samples each at temperature 0.8, top-p 0.95, seed 1, at most `--max-new-tokens` new
tokens. Printed, per round and as the median over rounds:

- **before**: the former generation path (transformers' `generate` on the float32 model with
  SDPA attention, over batches of `--batch-size` left-padded sequences, every sequence of a
  batch running until the last one ends, a stopping criterion decoding the whole batch at each
  step);
- **now**: the backend as it is (`TransformersBackend.generate` with `--dtype`, default auto:
  bfloat16 on a CPU with native bfloat16; grouped-matmul attention for decoding steps, a cache
  written in place, each prompt prefilled once for its samples, a sequence leaving the batch
  as soon as it ends, one random stream per sample, nucleus found by a partial sort);
- **bound**: a plain forward pass of the model as `now` runs it (its dtype and attention, the
  same in-place cache), no sampling and no bookkeeping: the time of one KV-cached decoding step
  of `--batch-size` sequences at the workload's mean context length, as tokens/s (batch size /
  step time). No generation of this batch size and dtype can beat it. `bound_float32` is the
  same for the former float32 model (what the former path could at best reach).

`--clock cpu` times everything by the process's CPU time instead of the wall clock: on a
machine shared with other jobs the wall clock counts the time spent waiting for a core, which
varies from one measurement to the next far more than the effect sought. Use it with
`--threads 1` only: with more threads it also counts the time OpenMP threads spin waiting for
each other.

Generated tokens/s counts the new tokens of every sample (an end token excluded). The ratio
now/before is the speed-up; now/bound is how much of the plain forward-pass speed the backend
keeps. Before and now run alternately in each round, so both see the same machine load; the
machine is shared, so read the ratios, not the absolute rates.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch
import transformers
from transformers import DynamicCache

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.generation.backends.base import GenerationRequest
from cloneprobe.generation.backends.dtype import DTYPES
from cloneprobe.generation.backends.growing_cache import growing_cache
from cloneprobe.generation.backends.transformers_backend import EmbeddedBackend
from cloneprobe.generation.postprocess import chat_message


class _FenceClosed(transformers.StoppingCriteria):
    """The former chat stopping criterion: decodes the whole batch's new text every step."""

    def __init__(self, tokenizer, prompt_length: int) -> None:
        self.tokenizer = tokenizer
        self.prompt_length = prompt_length

    def __call__(self, input_ids, scores, **kwargs):
        texts = self.tokenizer.batch_decode(input_ids[:, self.prompt_length :])
        return torch.tensor([text.count("```") >= 2 for text in texts])


def generate_before(backend: EmbeddedBackend, requests: list[GenerationRequest]) -> int:
    """The former batching: transformers' generate, fixed batches; returns new tokens made."""
    tokenizer, model = backend.tokenizer, backend.model
    ordered = sorted(requests, key=lambda r: len(backend.render_prompt(r)))
    sequences = [r for r in ordered for _ in range(r.n)]
    first = sequences[0]
    made = 0
    ends = {tokenizer.eos_token_id, tokenizer.pad_token_id} - {None}
    for begin in range(0, len(sequences), backend.batch_size):
        batch = sequences[begin : begin + backend.batch_size]
        torch.manual_seed(first.seed + begin)
        encoded = tokenizer(
            [backend.render_prompt(r) for r in batch], return_tensors="pt", padding=True
        )
        start = encoded["input_ids"].shape[1]
        criteria = transformers.StoppingCriteriaList([_FenceClosed(tokenizer, start)])
        with torch.inference_mode():
            generated = model.generate(
                **encoded,
                max_new_tokens=first.max_new_tokens,
                do_sample=True,
                temperature=first.temperature,
                top_p=first.top_p,
                top_k=0,
                pad_token_id=tokenizer.pad_token_id,
                stopping_criteria=criteria,
            )
        for row in generated[:, start:].tolist():
            made += next((i for i, t in enumerate(row) if t in ends), len(row))
    return made


def generate_now(backend: EmbeddedBackend, requests: list[GenerationRequest]) -> int:
    results = []
    backend.generate(requests, results.append)
    return sum(r.completion_tokens or 0 for r in results)


def forward_bound(
    model, batch: int, context: int, cache_factory, steps: int = 8, clock=time.perf_counter
) -> float:
    """Tokens/s of bare KV-cached decoding steps of `batch` sequences after `context` tokens."""
    ids = torch.randint(100, 1000, (batch, context))
    with torch.inference_mode():
        cache = cache_factory()
        model(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
        token = torch.randint(100, 1000, (batch, 1))
        times = []
        for _ in range(steps + 1):
            began = clock()
            model(input_ids=token, past_key_values=cache, use_cache=True)
            times.append(clock() - began)
            cache.crop(-1)
    return batch / statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dtype", choices=DTYPES, default="auto", help="dtype of `now`")
    parser.add_argument(
        "--clock", choices=("wall", "cpu"), default="wall", help="cpu: process time, 1 thread"
    )
    parser.add_argument("--skip-before", action="store_true", help="measure now and bound only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter

    backend = EmbeddedBackend(batch_size=args.batch_size, dtype=args.dtype)
    former = backend
    if not args.skip_before:  # the former path: the float32 model with SDPA attention
        former = EmbeddedBackend(batch_size=args.batch_size, dtype="float32")
        former.model.set_attn_implementation("sdpa")
    tasks = load_humaneval().tasks[: args.tasks]
    requests = [
        GenerationRequest(
            key=task.task_id,
            prompt=chat_message(task.prompt),
            n=args.n,
            temperature=0.8,
            top_p=0.95,
            max_new_tokens=args.max_new_tokens,
            stop=(),
            mode="chat",
            seed=1,
        )
        for task in tasks
    ]
    prompt_lengths = [len(backend.prompt_token_ids(r)) for r in requests]
    context = int(statistics.mean(prompt_lengths)) + args.max_new_tokens // 4

    rounds = []
    for number in range(1, args.rounds + 1):
        measured = {}
        runs = [("now", generate_now, backend)]
        if not args.skip_before:
            runs.insert(0 if number % 2 else 1, ("before", generate_before, former))
        for name, run, measured_backend in runs:
            began = clock()
            tokens = run(measured_backend, requests)
            seconds = clock() - began
            measured[name] = {
                "tokens": tokens,
                "seconds": seconds,
                "tokens_per_s": tokens / seconds,
            }
        measured["bound"] = {
            "tokens_per_s": forward_bound(
                backend.model, args.batch_size, context, growing_cache, clock=clock
            )
        }
        if not args.skip_before:
            measured["bound_float32"] = {
                "tokens_per_s": forward_bound(
                    former.model, args.batch_size, context, DynamicCache, clock=clock
                )
            }
        rounds.append(measured)
        if not args.json:
            line = "  ".join(
                f"{name} {values['tokens_per_s']:6.1f} tok/s" for name, values in measured.items()
            )
            load = os.getloadavg()[0]
            print(f"round {number}: {line}  (load average {load:.1f})", flush=True)

    def ratio(a: str, b: str) -> float | None:
        if any(b not in r or a not in r for r in rounds):
            return None
        return statistics.median(r[a]["tokens_per_s"] / r[b]["tokens_per_s"] for r in rounds)

    summary = {
        "workload": {
            "tasks": len(tasks),
            "n": args.n,
            "max_new_tokens": args.max_new_tokens,
            "batch_size": args.batch_size,
            "threads": torch.get_num_threads(),
            "clock": args.clock,
            "dtype": backend.dtype,
            "load_average": os.getloadavg(),
            "mean_prompt_tokens": statistics.mean(prompt_lengths),
            "bound_context": context,
        },
        "rounds": rounds,
        "now_over_before": ratio("now", "before"),
        "now_over_bound": ratio("now", "bound"),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(
        f"median over {len(rounds)} rounds: now/before = {summary['now_over_before'] or 0:.2f}x, "
        f"now/bound = {summary['now_over_bound']:.2f} "
        f"({len(tasks)} tasks x {args.n} samples, <= {args.max_new_tokens} new tokens, "
        f"batch {args.batch_size}, {torch.get_num_threads()} threads, now in {backend.dtype}, "
        f"{args.clock} clock; "
        f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())})"
    )


if __name__ == "__main__":
    main()
