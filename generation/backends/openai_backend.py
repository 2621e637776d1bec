"""OpenAI and any OpenAI-compatible server (vLLM, llama.cpp, Ollama) through the openai SDK.

Requests run concurrently under a limit; n > 1 is asked for in one request and topped up
with further requests where a server returns fewer choices (Ollama) or refuses n > 1
(llama.cpp), those asked all at once, a slot each. 429, 5xx, timeouts, dropped connections
and malformed answers are retried with exponential backoff and jitter, honouring Retry-After.
The requests run on an event loop in a thread of their own, so that storing the results (in
the caller's thread) never delays the next request."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import random
import sys
import threading
import time
from collections.abc import Sequence

import openai
import orjson

from ..errors import GenerationError
from ..secrets import redact_url
from .base import Backend, GenerationRequest, GenerationResult, OnResult

log = logging.getLogger(__name__)

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
SLOTS_PER_CLIENT = 16
"""Concurrent requests per client (connection pool); see `_Slots`."""


class OpenAIBackend(Backend):
    default_mode = "completion"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        concurrency: int = 16,
        timeout: float = 120.0,
        max_retries: int = 6,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
    ) -> None:
        if concurrency < 1:
            raise GenerationError(f"concurrency {concurrency}: must be at least 1")
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.supports_n = True

    def describe(self) -> dict:
        return {
            "backend": "openai",
            "model": self.model,
            "base_url": redact_url(self.base_url),
            "concurrency": self.concurrency,
            "timeout": self.timeout,
            "openai": openai.__version__,
        }

    def generate(self, requests: Sequence[GenerationRequest], on_result: OnResult) -> None:
        """The requests run on an event loop in a thread of their own; each result is handed
        to `on_result` in the calling thread, so storing a result (repairing its samples, a
        SQLite commit) never holds up the next request, and the store stays in its thread."""
        finished: queue.SimpleQueue = queue.SimpleQueue()
        loop = asyncio.new_event_loop()
        main = loop.create_task(self._generate_all(requests, finished.put))
        thread = threading.Thread(
            target=_run_loop, args=(loop, main, finished.put), name="openai-requests"
        )
        thread.start()
        try:
            for _ in range(len(requests)):
                result = finished.get()
                if isinstance(result, BaseException):
                    raise result
                on_result(result)
        finally:
            if thread.is_alive():  # interrupted, or on_result failed: stop asking
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                    loop.call_soon_threadsafe(main.cancel)
            thread.join()

    async def _generate_all(self, requests, deliver: OnResult) -> None:
        clients = self._clients()
        slots = _Slots(clients, self.concurrency)
        tasks = [asyncio.create_task(self._one(slots, r)) for r in requests]
        try:
            for task in tasks:
                task.add_done_callback(_retrieve)
            for finished in asyncio.as_completed(tasks):
                deliver(await finished)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for client in clients:
                await client.close()

    def _clients(self) -> list[openai.AsyncOpenAI]:
        """A client (a connection pool) for every SLOTS_PER_CLIENT slots, keeping a connection
        alive for each slot, all sharing one TLS context (each client would build its own)."""
        base_url, query = _split_query(self.base_url)
        limits = openai.DEFAULT_CONNECTION_LIMITS  # an object of the SDK's HTTP library
        http = sys.modules[type(limits).__module__.partition(".")[0]]  # httpx (or httpx2)
        count = -(-self.concurrency // SLOTS_PER_CLIENT)
        each = -(-self.concurrency // count)
        pool = type(limits)(
            max_connections=max(limits.max_connections or 0, each),
            max_keepalive_connections=each,
        )
        tls = http.create_ssl_context()  # what each client would make: SSL_CERT_FILE honoured
        return [
            openai.AsyncOpenAI(
                base_url=base_url,
                default_query=query or None,  # `?api-version=...&api_key=...`: on each request
                api_key=self.api_key or "not-needed",
                max_retries=0,
                timeout=self.timeout,
                http_client=openai.DefaultAsyncHttpxClient(
                    limits=pool, timeout=self.timeout, verify=tls
                ),
            )
            for _ in range(count)
        ]

    async def _one(self, slots: _Slots, request: GenerationRequest) -> GenerationResult:
        texts: list[str] = []
        reasons: list[str] = []
        prompt_tokens = completion_tokens = 0
        text_tokens: list[int] | None = []  # exact per text while each call returns one text
        prompt_each: int | None = None
        started = time.monotonic()
        while len(texts) < request.n:
            missing = request.n - len(texts)
            asked = [(len(texts), missing)]  # (first sample, how many) of each call
            if not self.supports_n:  # one sample a call: all of them at once, a slot each
                asked = [(len(texts) + i, 1) for i in range(missing)]
            answers = await asyncio.gather(
                *(self._in_slot(slots, request, first, count) for first, count in asked),
                return_exceptions=True,
            )
            failure = next((a for a in answers if isinstance(a, BaseException)), None)
            if isinstance(failure, _Failed):
                return GenerationResult(
                    request, latency=time.monotonic() - started, error=str(failure)
                )
            if failure is not None:
                raise failure
            for choices, usage, wanted in answers:
                if not choices:
                    return GenerationResult(
                        request,
                        latency=time.monotonic() - started,
                        error="the server returned no choices",
                    )
                if wanted > 1 and len(choices) < wanted:
                    self.supports_n = False  # the server ignores n (Ollama): one at a time
                kept = choices[: request.n - len(texts)]
                for text, reason in kept:
                    texts.append(text)
                    reasons.append(reason)
                prompt_tokens += usage[0]
                completion_tokens += usage[1]
                prompt_each = usage[0] if prompt_each is None else prompt_each
                # usage is per request: it is one text's own count only when one text came back
                text_tokens = [*text_tokens, usage[1]] if text_tokens is not None and len(
                    choices) == 1 else None  # fmt: skip
        return GenerationResult(
            request, texts, reasons, prompt_tokens, completion_tokens, time.monotonic() - started,
            text_tokens=text_tokens, prompt_tokens_each=prompt_each,
        )  # fmt: skip

    async def _in_slot(self, slots: _Slots, request: GenerationRequest, first: int, count: int):
        """Up to `count` samples from sample `first` on, in one request once a slot is free
        (one sample when the server is known, by then, to refuse or ignore n > 1).
        Returns (choices, usage, the n asked)."""
        async with slots.taken() as client:
            n = count if self.supports_n else 1
            # a top-up request must not repeat the draws a seed already gave
            seed = None if request.seed is None else request.seed + first
            choices, usage = await self._call_with_retries(client, request, n, seed)
            return choices, usage, n

    async def _call_with_retries(
        self, client, request: GenerationRequest, n: int, seed: int | None
    ):
        attempt = 0
        while True:
            try:
                return await self._call(client, request, n, seed)
            except openai.BadRequestError as error:
                if n > 1:  # llama.cpp refuses n > 1: from now on, one sample per request
                    log.info("server refused n=%d (%s); asking one sample at a time", n, error)
                    self.supports_n = False
                    n = 1
                    continue
                raise _Failed(f"bad request: {_message(error)}") from error
            except openai.APIStatusError as error:
                if error.status_code not in RETRYABLE_STATUS or attempt >= self.max_retries:
                    raise _Failed(f"HTTP {error.status_code}: {_message(error)}") from error
                delay = _retry_after(error) or self._backoff(attempt)
            except (openai.APITimeoutError, openai.APIConnectionError) as error:
                if attempt >= self.max_retries:
                    raise _Failed(f"{type(error).__name__}: {error}") from error
                delay = self._backoff(attempt)
            except (openai.APIResponseValidationError, ValueError) as error:
                if attempt >= self.max_retries:
                    raise _Failed(f"malformed response: {error}") from error
                delay = self._backoff(attempt)
            attempt += 1
            await asyncio.sleep(delay)

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter."""
        return random.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))

    async def _call(self, client, request: GenerationRequest, n: int, seed: int | None):
        common = {
            "model": self.model,
            "n": n,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_tokens": request.max_new_tokens,
            "seed": seed,
        }
        stop = list(request.stop[:4]) or None  # the API takes at most 4 stop sequences
        if request.mode == "chat":
            path, asked = (
                "/chat/completions",
                {"messages": [{"role": "user", "content": request.prompt}]},
            )
        else:
            path, asked = "/completions", {"prompt": request.prompt}
        # the SDK's plain POST (auth, query, timeout, its errors) with the answer read here:
        # its typed request and response models cost more CPU than the HTTP exchange
        body = await client.post(path, body={**asked, **common, "stop": stop}, cast_to=bytes)
        return _read_answer(body, request.mode)


def _read_answer(body: bytes, mode: str) -> tuple[list[tuple[str, str]], tuple[int, int]]:
    """(text, finish reason) of each choice and (prompt, completion) tokens of an answer;
    ValueError when it is not a completion answer (retried as malformed)."""
    answer = orjson.loads(body)
    text = "content" if mode == "chat" else "text"
    try:
        choices = [
            ((c["message"] if mode == "chat" else c).get(text) or "", c.get("finish_reason") or "")
            for c in answer["choices"]
        ]
        usage = answer.get("usage") or {}
        tokens = (usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0)
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"not a completion answer ({error!r}): {body[:200]!r}") from None
    return choices, tokens


class _Slots:
    """The concurrency limit: `concurrency` slots, taken first come first served, each bound
    to one of the clients. Several clients, not one: httpcore looks at every connection of its
    pool each time a request starts or ends, so one pool of 128 connections spent more time
    on that (14 s of CPU for 3280 requests) than the requests took."""

    def __init__(self, clients: list[openai.AsyncOpenAI], concurrency: int) -> None:
        self.clients = clients
        self.concurrency = concurrency
        self.free: asyncio.Queue[int] = asyncio.Queue()
        for slot in range(concurrency):
            self.free.put_nowait(slot)

    @contextlib.asynccontextmanager
    async def taken(self):
        """A free slot's client while the slot is held."""
        slot = await self.free.get()
        try:
            yield self.clients[slot * len(self.clients) // self.concurrency]
        finally:
            self.free.put_nowait(slot)


class _Failed(Exception):
    """A request that failed for good."""


def _message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(error)


def _retry_after(error: openai.APIStatusError) -> float | None:
    value = error.response.headers.get("retry-after") if error.response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _split_query(url: str | None) -> tuple[str | None, dict[str, str]]:
    """The base URL without its query string, and the query's parameters (the SDK appends
    paths to the base URL, so a query left in it would end up in the middle of the path)."""
    if not url or "?" not in url:
        return url, {}
    from urllib.parse import parse_qsl

    base, _, query = url.partition("?")
    return base, dict(parse_qsl(query, keep_blank_values=True))


def _retrieve(task: asyncio.Task) -> None:
    """Mark a finished task's exception as seen: an interrupt (Ctrl-C, SIGTERM) that lands in
    one request propagates through the run as it should, and asyncio does not also log it as
    "never retrieved" when the interrupted run is torn down."""
    if not task.cancelled():
        task.exception()


def _run_loop(loop: asyncio.AbstractEventLoop, main: asyncio.Task, deliver) -> None:
    """Run `main` on `loop` in this thread; an error it ends with is delivered, not lost."""
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main)
    except BaseException as error:  # handed to the calling thread, raised there
        deliver(error)
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()
