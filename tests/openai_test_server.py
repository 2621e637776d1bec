"""A real, local HTTP server that speaks enough of the OpenAI API for tests and benchmarks.

Standard library only; it listens on 127.0.0.1 on a free port and never contacts anything else::

    with OpenAITestServer(responder=my_responder, latency=0.05) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
        server.fail_next(429, retry_after=1)

Endpoints: ``POST /v1/completions``, ``POST /v1/chat/completions``, ``GET /v1/models``;
anything else gets a 404 with an OpenAI-style error body. Tokens are whitespace-separated
words, which is all ``max_tokens`` and ``usage`` need here.

Prompt log-probs (``prompt_logprobs=`` mode): "none" answers ``logprobs: null`` whatever is
asked (as a server that ignores the parameters); "echo" answers ``echo=True`` with
``logprobs=k`` on the completions endpoint as the OpenAI API did, ``choices[i].logprobs`` =
``{tokens, token_logprobs, top_logprobs, text_offset}`` over prompt and completion, the first
token's log-prob null; "prompt_logprobs" answers vLLM's extra ``prompt_logprobs=k`` with
``choices[i].prompt_logprobs`` = ``[null, {"<token id>": {"logprob", "rank",
"decoded_token"}}, ...]`` and refuses echo with logprobs and ``max_tokens=0`` (400), as vLLM
does; "refuse" answers 400 to either. A log-prob token is the text up to the end of the next
word (leading whitespace included) and its log-prob is ``token_logprob(index, token)``.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import queue
import re
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[str, Any, int, dict], str]
N_MODES = ("openai", "refuse", "ignore")
LOGPROB_MODES = ("none", "echo", "prompt_logprobs", "refuse")
LOGPROB_TOKEN = re.compile(r"\s*\S+|\s+")
RECORDED_HEADERS = ("Authorization", "Content-Type", "User-Agent", "Connection")
MODELS = {"object": "list", "data": [{"id": "test-model", "object": "model", "owned_by": "test"}]}
ROUTES = {"/v1/completions": "completion", "/v1/chat/completions": "chat"}
MALFORMED = b'{"id": "cmpl-broken", "choices": [{"text": '
_ERROR_TYPES = {400: "invalid_request_error", 404: "not_found_error", 429: "rate_limit_error"}


def default_responder(kind: str, prompt: Any, index: int, body: dict) -> str:
    """A function body for completions, a fenced Python function for chat."""
    if kind == "completion":
        return "    return None\n"
    return "```python\ndef f():\n    return None\n```"


def message_text(content: Any) -> str:
    """The text of a chat message content: a string or a list of ``{"text": ...}`` parts."""
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def count_words(text: str) -> int:
    """The server's token count: whitespace-separated words."""
    return len(text.split())


def truncate(text: str, stop: Any, max_tokens: int | None) -> tuple[str, str]:
    """Cut at the earliest ``stop`` sequence, then keep at most ``max_tokens`` words (with the
    original text up to the end of the last one). Returns (text, finish_reason)."""
    stops = [stop] if isinstance(stop, str) else [s for s in stop or [] if isinstance(s, str)]
    cuts = [text.find(s) for s in stops if s and s in text]
    text = text[: min(cuts)] if cuts else text
    words = list(re.finditer(r"\S+", text))
    if max_tokens is not None and len(words) > max_tokens:
        return (text[: words[max_tokens - 1].end()] if max_tokens > 0 else ""), "length"
    return text, "stop"


def default_token_logprob(index: int, token: str) -> float:
    """A log-prob in [-4, -0.01) fixed by the token's text."""
    digest = int(hashlib.sha256(token.encode()).hexdigest()[:8], 16)
    return -0.01 - (digest % 399) / 100


def logprob_tokens(text: str) -> list[tuple[str, int]]:
    """(token, character offset) of the server's log-prob tokens of `text`."""
    return [(m.group(), m.start()) for m in LOGPROB_TOKEN.finditer(text)]


def token_id(token: str) -> int:
    return int(hashlib.sha256(token.encode()).hexdigest()[:6], 16)


def error_body(status: int, message: str, code: str | None = None) -> dict:
    """An OpenAI-style error payload."""
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # listen backlog: a full queue drops connects, retried by TCP
    # after 1, 3, 7 ... 127 s (a 128-request burst stalled a run for 127 s at 128)
    owner: OpenAITestServer

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], OSError):  # clients hanging up are expected
            super().handle_error(request, client_address)


class _PooledServer(_Server):
    """Connections handled by a fixed pool of threads started with the server. A thread per
    connection (the default) starts a thread on every connect and waits until it runs, so a
    burst of 128 connects queued behind the handlers busy with the first ones (240 ms at 128
    before the last request arrived): a benchmark then measures the server, not the client.
    Each keep-alive connection holds a thread, so the pool must be at least the client's
    concurrency."""

    def start_pool(self, threads: int) -> None:
        self._waiting: queue.SimpleQueue = queue.SimpleQueue()
        self._pool = [threading.Thread(target=self._work, daemon=True) for _ in range(threads)]
        for thread in self._pool:
            thread.start()

    def process_request(self, request, client_address):
        self._waiting.put((request, client_address))

    def _work(self) -> None:
        while (waiting := self._waiting.get()) is not None:
            request, client_address = waiting
            try:
                self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        for _ in self._pool:
            self._waiting.put(None)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as httpx (the openai SDK) expects
    disable_nagle_algorithm = True  # no delayed-ACK stalls between headers and body
    wbufsize = -1  # an answer's headers and body leave in one write (its flush), as a real
    # server sends them, not one system call and packet each
    server: _Server

    def log_message(self, format, *args):  # quiet
        pass

    def setup(self):
        super().setup()
        self.server.owner._track(self.connection, True)

    def finish(self):
        self.server.owner._track(self.connection, False)
        with contextlib.suppress(OSError):
            super().finish()

    def handle(self):
        with contextlib.suppress(OSError):  # BrokenPipeError, ConnectionResetError: client left
            super().handle()

    def do_GET(self):
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:  # recorded as None, answered with a 400
            body = None
        self._entry = owner._record(self.command, self.path, body, self.headers)
        path = self.path.split("?", 1)[0].rstrip("/")
        if owner.latency:
            time.sleep(owner.latency)
        fault = None if (self.command, path) == ("GET", "/v1/models") else owner._pop_fault()
        if fault and fault[0] == "slow":
            time.sleep(fault[1])
        elif fault and fault[0] == "fail":
            code = "rate_limit_exceeded" if fault[1] == 429 else None
            error = error_body(fault[1], f"Injected failure: HTTP {fault[1]}", code)
            extra = {} if fault[2] is None else {"Retry-After": f"{fault[2]:g}"}
            return self._send(fault[1], error, extra)
        elif fault and fault[0] == "malformed":
            return self._send(200, MALFORMED)
        elif fault and fault[0] == "raw":
            _, status, data, content_type, headers = fault
            return self._send(status, data, headers, content_type)
        elif fault and fault[0] == "trickle":
            return self._trickle(fault[1])
        elif fault:  # "drop": hang up without answering
            self.close_connection = True
            return None
        if (self.command, path) == ("GET", "/v1/models"):
            return self._send(200, MODELS)
        if self.command != "POST" or path not in ROUTES:
            return self._send(404, error_body(404, f"Unknown request URL: {self.command} {path}"))
        if not isinstance(body, dict):
            return self._send(400, error_body(400, "The request body is not a JSON object."))
        return self._send(*owner._generate(ROUTES[path], body))

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _trickle(self, interval: float) -> None:
        """200 with a body that never ends: a byte every `interval` seconds until the client
        hangs up or the server closes."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(10**12))
        self.end_headers()
        self.wfile.write(b'{"choices": [')
        while self.server.owner._httpd is not None:
            self.wfile.write(b" ")
            self.wfile.flush()
            time.sleep(interval)
        self.close_connection = True

    def _send(self, status: int, payload: dict | bytes, headers: dict | None = None,
              content_type: str = "application/json") -> None:  # fmt: skip
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        entry = getattr(self, "_entry", None)
        if entry is not None:
            with self.server.owner._lock:
                entry["answered"] = time.time()


class OpenAITestServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1, serving from a daemon thread.

    ``responder(kind, prompt_or_messages, index, body) -> str`` writes each choice's text
    (``kind`` is "completion" or "chat", ``index`` the choice number 0..n-1 for that prompt);
    it runs in handler threads, possibly concurrently. ``n_mode``: "openai" honours ``n``,
    "refuse" answers 400 to n > 1 (llama.cpp), "ignore" always gives one choice (Ollama).
    ``latency`` seconds are slept in each handler thread before answering. ``threads``: a
    fixed pool of that many handler threads, started with the server, instead of a thread
    started per connection (benchmarks: at least the client's concurrency).
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        n_mode="openai",
        latency=0.0,
        prompt_logprobs="none",
        token_logprob: Callable[[int, str], float] = default_token_logprob,
        threads: int | None = None,
    ):
        if n_mode not in N_MODES:
            raise ValueError(f"n_mode must be one of {N_MODES}, not {n_mode!r}")
        if prompt_logprobs not in LOGPROB_MODES:
            raise ValueError(f"prompt_logprobs must be one of {LOGPROB_MODES}")
        self.responder, self.n_mode, self.latency = responder or default_responder, n_mode, latency
        self.prompt_logprobs, self.token_logprob = prompt_logprobs, token_logprob
        self.threads = threads
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._requests: list[dict] = []
        self._faults: deque[tuple] = deque()
        self._connections: set[socket.socket] = set()
        self._counter = 0
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> OpenAITestServer:
        """Bind a free port and serve in a daemon thread."""
        if self.threads:
            pooled = _PooledServer(("127.0.0.1", 0), _Handler)
            pooled.start_pool(self.threads)
            self._httpd = pooled
        else:
            self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, hang up open keep-alive connections, close the listening socket."""
        if self._httpd is None or self._thread is None:
            return
        self._httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def requests(self) -> list[dict]:
        """A snapshot of the recorded requests: method, path, json, headers, timestamp (when
        the request was read) and, once an answer was sent, `answered` (when it was)."""
        with self._lock:
            return [dict(entry) for entry in self._requests]

    def fail_next(
        self, status: int = 429, times: int = 1, retry_after: float | None = None
    ) -> None:
        """Answer the next ``times`` requests with ``status``, an error body, and Retry-After."""
        self._push(("fail", status, retry_after), times)

    def slow_next(self, seconds: float, times: int = 1) -> None:
        """Sleep ``seconds`` before answering the next ``times`` requests normally."""
        self._push(("slow", seconds), times)

    def malformed_next(self, times: int = 1) -> None:
        """Answer the next ``times`` requests with 200 and a body that is not valid JSON."""
        self._push(("malformed",), times)

    def answer_next(self, status: int, body: bytes, content_type: str = "application/json",
                    headers: dict | None = None, times: int = 1) -> None:  # fmt: skip
        """Answer the next ``times`` requests with exactly this status, body and headers (an
        HTML page, ``null``, a choice whose text is null, a redirect)."""
        self._push(("raw", status, body, content_type, headers or {}), times)

    def trickle_next(self, interval: float = 0.05, times: int = 1) -> None:
        """Answer the next ``times`` requests with a body that never ends (a byte every
        ``interval`` seconds), as a server streaming forever."""
        self._push(("trickle", interval), times)

    def drop_next(self, times: int = 1) -> None:
        """Close the connection of the next ``times`` requests without any response."""
        self._push(("drop",), times)

    def _push(self, fault: tuple, times: int) -> None:
        with self._lock:
            self._faults.extend([fault] * times)

    def _pop_fault(self) -> tuple | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _track(self, conn: socket.socket, alive: bool) -> None:
        with self._idle:
            (self._connections.add if alive else self._connections.discard)(conn)
            self._idle.notify_all()

    def wait_idle(self, timeout: float = 30) -> None:
        """Wait until every connection has been handled to its end (a client that was killed
        or hung up included), so that what they sent is in `requests`; fail after `timeout`."""
        with self._idle:
            if not self._idle.wait_for(lambda: not self._connections, timeout=timeout):
                raise TimeoutError(f"{len(self._connections)} connection(s) still open")

    def _record(self, method: str, path: str, body: Any, headers) -> dict:
        kept = {name: headers[name] for name in RECORDED_HEADERS if name in headers}
        entry = {"method": method, "path": path, "json": body, "headers": kept}
        entry["timestamp"] = time.time()
        with self._lock:
            self._requests.append(entry)
        return entry

    def _generate(self, kind: str, body: dict) -> tuple[int, dict]:
        """The (status, payload) answering a completion or chat completion request."""
        n = 1 if body.get("n") is None else body["n"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            return 400, error_body(400, f"Invalid value for 'n': {n!r}; expected an integer >= 1.")
        if n > 1 and self.n_mode == "refuse":
            return 400, error_body(400, "Only one completion choice is supported: 'n' must be 1.")
        n = 1 if self.n_mode == "ignore" else n
        refusal = self._logprob_refusal(kind, body)
        if refusal:
            return 400, error_body(400, refusal)
        if kind == "completion":
            prompt = body.get("prompt", "")
            prompts = prompt if isinstance(prompt, list) else [prompt]
            prompt_tokens = sum(count_words(p) for p in prompts if isinstance(p, str))
        elif isinstance(body.get("messages"), list):
            prompts = [body["messages"]]
            contents = [m.get("content") for m in prompts[0] if isinstance(m, dict)]
            prompt_tokens = sum(count_words(message_text(c)) for c in contents)
        else:
            return 400, error_body(400, "'messages' must be a list.")
        max_tokens = body.get("max_tokens", body.get("max_completion_tokens"))
        choices, completion_tokens = [], 0
        cut: dict[str, tuple[str, str, int]] = {}  # a text the responder repeats, cut once
        for prompt in prompts:
            for index in range(n):
                try:
                    raw = str(self.responder(kind, prompt, index, body))
                except Exception as exc:  # a broken responder is a server error, not a hang
                    return 500, error_body(500, f"responder failed: {exc!r}")
                if raw not in cut:
                    text, finish = truncate(raw, body.get("stop"), max_tokens)
                    cut[raw] = text, finish, count_words(text)
                text, finish, words = cut[raw]
                completion_tokens += words
                choice = {"index": len(choices), "finish_reason": finish, "logprobs": None}
                if kind == "completion":
                    if self.prompt_logprobs != "none":
                        choice.update(self._logprobs(prompt if isinstance(prompt, str) else "",
                                                     text, body))  # fmt: skip
                    echoed = body.get("echo") and isinstance(prompt, str)
                    choices.append({**choice, "text": prompt + text if echoed else text})
                else:
                    choices.append({**choice, "message": {"role": "assistant", "content": text}})
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
        usage["total_tokens"] = prompt_tokens + completion_tokens
        with self._lock:
            self._counter += 1
            ident = f"{'cmpl' if kind == 'completion' else 'chatcmpl'}-test{self._counter}"
        obj = "text_completion" if kind == "completion" else "chat.completion"
        head = {"id": ident, "object": obj, "created": int(time.time())}
        model = body.get("model") or "test-model"
        return 200, {**head, "model": model, "choices": choices, "usage": usage}

    def _logprob_refusal(self, kind: str, body: dict) -> str | None:
        """The 400 message for prompt log-probs this server's mode refuses, if any."""
        echo_logprobs = kind == "completion" and body.get("echo") and body.get("logprobs")
        wants_prompt = body.get("prompt_logprobs") is not None
        if self.prompt_logprobs == "refuse" and (echo_logprobs or wants_prompt):
            return "This model does not support returning log-probabilities of the prompt."
        if self.prompt_logprobs == "prompt_logprobs":
            if echo_logprobs:
                return "echo is not supported together with logprobs on this server."
            if body.get("max_tokens") == 0:
                return "max_tokens must be at least 1, got 0."
        return None

    def _logprobs(self, prompt: str, text: str, body: dict) -> dict:
        """The log-prob fields of a completion choice for this server's mode."""
        fields: dict[str, Any] = {}
        if self.prompt_logprobs == "echo" and body.get("logprobs") is not None:
            shown = prompt + text if body.get("echo") else text
            tokens = logprob_tokens(prompt) + [
                (t, at + len(prompt)) for t, at in logprob_tokens(text)
            ]
            if not body.get("echo"):
                tokens = [(t, at - len(prompt)) for t, at in tokens if at >= len(prompt)]
            values = [self.token_logprob(i, t) for i, (t, _) in enumerate(tokens)]
            if body.get("echo") and tokens:
                values[0] = None  # nothing precedes the first prompt token
            fields["logprobs"] = {
                "tokens": [t for t, _ in tokens],
                "token_logprobs": values,
                "top_logprobs": [
                    None if v is None else {t: v} for (t, _), v in zip(tokens, values, strict=True)
                ],
                "text_offset": [at for _, at in tokens],
            }
            assert "".join(t for t, _ in tokens) == shown
        if self.prompt_logprobs == "prompt_logprobs" and body.get("prompt_logprobs") is not None:
            entries: list[dict | None] = [None]
            for i, (token, _) in enumerate(logprob_tokens(prompt)[1:], start=1):
                value = self.token_logprob(i, token)
                entries.append(
                    {str(token_id(token)): {"logprob": value, "rank": 1, "decoded_token": token}}
                )
            fields["prompt_logprobs"] = entries
        return fields


def counting_responder() -> Responder:
    """A different function body for every choice the server generates, over all requests."""
    counter = itertools.count()
    return lambda kind, prompt, index, body: f"    return {next(counter)}\n"


def seeded_responder(kind: str, prompt: Any, index: int, body: dict) -> str:
    """Like a server that honours `seed`: the same prompt, seed and choice index give the same
    text."""
    digest = hashlib.sha256(f"{prompt}|{body.get('seed')}|{index}".encode()).hexdigest()
    return f"    return {digest[:10]!r}\n"
