"""Generation throughput: API concurrency against the whole-round ideal, and batched local
generation.

    python3 perf/generation_throughput.py [--tasks 164] [--samples 20] [--concurrency 32 128]
                                          [--n-modes openai refuse] [--latency 0.2]
                                          [--texts same|distinct]
                                          [--rounds 3] [--baseline PATH|REV]
                                          [--embedded-prompts 16] [--json]

API: the plan (tasks x samples) runs through the real runner, OpenAI backend and SQLite store
against the local OpenAI-compatible test server (real HTTP, in a process of its own) answering
each request after `latency` seconds; the clock runs around `run_plan`. Each measurement is a
fresh process, with the SDK's HTTP stack imported and the TLS context built before the clock
starts (one-offs of 0.3 s per process that have nothing to do with concurrency). Two servers:
one that honours n (one request per task) and one that refuses n > 1 as llama.cpp does (one
request per sample, after a first round of refused requests). The whole-round ideal is what
quantization allows: the requests the plan needs in whole rounds of `concurrency`,
`ceil(requests / concurrency) x latency`; the target is at least 90% of it (whole-round ideal /
wall >= 0.9) for both servers at concurrency 32 and 128. Printed besides: the client's CPU
seconds (parsing answers, understanding and storing the samples, HTTP), which bound the wall
time when they exceed the ideal, the server's, the load average when each measurement
ended, and a timeline from the server's record of each request (`timeline`): when the first
request and the first round's last reached it, its own time per request past the latency,
and the client's time after the last answer. The server starts a handler thread per slot
before the clock, so that it does not start one per connect inside the measurement. With
`--baseline PATH` (a checkout of the code to compare with) or `--baseline REV` (a git
revision of this repository, e.g. `main`, exported to a temporary folder), every measurement
runs with that code and with this checkout's, alternately, `--rounds` times each, medians
printed: the machine is shared, so read the ratios of one run. The server answers every sample
with the same function body (`--texts same`, the target's workload), which the runner
understands once per answer; `--texts distinct` gives every sample its own body, so each is
parsed and repaired on its own (what a model at a high temperature costs the client).

Embedded: SmolLM2-135M-Instruct, the same prompts generated in batches and one sequence at a
time; the target is at least 3x the tokens per second when batched.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.generation.backends.base import GenerationRequest
from cloneprobe.generation.postprocess import chat_message

HERE = Path(__file__).resolve()
TESTS = HERE.parent.parent / "tests"
SERVE = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from openai_test_server import OpenAITestServer, counting_responder
responder = counting_responder() if sys.argv[5] == "distinct" else None
with OpenAITestServer(responder, latency=float(sys.argv[2]), n_mode=sys.argv[3],
                      threads=int(sys.argv[4])) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
    done = server.requests
    print(len(done), time.process_time(), flush=True)
    print(json.dumps([[r["timestamp"], r.get("answered")] for r in done]), flush=True)
"""
API_TARGET = 0.9
TIMELINE = ("first_arrival_ms", "first_round_arrived_ms", "server_past_latency_ms",
            "server_past_latency_max_ms", "after_last_answer_ms")
BATCH_TARGET = 3.0


@contextlib.contextmanager
def test_server(latency: float, n_mode: str, threads: int, texts: str = "same"):
    """The local OpenAI-compatible test server (it lives with the tests) in its own process,
    so that its request handling does not compete with the client for the interpreter, with
    `threads` handler threads started before the clock (a thread started per connect made a
    burst of 128 connects wait on the server).
    Yields (base URL, a dict that receives, when it stops, the request count, the server's
    CPU seconds and each request's (arrival, answer sent) times)."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(TESTS), str(latency), n_mode, str(threads), texts],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    ended: dict = {}
    try:
        yield process.stdout.readline().strip(), ended
    finally:
        out, _ = process.communicate("", timeout=60)
        lines = out.splitlines()
        count, cpu = lines[0].split() if lines else ("0", "0")
        ended.update(requests=int(count), cpu=float(cpu),
                     times=json.loads(lines[1]) if len(lines) > 1 else [])  # fmt: skip


def api_run(tasks: int, samples: int, concurrency: int, latency: float, n_mode: str,
            texts: str = "same") -> dict:
    """One measurement, in this process, with whichever cloneprobe is on the path."""
    import openai

    import cloneprobe.generation.backends.openai_http as http
    from cloneprobe.benchmarks import load_prompt_set
    from cloneprobe.generation import Plan, SampleStore, SamplingSettings, run_plan
    from cloneprobe.generation.backends.openai_backend import OpenAIBackend

    openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x")  # the one-off imports,
    with contextlib.suppress(ImportError):  # aiohttp's, and the TLS context built once
        import aiohttp  # noqa: F401

        http.tls_context()
    benchmark = load_humaneval()
    original = load_prompt_set("original", benchmark)
    task_ids = frozenset(t.task_id for t in benchmark.tasks[:tasks])
    plan = Plan([original], benchmark, [0.8], samples, SamplingSettings(), task_ids)
    with (
        test_server(latency, n_mode, concurrency + 16, texts) as (base_url, ended),
        tempfile.TemporaryDirectory() as folder,
        SampleStore(Path(folder) / "store.sqlite") as store,
    ):
        backend = OpenAIBackend(
            "test-model", base_url=base_url, api_key="perf", concurrency=concurrency
        )
        cpu, started, epoch = time.process_time(), time.perf_counter(), time.time()
        summary = run_plan("openai:test-model", backend, plan, store, {})
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    needed = len(task_ids) * (1 if n_mode == "openai" else samples)
    rounds = -(-needed // concurrency) * latency
    return {
        "n_mode": n_mode,
        "concurrency": concurrency,
        "samples": summary.generated,
        "failed": summary.failed,
        "requests": ended["requests"],
        "needed_requests": needed,
        "wall_s": wall,
        "ideal_s": needed / concurrency * latency,
        "rounds_s": rounds,
        "of_rounds": rounds / wall,
        "client_cpu_s": cpu,
        "server_cpu_s": ended["cpu"],
        **timeline(ended["times"], epoch, wall, concurrency, latency),
        "load": os.getloadavg()[0],
        "code": str(Path(http.__file__).resolve().parent.parent.parent),
    }


def timeline(times: list, epoch: float, wall: float, concurrency: int, latency: float) -> dict:
    """Where the wall time went, from the server's clock (the same machine's): when the first
    request and the last of the first round reached the server after the clock started, the
    server's own time per request past the latency (read -> answer sent: median and most),
    and the client's time after the last answer was sent (understanding and storing the last
    samples, ending the run)."""
    arrivals = sorted(arrived - epoch for arrived, _ in times)
    past = sorted(sent - arrived - latency for arrived, sent in times if sent is not None)
    sent = [s for _, s in times if s is not None]
    if not arrivals or not past:
        return {}
    return {
        "first_arrival_ms": arrivals[0] * 1000,
        "first_round_arrived_ms": arrivals[min(concurrency, len(arrivals)) - 1] * 1000,
        "server_past_latency_ms": statistics.median(past) * 1000,
        "server_past_latency_max_ms": past[-1] * 1000,
        "after_last_answer_ms": (wall - (max(sent) - epoch)) * 1000,
    }


def api_run_in(tree: Path | None, args, concurrency: int, n_mode: str) -> dict:
    """One measurement in a fresh process running the code of `tree` (None: this checkout)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")])
    command = [sys.executable, str(HERE), "--one", n_mode, "--tasks", str(args.tasks),
               "--samples", str(args.samples), "--concurrency", str(concurrency),
               "--latency", str(args.latency), "--texts", args.texts]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode:
        raise RuntimeError(f"measurement failed: {done.stderr[-2000:]}")
    run = json.loads(done.stdout)
    expected = (tree or HERE.parent.parent).resolve()
    if Path(run["code"]) != expected:
        raise RuntimeError(f"measured the code in {run['code']}, not {expected}")
    return run


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


@contextlib.contextmanager
def baseline_tree(baseline: str | None):
    """The baseline's code: a folder as given, or a git revision exported to a temporary one."""
    if baseline is None or Path(baseline).is_dir():
        yield None if baseline is None else Path(baseline)
        return
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(["git", "-C", str(HERE.parent.parent), "archive", baseline],
                                 capture_output=True)  # fmt: skip
        if archive.returncode:
            raise SystemExit(f"--baseline {baseline}: neither a folder nor a revision of this "
                             f"repository ({archive.stderr.decode(errors='replace').strip()})")
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
        yield Path(folder)


def api_figures(args) -> list[dict]:
    """Every (concurrency, server) measured `rounds` times, baseline and now alternating."""
    with baseline_tree(args.baseline) as tree:
        return _api_figures(args, tree)


def _api_figures(args, baseline: Path | None) -> list[dict]:
    codes = [("now", None)] + ([("baseline", baseline)] if baseline else [])
    runs: dict[tuple, list[dict]] = {}
    for _ in range(args.rounds):
        for concurrency in args.concurrency:
            for n_mode in args.n_modes:
                for code, tree in codes:
                    run = api_run_in(tree, args, concurrency, n_mode)
                    print(f"{code} c={concurrency} {n_mode}: {run['of_rounds']:.0%} of whole "
                          f"rounds, {run['wall_s']:.2f} s, load {os.getloadavg()[0]:.1f}",
                          file=sys.stderr, flush=True)  # fmt: skip
                    runs.setdefault((concurrency, n_mode, code), []).append(run)
    figures = []
    for (_, _, code), measured in runs.items():
        median = {
            key: statistics.median(run[key] for run in measured)
            for key in ("wall_s", "of_rounds", "client_cpu_s", "server_cpu_s", "load",
                        *TIMELINE)
            if all(key in run for run in measured)
        }
        figures.append({**measured[0], **median, "code": code, "runs": measured})
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=164)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 128])
    parser.add_argument("--n-modes", nargs="+", default=["openai", "refuse"],
                        choices=["openai", "refuse"])  # fmt: skip
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--texts", choices=["same", "distinct"], default="same",
                        help="the server's texts: the same function body for every sample "
                        "(the target's workload), or a different one for each (nothing for "
                        "the client to understand once for several samples)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--baseline", help="a checkout of the code to compare with, or a git "
                        "revision (e.g. main)")  # fmt: skip
    parser.add_argument("--one", help=argparse.SUPPRESS)  # one measurement (a child process)
    parser.add_argument("--embedded-prompts", type=int, default=16, help="0 skips the model")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON only")
    args = parser.parse_args(argv)
    if args.one:
        run = api_run(args.tasks, args.samples, args.concurrency[0], args.latency, args.one,
                      args.texts)
        print(json.dumps(run))
        return 0

    load = os.getloadavg()
    figures: dict = {"load_before": load, "api": api_figures(args), "embedded": []}
    if args.embedded_prompts:
        for batch_size in (args.embedded_prompts, 1):
            figures["embedded"].append(
                embedded_run(args.embedded_prompts, args.max_new_tokens, batch_size)
            )
    figures["load_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(
        f"API: {args.tasks} tasks x {args.samples} samples, {args.latency * 1000:.0f} ms per "
        f"request (local OpenAI-compatible test server, {args.texts} texts); median of "
        f"{args.rounds}; load "
        f"{load[0]:.1f} before, {figures['load_after'][0]:.1f} after"
    )
    for run in figures["api"]:
        how = "n honoured" if run["n_mode"] == "openai" else "n refused (llama.cpp)"
        print(
            f"  {run['code']:8s} c={run['concurrency']:<3d} {how:21s} {run['samples']} samples, "
            f"{run['failed']} failed, {run['requests']} requests in {run['wall_s']:.2f} s; "
            f"whole rounds {run['rounds_s']:.2f} s -> {run['of_rounds']:.0%} of it "
            f"(target >= {API_TARGET:.0%}); CPU client {run['client_cpu_s']:.2f} s, "
            f"server {run['server_cpu_s']:.2f} s; load {run['load']:.1f}"
        )
        if "first_arrival_ms" in run:
            print(
                f"{'':13s}first request at the server {run['first_arrival_ms']:.0f} ms after "
                f"the clock, the first round's last {run['first_round_arrived_ms']:.0f} ms; "
                f"server past the latency {run['server_past_latency_ms']:.1f} ms a request "
                f"(most {run['server_past_latency_max_ms']:.1f}); client after the last "
                f"answer {run['after_last_answer_ms']:.0f} ms"
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
