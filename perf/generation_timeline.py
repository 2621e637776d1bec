"""Where the wall time of one API generation run goes: a timeline in milliseconds after the clock.

    PYTHONPATH=<checkout> python3 perf/generation_timeline.py [--concurrency 128]
                                      [--n-mode openai|refuse] [--texts same|distinct]

The workload of `perf/generation_throughput.py` (164 tasks x 20 samples against the local
OpenAI-compatible test server in its own process, 200 ms a request), run once in this
process with whichever cloneprobe is on the path, observed from three sides: the store's
calls and the backend's `generate` (wrapped), each request as aiohttp sees it (its trace hooks:
started, connection made, request sent, answer read) and the server's record of each request
(arrived, answered). The hooks cost the client a little CPU, so the wall time here is a
little above the throughput script's; compare timelines with timelines. Printed: the wall
time and its ratio to the whole-round ideal, the store's calls in order, and for each kind of
request event the times of the first, the 8th, the 36th, the 128th and the last.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generation_throughput

CLOCK = [0.0]
EVENTS: list[tuple[str, float]] = []
REQUESTS: dict[str, list[float]] = {"started": [], "connected": [], "sent": [], "read": []}


def now() -> float:
    return time.perf_counter() - CLOCK[0]


def wrapped(owner, name: str) -> None:
    """Record when `owner.name` is entered (`name>`) and left (`name<`)."""
    function = getattr(owner, name)

    def call(*args, **kwargs):
        EVENTS.append((name + ">", now()))
        try:
            return function(*args, **kwargs)
        finally:
            EVENTS.append((name + "<", now()))

    setattr(owner, name, call)


def traced_sessions() -> None:
    """Every aiohttp session made from now on records its requests' events in REQUESTS."""
    import aiohttp

    trace = aiohttp.TraceConfig()
    for hook, kind in (("on_request_start", "started"), ("on_connection_create_end",
                       "connected"), ("on_request_headers_sent", "sent"),
                       ("on_request_end", "read")):  # fmt: skip

        async def record(session, context, params, kind=kind):
            REQUESTS[kind].append(now())

        getattr(trace, hook).append(record)
    made = aiohttp.ClientSession.__init__

    def init(self, *args, **kwargs):
        made(self, *args, trace_configs=[trace], **kwargs)

    aiohttp.ClientSession.__init__ = init


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--n-mode", choices=["openai", "refuse"], default="openai")
    parser.add_argument("--texts", choices=["same", "distinct"], default="same")
    args = parser.parse_args(argv)

    import openai

    import cloneprobe.generation.backends.openai_http as http
    from cloneprobe.benchmarks import load_humaneval, load_prompt_set
    from cloneprobe.generation import Plan, SampleStore, SamplingSettings, run_plan
    from cloneprobe.generation.backends.openai_backend import OpenAIBackend

    openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x")  # the one-off imports
    http.tls_context()
    traced_sessions()
    for name in ("claim", "add", "end_run"):
        wrapped(SampleStore, name)
    wrapped(OpenAIBackend, "generate")
    benchmark = load_humaneval()
    plan = Plan([load_prompt_set("original", benchmark)], benchmark, [0.8], 20,
                SamplingSettings(), frozenset(t.task_id for t in benchmark.tasks))  # fmt: skip
    with (
        generation_throughput.test_server(0.2, args.n_mode, args.concurrency + 16, args.texts)
        as (base_url, ended),
        tempfile.TemporaryDirectory() as folder,
        SampleStore(Path(folder) / "store.sqlite") as store,
    ):
        backend = OpenAIBackend("test-model", base_url=base_url, api_key="perf",
                                concurrency=args.concurrency)  # fmt: skip
        epoch, CLOCK[0] = time.time(), time.perf_counter()
        run_plan("openai:test-model", backend, plan, store, {})
        wall = now()
    needed = len(plan.slots()) * (1 if args.n_mode == "openai" else 20)
    ideal = -(-needed // args.concurrency) * 0.2
    print(f"wall {wall * 1000:.0f} ms, whole rounds {ideal:.2f} s -> {ideal / wall:.0%}; "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    print("store and backend:", " ".join(f"{name}{at * 1000:.0f}" for name, at in EVENTS))
    server = {"server arrived": sorted(arrived - epoch for arrived, _ in ended["times"]),
              "server answered": sorted(sent - epoch for _, sent in ended["times"] if sent)}
    for kind, times in {**{f"client {k}": sorted(v) for k, v in REQUESTS.items()},
                        **server}.items():  # fmt: skip
        if times:
            picks = " ".join(f"{label} {times[min(i, len(times)) - 1] * 1000:.0f}"
                             for label, i in (("first", 1), ("8th", 8), ("36th", 36),
                                              ("128th", 128), ("last", len(times))))  # fmt: skip
            print(f"  {kind:16s} {picks} ({len(times)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
