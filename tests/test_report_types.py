"""The report is one typed value (`AuditReport`): the JSON Schema committed in
docs/reference/report.schema.json is the one its types give, every report the CLI writes
validates against it (typed objects allow no other key), and a Python caller of the pipeline
gets byte for byte the report the CLI prints."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from cloneprobe.audit.audit_report import AuditReport, report_from_dict
from cloneprobe.audit.report_schema import report_schema, schema_text
from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main

SCHEMA_FILE = Path(__file__).parents[1] / "docs" / "reference" / "report.schema.json"
HUMANEVAL = load_humaneval()
ENV = {"OPENAI_API_KEY": "sk-test"}


def ok(*args: str):
    result = CliRunner().invoke(main, list(args), env=ENV)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """Executed samples (correctness keys), clones of every type, two prompt sets
    (comparisons), and stored signals (signals and tasks sections)."""
    root = tmp_path_factory.mktemp("types")
    canonical = HUMANEVAL.get("HumanEval/0").canonical_solution
    rows = []
    for prompt_set in ("original", "fixed"):
        rows += [{"task_id": "HumanEval/0", "completion": canonical, "prompt_set": prompt_set},
                 {"task_id": "HumanEval/0", "completion": canonical.replace("idx", "i"),
                  "prompt_set": prompt_set},
                 {"task_id": "HumanEval/4", "completion": "    return 0.0\n",
                  "prompt_set": prompt_set}]  # fmt: skip
    samples = root / "samples.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = root / "s.sqlite"
    ok("execute", str(samples), "--model", "m", "--temperature", "0.2", "--store", str(path),
       "--workers", "1")  # fmt: skip
    ok("signals", "--store", str(path), "--signals", "cdd,surface", "--json")
    return path


def test_the_committed_schema_is_the_one_the_types_give():
    """Fails when a field is added to the report's types but not to the schema, or the other
    way round (regenerate: python -m cloneprobe.audit.report_schema > the file)."""
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text()


def test_the_report_the_cli_writes_is_valid_under_the_schema(store):
    document = json.loads(ok("report", "--store", str(store), "--json").stdout)
    assert {"groups", "samples", "evidence", "signals", "tasks"} <= set(document)
    assert document["groups"][0]["correctness"] is not None and document["comparisons"]
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(document)


def test_a_key_the_types_do_not_know_is_refused_by_the_schema(store):
    document = json.loads(ok("report", "--store", str(store), "--json").stdout)
    validator = jsonschema.Draft202012Validator(report_schema())
    for row in (document["groups"][0], document["evidence"][0], document["tasks"][0],
                document["samples"][0], document):  # fmt: skip
        row["added_but_not_typed"] = 1
        assert not validator.is_valid(document)
        del row["added_but_not_typed"]
    assert validator.is_valid(document)


def test_a_python_caller_gets_the_report_the_cli_prints(store):
    from cloneprobe.audit.detection import DetectionSettings
    from cloneprobe.clones import DetectorConfig
    from cloneprobe.generation import SampleStore
    from cloneprobe.pipeline import SilentReporter, report_store

    settings = DetectionSettings(DetectorConfig())
    with SampleStore(store, read_only=True) as opened:
        report = report_store(opened, HUMANEVAL, settings, SilentReporter())
    assert isinstance(report, AuditReport) and report.tasks and report.signals
    printed = ok("report", "--store", str(store), "--json").stdout
    assert report.to_json() == printed
    assert report_from_dict(json.loads(printed)).as_dict() == report.as_dict()


def test_the_terminal_evidence_shows_the_code_of_a_renamed_pair(store):
    text = ok("report", "--store", str(store), "--evidence").output
    assert "for i, elem in enumerate(numbers):" in text  # the renamed copy, as written
    assert "x , x in x ( x )" not in text


def test_a_pair_with_independent_solutions_shows_the_closest_ones(store):
    from cloneprobe.reports.evidence_html import pair_html

    document = json.loads(ok("report", "--store", str(store), "--json").stdout)
    pair = {**document["evidence"][0], "independent_solutions": [
        {"label": "other-family <b>model</b>", "similarity": 91.5,
         "code": ["def f(numbers):", "    return any(<x>)"]},
        {"source": "reference", "similarity": 40.0, "code": "def g():\n    pass"},
        {"model": "far", "similarity": 10.0, "lines": ["x"]},
        {"model": "farther", "similarity": 5.0, "lines": ["y"]}]}  # fmt: skip
    html = pair_html(pair, 0)
    assert "Closest independent solutions of the task (4)" in html
    assert html.index("other-family &lt;b&gt;model&lt;/b&gt; (91.5%") < html.index("reference")
    assert "return any(&lt;x&gt;)" in html and "farther" not in html  # the closest three
    assert "1 more in the evidence file" in html
    assert "Closest independent solutions" not in pair_html(document["evidence"][0], 0)


def test_a_renamed_line_is_shown_beside_the_line_it_renames():
    from cloneprobe.reports.align import align_lines, shape_of

    canonical = ["def f(xs):", "    best = None", "    return best"]
    sample = ["def f(xs):", '    """Doc."""', "    top = None", "    return top"]
    rows = align_lines(canonical, sample, shape_of)
    assert rows == [(True, "def f(xs):", "def f(xs):"), (False, "", '    """Doc."""'),
                    (False, "    best = None", "    top = None"),
                    (False, "    return best", "    return top")]  # fmt: skip
    assert align_lines(canonical, sample)[1] == (False, "    best = None", '    """Doc."""')
