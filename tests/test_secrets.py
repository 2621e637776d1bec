"""Credentials never reach disk, reports, the terminal or logs: a canary planted in every
channel (the API key in the environment and in a key file, user:password@ and query-string
credentials in the base URL) is found in none of them, though the server received the key."""

from __future__ import annotations

import base64
import os
from pathlib import Path

from click.testing import CliRunner
from openai_test_server import OpenAITestServer

from cloneprobe.cli import main

ENV_KEY = "CANARY-envkey-7d1f0a"
FILE_KEY = "CANARY-filekey-93be2c"
PASSWORD = "CANARY-password-5e77"
USER = "CANARY-user-11aa"
QUERY_KEY = "CANARY-querykey-c0ffee"
TOKEN = "CANARY-token-beef42"
CANARIES = (ENV_KEY, FILE_KEY, PASSWORD, USER, QUERY_KEY, TOKEN)


def secret_url(server) -> str:
    host = server.base_url.split("://", 1)[1]
    return f"http://{USER}:{PASSWORD}@{host}?api_key={QUERY_KEY}&access_token={TOKEN}&v=1"


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def leaked(paths: list[Path], texts: list[str]) -> list[str]:
    found = []
    for path in paths:
        data = path.read_bytes()
        found += [f"{canary} in {path.name}" for canary in CANARIES if canary.encode() in data]
    for number, text in enumerate(texts):
        found += [f"{canary} in output {number}" for canary in CANARIES if canary in text]
    return found


def audit(tmp_path: Path, server, *extra: str, debug: bool = True, url: str | None = None):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return CliRunner().invoke(main, [
        *(["--debug"] if debug else []), "audit", "--model", "openai:test-model",
        "--base-url", url or secret_url(server),
        "--limit", "2", "-n", "2", "--prompts", "original", "--store",
        str(tmp_path / "store.sqlite"), "--report", str(tmp_path / "report"), *extra,
    ], env={**environment, "OPENAI_API_KEY": ENV_KEY})  # fmt: skip


def test_a_canary_in_every_credential_channel_reaches_no_file_and_no_output(tmp_path):
    with OpenAITestServer() as server:
        result = audit(tmp_path, server)
        assert result.exit_code == 0, result.output
        # the credentials were used: user:password@ as HTTP basic auth, the query as sent
        basic = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        assert {r["headers"]["Authorization"] for r in server.requests} == {basic}
        assert all(f"api_key={QUERY_KEY}" in r["path"] for r in server.requests)
        # the run settings keep the URL, without its credentials
        stored = (tmp_path / "report" / "report.json").read_text(encoding="utf-8")
        assert "access_token" not in stored and "v=1" in stored
    assert leaked(files_under(tmp_path), [result.stdout, result.stderr]) == []


def test_the_environment_key_and_an_api_key_file_are_used_and_never_stored(tmp_path):
    key_file = tmp_path / "key.txt"
    key_file.write_text(FILE_KEY + "\n", encoding="utf-8")
    with OpenAITestServer() as server:
        result = audit(tmp_path, server, "--api-key-file", str(key_file), url=server.base_url)
        assert result.exit_code == 0, result.output
        # the file wins over the environment's OPENAI_API_KEY
        assert {r["headers"]["Authorization"] for r in server.requests} == {f"Bearer {FILE_KEY}"}
        (tmp_path / "env").mkdir()
        result_env = audit(tmp_path / "env", server, url=server.base_url)
        assert result_env.exit_code == 0, result_env.output
        assert server.requests[-1]["headers"]["Authorization"] == f"Bearer {ENV_KEY}"
    outputs = [result.stdout, result.stderr, result_env.stdout, result_env.stderr]
    assert leaked([p for p in files_under(tmp_path) if p != key_file], outputs) == []


def test_an_error_quoting_the_url_does_not_leak_it(tmp_path):
    with OpenAITestServer() as server:
        server.fail_next(400, times=50)
        result = audit(tmp_path, server, "-n", "1", debug=False)
        assert result.exit_code == 2
        assert "all 2 requested samples failed" in result.stderr
    assert leaked(files_under(tmp_path), [result.stdout, result.stderr]) == []
