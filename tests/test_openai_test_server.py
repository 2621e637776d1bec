"""The local OpenAI-compatible test server: endpoints, n modes, truncation, faults, concurrency."""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest
from openai_test_server import OpenAITestServer

CHAT = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "write f please"}]


def request(server, method, path, body=None, timeout=5.0, headers=None):
    """One request on a fresh connection: (status, headers, raw body bytes)."""
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        conn.request(method, url.path + path, body=data, headers=all_headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def post(server, path, body, **kwargs):
    """POST JSON; (status, headers, decoded JSON body)."""
    status, headers, raw = request(server, "POST", path, body, **kwargs)
    return status, headers, json.loads(raw)


def complete(server, timeout=5.0, **body):
    """POST a completion request for "def f():" with extra body fields."""
    body = {"model": "m", "prompt": "def f():", **body}
    return post(server, "/completions", body, timeout=timeout)


def test_completion_object_with_default_responder_and_recorded_request():
    with OpenAITestServer() as server:
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        status, headers, out = post(
            server,
            "/completions",
            {"model": "m", "prompt": "def f():", "seed": 7},
            headers={"Authorization": "Bearer test"},
        )
        assert status == 200 and headers["Content-Type"] == "application/json"
        assert out["object"] == "text_completion" and out["model"] == "m"
        assert out["id"] and isinstance(out["created"], int)
        assert out["choices"] == [
            {"index": 0, "text": "    return None\n", "finish_reason": "stop", "logprobs": None}
        ]
        [recorded] = server.requests
        assert recorded["method"] == "POST" and recorded["path"] == "/v1/completions"
        assert recorded["json"]["seed"] == 7
        assert recorded["headers"]["Authorization"] == "Bearer test"
        assert recorded["timestamp"] == pytest.approx(time.time(), abs=5)


def test_chat_completion_object_and_models_endpoint():
    with OpenAITestServer() as server:
        status, _, out = post(server, "/chat/completions", {"model": "m", "messages": CHAT})
        assert status == 200 and out["object"] == "chat.completion"
        [choice] = out["choices"]
        assert choice["message"] == {
            "role": "assistant",
            "content": "```python\ndef f():\n    return None\n```",
        }
        assert choice["finish_reason"] == "stop" and choice["index"] == 0
        status, _, raw = request(server, "GET", "/models")
        assert status == 200
        assert json.loads(raw)["data"][0] == {
            "id": "test-model",
            "object": "model",
            "owned_by": "test",
        }


def test_n_is_honoured_and_the_responder_sees_each_choice():
    calls = []

    def responder(kind, prompt, index, body):
        calls.append((kind, prompt, index, body["temperature"]))
        return f"answer {index} to {prompt}"

    with OpenAITestServer(responder=responder) as server:
        _, _, out = complete(server, prompt="p", n=3, temperature=0.8)
        assert [c["index"] for c in out["choices"]] == [0, 1, 2]
        assert [c["text"] for c in out["choices"]] == [f"answer {i} to p" for i in range(3)]
        assert calls == [("completion", "p", i, 0.8) for i in range(3)]

        _, _, out = complete(server, prompt=["a", "b"], n=2, temperature=0.0)
        assert [c["index"] for c in out["choices"]] == [0, 1, 2, 3]
        texts = [c["text"] for c in out["choices"]]
        assert texts == ["answer 0 to a", "answer 1 to a", "answer 0 to b", "answer 1 to b"]

        calls.clear()
        _, _, out = post(
            server, "/chat/completions", {"messages": CHAT, "n": 2, "temperature": 1.0}
        )
        assert len(out["choices"]) == 2
        assert calls == [("chat", CHAT, 0, 1.0), ("chat", CHAT, 1, 1.0)]


def test_n_refused_like_llama_cpp():
    with OpenAITestServer(n_mode="refuse") as server:
        status, _, out = complete(server, n=2)
        assert status == 400
        assert "'n'" in out["error"]["message"]
        assert out["error"]["type"] == "invalid_request_error"
        status, _, out = post(server, "/chat/completions", {"messages": CHAT, "n": 5})
        assert status == 400 and "'n'" in out["error"]["message"]
        status, _, out = complete(server, n=1)
        assert status == 200 and len(out["choices"]) == 1


def test_n_ignored_like_ollama():
    with OpenAITestServer(n_mode="ignore") as server:
        for n in (1, 3, 10):
            _, _, out = complete(server, n=n)
            assert len(out["choices"]) == 1
        _, _, out = post(server, "/chat/completions", {"messages": CHAT, "n": 4})
        assert len(out["choices"]) == 1


def test_unknown_n_mode_is_rejected():
    with pytest.raises(ValueError, match="n_mode"):
        OpenAITestServer(n_mode="sometimes")


def test_stop_truncates_at_the_earliest_stop_sequence():
    def responder(kind, prompt, index, body):
        return "    x = 1\n    return x\ndef g():\n    pass\n"

    with OpenAITestServer(responder=responder) as server:
        _, _, out = complete(server, stop="\ndef ")
        assert out["choices"][0]["text"] == "    x = 1\n    return x"
        assert out["choices"][0]["finish_reason"] == "stop"
        _, _, out = complete(server, stop=["\ndef ", "return"])
        assert out["choices"][0]["text"] == "    x = 1\n    "
        _, _, out = complete(server, stop=["never there"])
        assert out["choices"][0]["text"] == responder("completion", "", 0, {})
        _, _, out = post(server, "/chat/completions", {"messages": CHAT, "stop": "x ="})
        assert out["choices"][0]["message"]["content"] == "    "


def test_max_tokens_keeps_the_original_text_and_reports_length():
    def responder(kind, prompt, index, body):
        return "  one two\n   three four five"

    with OpenAITestServer(responder=responder) as server:
        _, _, out = complete(server, max_tokens=3)
        assert out["choices"][0] == {
            "index": 0,
            "text": "  one two\n   three",
            "finish_reason": "length",
            "logprobs": None,
        }
        _, _, out = complete(server, max_tokens=5)
        assert out["choices"][0]["finish_reason"] == "stop"
        assert out["choices"][0]["text"] == responder("completion", "", 0, {})
        # stop applies first; then the remaining words fit
        _, _, out = complete(server, max_tokens=3, stop="three")
        assert out["choices"][0]["text"] == "  one two\n   "
        assert out["choices"][0]["finish_reason"] == "stop"
        _, _, out = post(server, "/chat/completions", {"messages": CHAT, "max_tokens": 1})
        assert out["choices"][0]["message"]["content"] == "  one"
        assert out["choices"][0]["finish_reason"] == "length"


def test_usage_counts_words_in_prompts_and_returned_texts():
    def responder(kind, prompt, index, body):
        return "a b c d"

    with OpenAITestServer(responder=responder) as server:
        _, _, out = complete(server, prompt="def f(x): return", n=2, max_tokens=3)
        assert out["usage"] == {"prompt_tokens": 3, "completion_tokens": 6, "total_tokens": 9}
        _, _, out = complete(server, prompt=["one two", "three"], n=1)
        assert out["usage"] == {"prompt_tokens": 3, "completion_tokens": 8, "total_tokens": 11}
        _, _, out = post(server, "/chat/completions", {"messages": CHAT})
        assert out["usage"] == {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}


def test_fail_next_429_with_retry_after_then_serves_normally():
    with OpenAITestServer() as server:
        server.fail_next(429, times=2, retry_after=3)
        for _ in range(2):
            status, headers, out = complete(server)
            assert status == 429 and headers["Retry-After"] == "3"
            assert out["error"]["type"] == "rate_limit_error"
            assert set(out["error"]) >= {"message", "type", "code"}
        status, headers, _ = complete(server)
        assert status == 200 and "Retry-After" not in headers


def test_fail_next_500_without_retry_after():
    with OpenAITestServer() as server:
        server.fail_next(500)
        status, headers, out = post(server, "/chat/completions", {"messages": CHAT})
        assert status == 500 and "Retry-After" not in headers
        assert out["error"]["type"] == "server_error" and "500" in out["error"]["message"]
        assert post(server, "/chat/completions", {"messages": CHAT})[0] == 200


def test_faults_are_consumed_in_order_and_not_by_the_models_endpoint():
    with OpenAITestServer() as server:
        server.fail_next(503)
        server.malformed_next()
        server.fail_next(429, retry_after=0.5)
        assert request(server, "GET", "/models")[0] == 200
        assert complete(server)[0] == 503
        assert request(server, "POST", "/completions", {"prompt": "x"})[0] == 200  # malformed
        status, headers, _ = complete(server)
        assert status == 429 and headers["Retry-After"] == "0.5"
        assert complete(server)[0] == 200


def test_malformed_next_returns_invalid_json_with_status_200():
    with OpenAITestServer() as server:
        server.malformed_next()
        status, headers, raw = request(server, "POST", "/completions", {"prompt": "x"})
        assert status == 200 and headers["Content-Type"] == "application/json"
        assert int(headers["Content-Length"]) == len(raw)
        with pytest.raises(json.JSONDecodeError):
            json.loads(raw)
        assert complete(server)[0] == 200


def test_drop_next_closes_the_connection_without_a_response():
    with OpenAITestServer() as server:
        server.drop_next()
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            complete(server)
        assert complete(server)[0] == 200


def test_a_recorded_request_says_when_its_answer_was_sent():
    with OpenAITestServer(latency=0.05) as server:
        assert complete(server)[0] == 200
        server.drop_next()
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            complete(server)
        answered, dropped = server.requests
        assert answered["answered"] >= answered["timestamp"] + 0.05  # after the latency
        assert "answered" not in dropped


def test_slow_next_times_out_the_client_and_the_server_keeps_serving(capfd):
    with OpenAITestServer() as server:
        server.slow_next(0.8)
        with pytest.raises((TimeoutError, socket.timeout)):
            complete(server, timeout=0.2)
        assert complete(server)[0] == 200  # served while the slow one still sleeps
        server.wait_idle()  # the slow handler has written to a closed connection
        assert complete(server)[0] == 200
    assert capfd.readouterr().err == ""  # no traceback from the abandoned request


def test_unknown_paths_and_methods_get_404_error_json():
    with OpenAITestServer() as server:
        for method, path in [("POST", "/embeddings"), ("GET", "/completions"), ("GET", "/x")]:
            status, headers, raw = request(server, method, path)
            assert status == 404 and headers["Content-Type"] == "application/json"
            error = json.loads(raw)["error"]
            assert error["message"] and error["type"] and "code" in error


def test_invalid_json_body_gets_400():
    with OpenAITestServer() as server:
        url = urlsplit(server.base_url)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
        conn.request("POST", "/v1/completions", body=b"{not json")
        response = conn.getresponse()
        assert response.status == 400 and "error" in json.loads(response.read())
        conn.close()
        assert server.requests[0]["json"] is None


def test_a_failing_responder_gives_500_and_the_server_keeps_serving():
    def responder(kind, prompt, index, body):
        if prompt == "boom":
            raise RuntimeError("boom")
        return "ok"

    with OpenAITestServer(responder=responder) as server:
        status, _, out = complete(server, prompt="boom")
        assert status == 500 and "boom" in out["error"]["message"]
        assert complete(server, prompt="fine")[2]["choices"][0]["text"] == "ok"


def test_keep_alive_serves_several_requests_on_one_connection():
    with OpenAITestServer() as server:
        url = urlsplit(server.base_url)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
        for _ in range(3):
            conn.request("POST", "/v1/completions", body=json.dumps({"prompt": "p"}))
            response = conn.getresponse()
            assert response.status == 200 and response.version == 11
            assert json.loads(response.read())["choices"]
        local_port = conn.sock.getsockname()[1]
        conn.request("GET", "/v1/models")
        conn.getresponse().read()
        assert conn.sock.getsockname()[1] == local_port  # still the same socket
        conn.close()


def test_concurrent_requests_overlap():
    # Checks that requests are handled concurrently, not how fast: 32 requests sleeping
    # 0.2 s each would take 6.4 s one after another.
    with OpenAITestServer(latency=0.2) as server:

        def one(i):
            req = urllib.request.Request(
                server.base_url + "/completions",
                data=json.dumps({"prompt": f"p{i}"}).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(req, timeout=10) as response:
                return json.loads(response.read())

        with ThreadPoolExecutor(max_workers=32) as pool:
            results = list(pool.map(one, range(32)))
        assert len(results) == 32 and all(r["choices"] for r in results)
        starts = sorted(r["timestamp"] for r in server.requests)
        assert len(starts) == 32
        # each request stays in the server 0.2 s after its timestamp: how many were in at once
        overlap = max(sum(1 for s in starts if s <= t < s + 0.2) for t in starts)
        assert overlap > 1, "the server handled the requests one after another"


def test_closed_server_has_no_base_url():
    server = OpenAITestServer()
    with server:
        url = server.base_url
    with pytest.raises(RuntimeError):
        server.base_url  # noqa: B018
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "/models", timeout=2)


def test_openai_sdk_completions_and_chat_with_n():
    openai = pytest.importorskip("openai")

    def responder(kind, prompt, index, body):
        return f"{kind} {index}"

    with OpenAITestServer(responder=responder) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        completion = client.completions.create(model="m", prompt="def f():", n=3, max_tokens=16)
        assert [c.text for c in completion.choices] == [f"completion {i}" for i in range(3)]
        assert [c.index for c in completion.choices] == [0, 1, 2]
        assert completion.usage.completion_tokens == 6
        chat = client.chat.completions.create(model="m", messages=CHAT, n=3, seed=1)
        assert [c.message.content for c in chat.choices] == ["chat 0", "chat 1", "chat 2"]
        assert all(c.finish_reason == "stop" for c in chat.choices)
        assert all(r["headers"]["Authorization"] == "Bearer test" for r in server.requests)
        server.fail_next(429, retry_after=1)
        with pytest.raises(openai.RateLimitError):
            client.completions.create(model="m", prompt="x")


def test_a_server_with_a_pool_of_threads_serves_keep_alive_connections_side_by_side():
    with OpenAITestServer(threads=2) as server:
        url = urlsplit(server.base_url)
        connections = [http.client.HTTPConnection(url.hostname, url.port, timeout=5)
                       for _ in range(2)]  # fmt: skip
        try:
            for _ in range(3):
                for conn in connections:  # both open at once, each held by a pool thread
                    conn.request("POST", url.path + "/completions", headers={
                        "Content-Type": "application/json"}, body=json.dumps(
                        {"model": "m", "prompt": "def f():\n", "n": 2}).encode())  # fmt: skip
                for conn in connections:
                    response = conn.getresponse()
                    assert response.status == 200
                    assert len(json.loads(response.read())["choices"]) == 2
        finally:
            for conn in connections:
                conn.close()
        assert len(server.requests) == 6
