"""OpenAI and any OpenAI-compatible server (vLLM, llama.cpp, Ollama) through the openai SDK.

Requests run concurrently under a limit, on an event loop in a thread of its own (storing the
results, in the caller's thread, never delays the next request); n > 1 is asked for in one
request and topped up with further requests where a server returns fewer choices (Ollama) or
refuses n > 1 (llama.cpp), those asked all at once, a slot each. 429, 5xx, timeouts, dropped
connections and malformed answers are retried with exponential backoff and jitter, honouring
a Retry-After up to `MAX_RETRY_AFTER` seconds (a server asking for longer fails the request
with that said). Each request has a deadline of
`timeout` seconds in all, so a server that trickles an answer forever is cut off; an answer
that is not a completion (an HTML page, `null`, a choice whose text is null) is malformed.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import queue
import random
import threading
import time
from collections.abc import Sequence

import openai
import orjson

from ..errors import GenerationError
from ..secrets import redact_url
from .base import Backend, GenerationRequest, GenerationResult, OnResult
from .openai_http import Slots, posters

log = logging.getLogger(__name__)

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
MAX_RETRY_AFTER = 300.0
"""Seconds a Retry-After may ask for; a server asking for longer fails the request."""


START_BATCH = 8
"""Requests started before the event loop lets them connect and send (the first round)."""
START_PAUSE = 0.0005
"""Seconds the first round pauses after each START_BATCH requests, so that the loop connects
and sends them before more start (nothing is lost when the loop is busy meanwhile)."""


class MalformedAnswer(ValueError):
    """A 200 answer that is not a completion."""


class OpenAIBackend(Backend):
    default_mode = "completion"
    signals_bursts = True

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
        if api_key is not None and (not api_key.isprintable() or api_key != api_key.strip()):
            raise GenerationError(
                "the API key (OPENAI_API_KEY or --api-key-file) holds a line break, space or "
                "control character; set it to the key alone"
            )
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.supports_n = True
        self.transport: str | None = None
        """The SDK's HTTP stack: "aiohttp", "httpx", or None for aiohttp where installed."""
        self.reached = False
        """Whether the server has answered once: until then a refused connection is a wrong
        address (failed at once), after it a server restarting (retried)."""
        self.unreachable: str | None = None
        """Why a server that never answered could not be reached: once a request has failed
        for good that way, the rest fail at once with the same reason instead of each waiting
        out its own timeouts."""

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
        SQLite commit) never holds up the next request, and the store stays in its thread;
        the results that are ready are handed over in one burst, then `on_result.flush()`."""
        finished: queue.SimpleQueue = queue.SimpleQueue()
        loop = asyncio.new_event_loop()
        stored = loop.create_future()  # set once the caller has taken every result
        main = loop.create_task(self._generate_all(requests, finished.put, stored))
        thread = threading.Thread(
            target=_run_loop, args=(loop, main, finished.put), name="openai-requests"
        )
        thread.start()
        flush = getattr(on_result, "flush", None)
        delivered = 0
        # the objects from before the run (the SDK, aiohttp, the benchmark: about 100,000)
        # are left out of the collector's full passes while the requests run: a pass walked
        # them all in 47 ms, every request in flight stalled meanwhile (a caller that froze
        # objects itself keeps them frozen)
        freezing = gc.get_freeze_count() == 0
        if freezing:
            gc.freeze()
        try:
            while delivered < len(requests):
                result = finished.get()
                if isinstance(result, BaseException):
                    raise result
                delivered += 1
                on_result(result)
                # the requests' thread may take the interpreter now, not after the switch
                # interval (5 ms): a freed slot's next request waits on it meanwhile
                time.sleep(0)
                # a burst: every result that is ready, then one flush
                if flush is not None and (delivered == len(requests) or finished.empty()):
                    flush()
        finally:
            if delivered < len(requests):  # interrupted, or on_result failed: stop asking
                if thread.is_alive():
                    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                        loop.call_soon_threadsafe(main.cancel)
                thread.join()
            else:
                # every result is taken (stored, or on_result failed on the last): the loop
                # closes its connections now, in its thread, which ends on its own; closing
                # 128 of them took 5-15 ms of the interpreter, which the last result's
                # samples waited on, and then the caller waited on the rest
                with contextlib.suppress(RuntimeError):  # the loop ended (an error) already
                    loop.call_soon_threadsafe(_set, stored)
            if freezing:
                gc.unfreeze()

    async def _generate_all(self, requests, deliver: OnResult, stored: asyncio.Future) -> None:
        base_url, query = _split_query(self.base_url)
        senders = posters(
            self.concurrency,
            transport=self.transport,
            base_url=base_url,
            default_query=query or None,  # `?api-version=...&api_key=...`: sent with each request
            api_key=self.api_key or "not-needed",
            timeout=self.timeout,
        )
        slots = Slots(senders, self.concurrency)
        tasks: list[asyncio.Task] = []
        try:
            for number, request in enumerate(requests, start=1):
                task = asyncio.create_task(self._one(slots, request))
                task.add_done_callback(_retrieve)
                tasks.append(task)
                if number <= self.concurrency and number % START_BATCH == 0:
                    # the requests started so far connect and are sent before more start:
                    # started all at once, the first of 128 left only after the 128th had
                    # opened its connection (50 ms), and the server read them in a burst;
                    # a pass of the loop (sleep(0)) is not enough for a connection to be made
                    # and its request sent, so the first left only after 40 had started
                    await asyncio.sleep(START_PAUSE)
            for finished in asyncio.as_completed(tasks):
                deliver(await finished)
            await stored  # the connections are closed after the caller took the results
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for sender in senders:
                await sender.close()
            await asyncio.sleep(0)  # the closed connections' transports finish closing

    async def _one(self, slots: Slots, request: GenerationRequest) -> GenerationResult:
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
                        error=f"{_where(self)} answered with no choices (an empty list); "
                        "check --model, or give the address of a server speaking the OpenAI API",
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

    async def _in_slot(self, slots: Slots, request: GenerationRequest, first: int, count: int):
        """Up to `count` samples from sample `first` on, in one request once a slot is free
        (one sample when the server is known, by then, to refuse or ignore n > 1).
        Returns (choices, usage, the n asked)."""
        async with slots.taken() as poster:
            if self.unreachable and not self.reached:
                raise _Failed(self.unreachable)
            n = count if self.supports_n else 1
            # a top-up request must not repeat the draws a seed already gave
            seed = None if request.seed is None else request.seed + first
            choices, usage = await self._call_with_retries(poster, request, n, seed)
            return choices, usage, n

    async def _call_with_retries(
        self, poster, request: GenerationRequest, n: int, seed: int | None
    ):
        attempt = 0
        while True:
            try:
                return await _within(self.timeout, self._call(poster, request, n, seed))
            except asyncio.TimeoutError as error:
                if attempt >= self.max_retries:
                    raise self._unreachable(
                        f"{_where(self)} sent no complete answer within --timeout "
                        f"{self.timeout:g} s (it may stream forever); check the server, or "
                        "raise --timeout"
                    ) from error
                delay = self._backoff(attempt)
            except openai.BadRequestError as error:
                if n > 1:  # llama.cpp refuses n > 1: from now on, one sample per request
                    log.info("server refused n=%d (%s); asking one sample at a time", n, error)
                    self.supports_n = False
                    n = 1
                    continue
                raise _Failed(f"{_where(self)} answered HTTP {error.status_code} (bad request): "
                              f"{_message(error)}") from error
            except openai.APIStatusError as error:
                if 300 <= error.status_code < 400:
                    where = error.response.headers.get("location", "?")
                    raise _Failed(f"{_where(self)} answered HTTP {error.status_code}: it "
                                  f"redirects to {where}; give that address as --base-url"
                                  ) from error
                if error.status_code not in RETRYABLE_STATUS or attempt >= self.max_retries:
                    raise _Failed(f"{_where(self)} answered HTTP {error.status_code}: "
                                  f"{_message(error)}") from error
                asked = _retry_after(error)
                if asked is not None and asked > MAX_RETRY_AFTER:
                    raise _Failed(
                        f"{_where(self)} answered HTTP {error.status_code}: it asks to retry "
                        f"in {asked:g} s, "
                        f"longer than cloneprobe waits ({MAX_RETRY_AFTER:g} s); run again later "
                        "(what was stored is kept) or lower --concurrency"
                    ) from error
                delay = asked or self._backoff(attempt)
            except openai.APIConnectionError as error:
                if isinstance(error, openai.APITimeoutError) and _timed_out(error):
                    if attempt >= self.max_retries:
                        raise self._unreachable(
                            f"{_where(self)} did not answer within --timeout {self.timeout:g} "
                            "s; check the server, or raise --timeout"
                        ) from error
                elif attempt >= self.max_retries or (not self.reached and _refused(error)):
                    cause = error.__cause__ or error
                    raise self._unreachable(
                        f"Connection to {_where(self)}{_redirected(self, error)} failed "
                        f"({cause}); check that the server runs there and --base-url"
                    ) from error
                delay = self._backoff(attempt)
            except MalformedAnswer as error:  # a proxy's page or `null`: no retry helps
                raise _Failed(f"{_where(self)} answered with no completion ({error}); give the "
                              "address of a server speaking the OpenAI API") from error
            except (openai.APIResponseValidationError, ValueError) as error:
                if attempt >= self.max_retries:
                    raise _Failed(f"{_where(self)} sent a malformed response: {error}"
                                  ) from error
                delay = self._backoff(attempt)
            attempt += 1
            await asyncio.sleep(delay)

    def _unreachable(self, message: str) -> _Failed:
        """A request failed for good without an answer; a server never reached is then taken
        as unreachable for the requests still to come."""
        if not self.reached:
            self.unreachable = self.unreachable or message
        return _Failed(message)

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter."""
        return random.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))

    async def _call(self, poster, request: GenerationRequest, n: int, seed: int | None):
        common = {
            "model": self.model,
            "n": n,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_tokens": request.max_new_tokens,
            "seed": seed,
            "stop": list(request.stop[:4]) or None,  # the API takes at most 4 stop sequences
        }
        if request.mode == "chat":
            path, asked = "/chat/completions", {"messages": [
                {"role": "user", "content": request.prompt}]}  # fmt: skip
        else:
            path, asked = "/completions", {"prompt": request.prompt}
        # a plain POST (the SDK's headers, query and errors) with the answer read here: the
        # SDK's typed request and response models cost more CPU than the HTTP exchange
        body = await poster.post(path, {**asked, **common})
        answer = read_answer(body, request.mode)
        self.reached = True
        return answer


def read_answer(body: bytes, mode: str) -> tuple[list[tuple[str, str]], tuple[int, int]]:
    """(text, finish reason) of each choice and (prompt, completion) tokens of a 200 answer.
    MalformedAnswer when it is no completion at all (an HTML page, `null`, a choice whose text
    is null): no retry helps; ValueError when its JSON is broken (cut short: retried)."""
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        if body.lstrip()[:1] in (b"{", b"["):
            raise  # JSON cut short or garbled on the way: a retry may get it whole
        shown = body[:60].decode("utf-8", "replace")
        raise MalformedAnswer(f"not a completion: {shown!r}") from None
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not isinstance(choices, list):
        error = answer.get("error") if isinstance(answer, dict) else None
        said = error.get("message") if isinstance(error, dict) else error
        if isinstance(said, str) and said:  # an error sent with 200 (some proxies do)
            raise MalformedAnswer(f"an error, not a completion: {said[:200]!r}")
        shown = answer if isinstance(answer, (str, type(None))) else type(answer).__name__
        raise MalformedAnswer(f"not a completion: {str(shown)[:60]!r}")
    field = "content" if mode == "chat" else "text"
    texts = []
    for choice in choices:
        held = choice.get("message") if mode == "chat" and isinstance(choice, dict) else choice
        text = held.get(field) if isinstance(held, dict) else None
        if not isinstance(text, str):
            raise MalformedAnswer(f"a choice's {field} is null or not a string")
        texts.append((text, choice.get("finish_reason") or ""))
    usage = answer.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    tokens = (_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")))
    return texts, tokens


def _count(value) -> int:
    return value if isinstance(value, int) else 0


class _Failed(Exception):
    """A request that failed for good."""


def _timed_out(error: Exception) -> bool:
    """Whether a timeout error of the SDK is one: the aiohttp transport reports any failed
    connection (refused, dropped) as a connect timeout; the aiohttp error it wraps says."""
    cause = error.__cause__
    while cause is not None:
        if type(cause).__module__.startswith("aiohttp"):
            return isinstance(cause, TimeoutError)
        cause = cause.__cause__ or cause.__context__
    return True


def _refused(error: Exception) -> bool:
    cause = error
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError) or "refused" in str(cause).lower():
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _redirected(backend: OpenAIBackend, error: Exception) -> str:
    """`, which redirected to URL` when the request that failed went elsewhere."""
    url = ""
    for failed in (error.__cause__, error):  # httpx's error holds the request that failed
        try:
            url = str(failed.request.url)  # type: ignore[union-attr]
            break
        except (AttributeError, RuntimeError):
            continue
    base = (backend.base_url or "").split("?")[0].rstrip("/")
    if url and base and not url.startswith(base):
        return f", which redirected to {redact_url(url)}"
    return ""


def _where(backend: OpenAIBackend) -> str:
    """The server, as messages name it (credentials out)."""
    return f"the server {redact_url(backend.base_url) or 'api.openai.com'}"


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


async def _within(seconds: float, call):
    """`call`'s result, or TimeoutError after `seconds` in all (however the bytes trickle).
    In the running task (no task of its own, so an interrupt is raised once, where it lands)
    where asyncio has `timeout` (3.11+)."""
    if hasattr(asyncio, "timeout"):
        async with asyncio.timeout(seconds):
            return await call
    return await asyncio.wait_for(call, seconds)  # pragma: no cover (Python 3.10)


def _retrieve(task: asyncio.Task) -> None:
    """Mark a finished task's exception as seen: an interrupt (Ctrl-C, SIGTERM) that lands in
    one request propagates through the run as it should, and asyncio does not also log it as
    "never retrieved" when the interrupted run is torn down."""
    if not task.cancelled():
        task.exception()


def _set(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)


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
