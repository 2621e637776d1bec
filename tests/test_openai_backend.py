"""OpenAIBackend against the local OpenAI-compatible test server: completion and chat mode, n
handling (honoured, refused, ignored), retries (429 with Retry-After, 5xx, malformed JSON,
dropped connections, timeouts), final failures, the concurrency limit and the API key."""

from __future__ import annotations

import json
import threading

import pytest
from openai_test_server import OpenAITestServer, count_words, counting_responder, seeded_responder

from cloneprobe.generation.backends.base import GenerationRequest, GenerationResult
from cloneprobe.generation.backends.openai_backend import OpenAIBackend
from cloneprobe.generation.backends.openai_http import aiohttp_installed

PROMPT = 'def add(a, b):\n    """Add two numbers."""\n'
BODY = "    return a + b\n"
SECRET = "sk-test-SECRET-123"
TRANSPORTS = ["httpx", pytest.param("aiohttp", marks=pytest.mark.skipif(
    not aiohttp_installed(), reason="aiohttp missing"))]


def make_request(n=1, mode="completion", key=0, seed=None, max_new_tokens=64):
    return GenerationRequest(
        key=key,
        prompt=PROMPT,
        n=n,
        temperature=0.8,
        top_p=0.9,
        max_new_tokens=max_new_tokens,
        stop=("\ndef", "\nclass", "\nif", "\nprint", "\n#") if mode == "completion" else (),
        mode=mode,
        seed=seed,
    )


def make_backend(server, **options) -> OpenAIBackend:
    settings = {"backoff": 0.01, "max_backoff": 0.05, "timeout": 5.0, "max_retries": 3}
    return OpenAIBackend("test-model", base_url=server.base_url, **{**settings, **options})


def generate(backend: OpenAIBackend, requests: list[GenerationRequest]) -> list[GenerationResult]:
    results: list[GenerationResult] = []
    backend.generate(requests, results.append)
    return results


def body_responder(kind, prompt, index, body):
    return BODY if kind == "completion" else f"```python\n{PROMPT}{BODY}```"


def indexed_responder(kind, prompt, index, body):
    """A different text per choice index, so texts show which choices were returned."""
    return f"    return a + b + {index}\n"


def n_values(server) -> list[int]:
    return [r["json"]["n"] for r in server.requests]


def test_completion_mode_returns_texts_finish_reasons_and_usage():
    with OpenAITestServer(body_responder) as server:
        [result] = generate(make_backend(server), [make_request(key="k")])
        [sent] = server.requests
    assert result.error is None and result.request.key == "k"
    assert result.texts == [BODY] and result.finish_reasons == ["stop"]
    assert result.prompt_tokens == count_words(PROMPT)
    assert result.completion_tokens == count_words(BODY)
    assert sent["path"] == "/v1/completions"
    body = sent["json"]
    assert body["model"] == "test-model" and body["prompt"] == PROMPT
    assert body["temperature"] == 0.8 and body["top_p"] == 0.9 and body["max_tokens"] == 64
    assert body["stop"] == ["\ndef", "\nclass", "\nif", "\nprint"]  # the API takes at most 4


def test_max_new_tokens_cut_gives_finish_reason_length():
    with OpenAITestServer(body_responder) as server:
        [result] = generate(make_backend(server), [make_request(max_new_tokens=2)])
    assert result.texts == ["    return a"] and result.finish_reasons == ["length"]
    assert result.completion_tokens == 2


def test_chat_mode_sends_one_user_message_and_returns_the_message_content():
    with OpenAITestServer(body_responder) as server:
        [result] = generate(make_backend(server), [make_request(mode="chat")])
        [sent] = server.requests
    assert result.error is None
    assert result.texts == [f"```python\n{PROMPT}{BODY}```"]
    assert result.finish_reasons == ["stop"]
    assert result.prompt_tokens == count_words(PROMPT)
    assert result.completion_tokens == count_words(result.texts[0])
    assert sent["path"] == "/v1/chat/completions"
    assert sent["json"]["messages"] == [{"role": "user", "content": PROMPT}]
    assert sent["json"].get("stop") is None


def test_n_samples_are_asked_for_in_one_request():
    with OpenAITestServer(indexed_responder) as server:
        [result] = generate(make_backend(server), [make_request(n=3)])
        assert n_values(server) == [3]
    assert result.error is None
    assert result.texts == [f"    return a + b + {i}\n" for i in range(3)]
    assert result.finish_reasons == ["stop"] * 3
    assert result.completion_tokens == 3 * count_words("    return a + b + 0")


def test_server_refusing_n_gets_one_sample_per_request():
    with OpenAITestServer(counting_responder(), n_mode="refuse") as server:
        # two prompts: the second one's first request may still ask n=3 after the switch
        results = generate(
            make_backend(server, concurrency=1),
            [make_request(n=3, key=0), make_request(n=3, key=1)],
        )
        sizes = n_values(server)
    assert [r.error for r in results] == [None, None]
    assert all(len(r.texts) == 3 and r.finish_reasons == ["stop"] * 3 for r in results)
    assert len({text for r in results for text in r.texts}) == 6  # six distinct choices
    assert sizes.count(1) == 6  # every sample came from its own request
    assert 1 <= sizes.count(3) <= 2 and set(sizes) == {1, 3}  # each prompt refused at most once




def test_a_server_refusing_n_is_asked_n_at_most_once_per_slot():
    with OpenAITestServer(counting_responder(), n_mode="refuse") as server:
        results = generate(
            make_backend(server, concurrency=2), [make_request(n=3, key=k) for k in range(8)]
        )
        sizes = n_values(server)
    assert all(r.error is None and len(r.texts) == 3 for r in results)
    assert sizes.count(1) == 24
    assert 1 <= sizes.count(3) <= 2  # the requests in flight when it first refused, no more


def test_samples_of_one_task_are_asked_at_once_when_the_server_refuses_n():
    latency = 0.3
    with OpenAITestServer(counting_responder(), n_mode="refuse", latency=latency) as server:
        [result] = generate(make_backend(server, concurrency=4), [make_request(n=5, seed=3)])
        ones = [r for r in server.requests if r["json"]["n"] == 1]
    assert result.error is None and len(set(result.texts)) == 5
    assert sorted(r["json"]["seed"] for r in ones) == [3, 4, 5, 6, 7]  # seed + sample index
    assert in_flight_of(ones, latency) >= 3


def in_flight_of(requests: list[dict], latency: float) -> int:
    """The most of `requests` the server held at once (each one is held `latency` seconds)."""
    starts = sorted(r["timestamp"] for r in requests)
    return max(sum(1 for s in starts if s <= t < s + latency) for t in starts)


def in_flight(server, latency: float) -> int:
    """The most requests the server held at once (each one is held `latency` seconds)."""
    return in_flight_of(server.requests, latency)




def test_server_ignoring_n_is_topped_up_with_further_requests():
    with OpenAITestServer(counting_responder(), n_mode="ignore") as server:
        [result] = generate(make_backend(server), [make_request(n=3)])
        sizes = n_values(server)
    assert result.error is None
    assert sorted(result.texts) == [f"    return {i}\n" for i in range(3)]
    assert result.finish_reasons == ["stop"] * 3
    assert sizes == [3, 1, 1]


@pytest.mark.parametrize("n_mode", ["refuse", "ignore"])
def test_top_up_requests_with_a_seed_give_distinct_draws(n_mode):
    with OpenAITestServer(seeded_responder, n_mode=n_mode) as server:
        [result] = generate(make_backend(server), [make_request(n=3, seed=7)])
    assert result.error is None and len(result.texts) == 3
    assert len(set(result.texts)) == 3


def test_seeded_request_with_n_honoured_gives_distinct_draws():
    """The reference behaviour for the test above: one request, n choices, n draws."""
    with OpenAITestServer(seeded_responder) as server:
        [result] = generate(make_backend(server), [make_request(n=3, seed=7)])
        assert [r["json"]["seed"] for r in server.requests] == [7]
    assert len(set(result.texts)) == 3


def test_rate_limit_is_retried_after_the_retry_after_delay():
    with OpenAITestServer(body_responder) as server:
        server.fail_next(429, retry_after=0.3)
        [result] = generate(make_backend(server), [make_request()])
        first, second = server.requests
    assert result.error is None and result.texts == [BODY]
    # backoff alone would retry within max_backoff=0.05 s
    assert second["timestamp"] - first["timestamp"] >= 0.29


@pytest.mark.parametrize("status", [500, 503])
def test_server_error_is_retried(status):
    with OpenAITestServer(body_responder) as server:
        server.fail_next(status, times=2)
        [result] = generate(make_backend(server), [make_request(n=2)])
        assert n_values(server) == [2, 2, 2]
    assert result.error is None and result.texts == [BODY, BODY]


def test_malformed_json_answer_is_retried():
    with OpenAITestServer(body_responder) as server:
        server.malformed_next()
        [result] = generate(make_backend(server), [make_request()])
        assert len(server.requests) == 2
    assert result.error is None and result.texts == [BODY]


def test_dropped_connection_is_retried():
    with OpenAITestServer(body_responder) as server:
        server.drop_next()
        [result] = generate(make_backend(server), [make_request()])
        assert len(server.requests) == 2
    assert result.error is None and result.texts == [BODY]


def test_response_slower_than_the_timeout_is_abandoned_and_retried():
    with OpenAITestServer(body_responder) as server:
        server.slow_next(2.0)
        [result] = generate(make_backend(server, timeout=0.3), [make_request()])
        # had the client waited for the slow answer, it would have asked only once
        assert len(server.requests) == 2
    assert result.error is None and result.texts == [BODY]


@pytest.mark.parametrize(
    ("inject", "message"),
    [
        (lambda server: server.fail_next(503, times=3), "HTTP 503"),
        (lambda server: server.fail_next(429, times=3, retry_after=0), "HTTP 429"),
        (lambda server: server.malformed_next(times=3), "malformed"),
        (lambda server: server.drop_next(times=3), "Connection"),
    ],
    ids=["503", "429", "malformed", "dropped"],
)
def test_failure_after_max_retries_gives_an_error_result_without_texts(inject, message):
    with OpenAITestServer(body_responder) as server:
        inject(server)
        [result] = generate(make_backend(server, max_retries=2), [make_request(n=2, key="k")])
        assert len(server.requests) == 3  # the first attempt and 2 retries
    assert result.request.key == "k"
    assert result.error is not None and message in result.error
    assert result.texts == [] and result.finish_reasons == []


def test_non_retryable_status_fails_at_once():
    with OpenAITestServer(body_responder) as server:
        server.fail_next(404, times=5)
        [result] = generate(make_backend(server, max_retries=3), [make_request()])
        assert len(server.requests) == 1
    assert result.error is not None and "HTTP 404" in result.error and result.texts == []


def test_one_failed_request_does_not_spoil_the_others():
    with OpenAITestServer(body_responder) as server:
        server.fail_next(500, times=1)
        results = generate(
            make_backend(server, max_retries=0, concurrency=1),
            [make_request(key=k) for k in range(3)],
        )
    by_key = {r.request.key: r for r in results}
    assert sorted(by_key) == [0, 1, 2]
    assert by_key[0].error is not None and by_key[0].texts == []
    assert [by_key[k].texts for k in (1, 2)] == [[BODY], [BODY]]


def test_concurrency_limit_bounds_the_requests_in_flight():
    latency = 0.2
    with OpenAITestServer(body_responder, latency=latency) as server:
        results = generate(
            make_backend(server, concurrency=4), [make_request(key=k) for k in range(12)]
        )
        starts = sorted(r["timestamp"] for r in server.requests)
    assert sorted(r.request.key for r in results) == list(range(12))
    assert all(r.error is None for r in results)
    # each request is in the server for at least `latency` after its timestamp
    overlap = max(sum(1 for s in starts if s <= t < s + latency) for t in starts)
    assert 3 <= overlap <= 4  # parallel, and never more than the limit




def test_concurrency_beyond_one_connection_pool_uses_every_slot_and_no_more():
    latency = 0.5  # 40 slots: three connection pools of the SDK's httpx client
    with OpenAITestServer(body_responder, latency=latency) as server:
        results = generate(
            make_backend(server, concurrency=40), [make_request(key=k) for k in range(80)]
        )
        overlap = in_flight(server, latency)
    assert sorted(r.request.key for r in results) == list(range(80))
    assert all(r.error is None for r in results)
    assert 33 <= overlap <= 40


def test_an_error_storing_a_result_stops_the_requests_and_reaches_the_caller():
    def store(result: GenerationResult) -> None:
        raise RuntimeError("the store is full")

    with OpenAITestServer(body_responder, latency=0.1) as server:
        backend = make_backend(server, concurrency=1)
        with pytest.raises(RuntimeError, match="the store is full"):
            backend.generate([make_request(key=k) for k in range(20)], store)
        asked = len(server.requests)
    assert asked < 5  # the run stopped instead of asking for everything


def test_api_key_is_sent_as_bearer_token():
    with OpenAITestServer(body_responder) as server:
        generate(make_backend(server, api_key=SECRET), [make_request()])
        [sent] = server.requests
    assert sent["headers"]["Authorization"] == f"Bearer {SECRET}"


def test_describe_holds_no_api_key_and_no_url_credentials():
    backend = OpenAIBackend(
        "test-model", base_url="http://user:pw-SECRET@127.0.0.1:9/v1", api_key=SECRET
    )
    described = backend.describe()
    text = json.dumps(described)
    assert SECRET not in text and "pw-SECRET" not in text
    assert described["base_url"] == "http://127.0.0.1:9/v1"
    assert described["model"] == "test-model" and described["backend"] == "openai"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_each_transport_tells_a_refused_connection_from_a_timeout(transport):
    closed = OpenAIBackend("m", "http://127.0.0.1:9/v1", "k", timeout=5.0, max_retries=3)
    closed.transport = transport
    [refused] = generate(closed, [make_request()])
    with OpenAITestServer(body_responder) as server:
        server.slow_next(2.0)
        backend = make_backend(server, timeout=0.5, max_retries=0)
        backend.transport = transport
        [slow] = generate(backend, [make_request()])
    # refused at once, not retried as if the server were slow
    assert refused.error.startswith("Connection to the server http://127.0.0.1:9/v1 failed")
    assert "within --timeout 0.5 s" in slow.error


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_redirect_on_the_same_server_is_followed_with_the_body_and_the_key(transport):
    with OpenAITestServer(body_responder) as server:
        moved = server.base_url.replace("/v1", "/v1/completions")
        server.answer_next(307, b"", headers={"Location": moved})
        backend = make_backend(server, api_key=SECRET)
        backend.transport = transport
        [result] = generate(backend, [make_request()])
        first, second = server.requests
    assert result.error is None and result.texts == [BODY]
    assert second["method"] == "POST" and second["json"] == first["json"]
    assert second["headers"]["Authorization"] == f"Bearer {SECRET}"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_redirect_to_another_server_does_not_take_the_api_key_along(transport):
    with OpenAITestServer(body_responder) as elsewhere, OpenAITestServer() as server:
        server.answer_next(307, b"", headers={"Location": f"{elsewhere.base_url}/completions"})
        backend = make_backend(server, api_key=SECRET)
        backend.transport = transport
        [result] = generate(backend, [make_request()])
        [followed] = elsewhere.requests
    assert result.error is None and result.texts == [BODY]
    assert followed["json"]["prompt"] == PROMPT
    assert "Authorization" not in followed["headers"]


def requests_threads_end(timeout: float = 10.0) -> bool:
    """Whether every requests' thread of this process has ended (waiting up to `timeout`)."""
    for thread in [t for t in threading.enumerate() if t.name == "openai-requests"]:
        thread.join(timeout)
    return not any(t.name == "openai-requests" for t in threading.enumerate())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_after_the_last_result_the_connections_are_closed_and_the_thread_ends(transport):
    # generate returns once every result is taken; its thread closes the connections after
    with OpenAITestServer(body_responder) as server:
        backend = make_backend(server, concurrency=4)
        backend.transport = transport
        results = generate(backend, [make_request(key=key) for key in range(6)])
        assert requests_threads_end()
        server.wait_idle()  # every connection closed by the client
    assert sorted(result.request.key for result in results) == list(range(6))


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_thread_ends_when_storing_the_last_result_fails(transport):
    taken = []

    def on_result(result):
        taken.append(result)
        if len(taken) == 2:  # the last result
            raise OSError("disk full")

    with OpenAITestServer(body_responder) as server:
        backend = make_backend(server, concurrency=2)
        backend.transport = transport
        with pytest.raises(OSError, match="disk full"):
            backend.generate([make_request(key=0), make_request(key=1)], on_result)
        assert requests_threads_end()
        server.wait_idle()
