"""Generation throughput: API concurrency against the ideal, and batched local generation.

    python3 perf/generation_throughput.py [--tasks 164] [--samples 20] [--concurrency 32]
                                          [--latency 0.2] [--embedded-prompts 16] [--json]

API: the plan (tasks x samples) runs through the real runner, OpenAI backend and SQLite store
against the local OpenAI-compatible test server answering each request after `latency`
seconds. Ideal wall time = requests / concurrency x latency; the target is at least 80% of ideal
(ideal / measured >= 0.8) at concurrency 32. Measured twice: a server that honours n (one
request per task) and one that refuses n > 1 as llama.cpp does (one request per sample).

Embedded: SmolLM2-135M-Instruct, the same prompts generated in batches and one sequence at a
time; the target is at least 3x the tokens per second when batched.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cloneprobe.benchmarks import load_humaneval, load_prompt_set
from cloneprobe.generation import (
    Plan,
    SampleStore,
    SamplingSettings,
    run_plan,
)
from cloneprobe.generation.backends.base import GenerationRequest
from cloneprobe.generation.backends.openai_backend import OpenAIBackend
from cloneprobe.generation.postprocess import chat_message

TESTS = Path(__file__).resolve().parent.parent / "tests"
SERVE = """
import sys
sys.path.insert(0, sys.argv[1])
from openai_test_server import OpenAITestServer
with OpenAITestServer(latency=float(sys.argv[2]), n_mode=sys.argv[3]) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
    print(len(server.requests), flush=True)
"""
API_TARGET = 0.8
BATCH_TARGET = 3.0


@contextlib.contextmanager
def test_server(latency: float, n_mode: str):
    """The local OpenAI-compatible test server (it lives with the tests) in its own process,
    so that its request handling does not compete with the client for the interpreter.
    Yields (base URL, a list that receives the request count when the server stops)."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(TESTS), str(latency), n_mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    count: list[int] = []
    try:
        yield process.stdout.readline().strip(), count
    finally:
        out, _ = process.communicate("", timeout=30)
        count.append(int(out.strip() or 0))


def api_run(tasks: int, samples: int, concurrency: int, latency: float, n_mode: str) -> dict:
    benchmark = load_humaneval()
    original = load_prompt_set("original", benchmark)
    task_ids = frozenset(t.task_id for t in benchmark.tasks[:tasks])
    plan = Plan([original], benchmark, [0.8], samples, SamplingSettings(), task_ids)
    with (
        test_server(latency, n_mode) as (base_url, request_count),
        tempfile.TemporaryDirectory() as folder,
        SampleStore(Path(folder) / "store.sqlite") as store,
    ):
        backend = OpenAIBackend(
            "test-model", base_url=base_url, api_key="perf", concurrency=concurrency
        )
        started = time.perf_counter()
        summary = run_plan("openai:test-model", backend, plan, store, {})
        wall = time.perf_counter() - started
    requests = request_count[0]
    ideal = requests / concurrency * latency
    rounds = -(-requests // concurrency) * latency  # whole rounds: the bound quantization allows
    return {
        "n_mode": n_mode,
        "samples": summary.generated,
        "failed": summary.failed,
        "requests": requests,
        "wall_s": wall,
        "ideal_s": ideal,
        "efficiency": ideal / wall,
        "rounds_s": rounds,
    }


def embedded_run(prompts: int, max_new_tokens: int, batch_size: int) -> dict:
    from cloneprobe.generation.backends.transformers_backend import EmbeddedBackend

    benchmark = load_humaneval()
    backend = EmbeddedBackend(batch_size=batch_size)
    requests = [
        GenerationRequest(
            key=task.task_id,
            prompt=chat_message(task.prompt),
            n=1,
            temperature=0.0,
            top_p=1.0,
            max_new_tokens=max_new_tokens,
            stop=(),
            mode="chat",
        )
        for task in benchmark.tasks[:prompts]
    ]
    results = []
    started = time.perf_counter()
    backend.generate(requests, results.append)
    wall = time.perf_counter() - started
    tokens = sum(r.completion_tokens or 0 for r in results)
    return {
        "batch_size": batch_size,
        "tokens": tokens,
        "wall_s": wall,
        "tokens_per_s": tokens / wall,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=164)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--embedded-prompts", type=int, default=16, help="0 skips the model")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON only")
    args = parser.parse_args(argv)

    figures: dict = {"api": [], "embedded": []}
    for n_mode in ("openai", "refuse"):
        figures["api"].append(
            api_run(args.tasks, args.samples, args.concurrency, args.latency, n_mode)
        )
    if args.embedded_prompts:
        for batch_size in (args.embedded_prompts, 1):
            figures["embedded"].append(
                embedded_run(args.embedded_prompts, args.max_new_tokens, batch_size)
            )
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(
        f"API: {args.tasks} tasks x {args.samples} samples, concurrency {args.concurrency}, "
        f"{args.latency * 1000:.0f} ms per request (local OpenAI-compatible test server)"
    )
    for run in figures["api"]:
        how = "n per request" if run["n_mode"] == "openai" else "server refuses n>1 (llama.cpp)"
        print(
            f"  {how:32s} {run['samples']} samples, {run['failed']} failed, "
            f"{run['requests']} requests in {run['wall_s']:.2f} s; ideal {run['ideal_s']:.2f} s "
            f"-> {run['efficiency']:.0%} of ideal (target >= {API_TARGET:.0%}); "
            f"whole rounds of {args.concurrency} take {run['rounds_s']:.2f} s"
        )
    if figures["embedded"]:
        batched, single = figures["embedded"]
        ratio = batched["tokens_per_s"] / single["tokens_per_s"]
        print(
            f"embedded model, {args.embedded_prompts} prompts, chat mode, "
            f"{args.max_new_tokens} new tokens at most, greedy:"
        )
        for run in figures["embedded"]:
            print(
                f"  batch size {run['batch_size']:3d}: {run['tokens']} tokens in "
                f"{run['wall_s']:.1f} s = {run['tokens_per_s']:.1f} tokens/s"
            )
        print(f"  batched / one at a time = {ratio:.2f}x (target >= {BATCH_TARGET:.0f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
