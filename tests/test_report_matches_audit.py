"""`cloneprobe report` on an audited store shows what `audit` showed: one typed report, rendered
the same way. The quick first look's scope note and the signals asked for but not available
(CDD with two samples and no greedy one, Min-K%++ from a server that gives only the chosen
tokens' log-probs) with their reasons used to vanish from `report`. Through the real CLI, a
real OpenAI-compatible server on 127.0.0.1 and a SQLite store in tmp_path."""

from __future__ import annotations

import json

from click.testing import CliRunner
from openai_test_server import OpenAITestServer
from test_first_contact import canonical_or_junk

from cloneprobe.cli import main

ENV = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": None, "COLUMNS": "80"}




def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], env=ENV)


def test_report_on_an_audited_store_shows_what_the_audit_showed(tmp_path):
    store = tmp_path / "s.sqlite"
    with OpenAITestServer(canonical_or_junk, prompt_logprobs="echo") as server:
        audit = invoke("audit", "--model", "openai:test", "--base-url", server.base_url,
                       "--mode", "completion", "--store", store, "--limit", 2, "-n", 2,
                       "--temperature", 0.8, "--prompts", "original",
                       "--signals", "zlib,min_k_plus_plus,cdd")  # fmt: skip
    assert audit.exit_code == 0, audit.output
    report = invoke("report", "--store", store)
    assert report.exit_code == 0, report.output
    # what the audit showed, and so what the report must show
    shown = " ".join(audit.stdout.split())  # wrapped at 80 columns
    assert "a quick first look, not the study's scale" in shown
    assert "cdd n/a: 2 sample(s)" in shown
    assert "min_k_plus_plus n/a" in shown
    assert report.stdout == audit.stdout
    as_json = json.loads(invoke("report", "--store", store, "--json").stdout)
    assert "a quick first look" in as_json["scope"]["note"]
    assert as_json["signals"]["names"] == ["zlib", "min_k_plus_plus", "cdd"]
