"""`cloneprobe detect` on a human-eval JSONL, `cloneprobe report` in every format, and
`cloneprobe audit --config` with a TOML file: the real CLI, a SQLite store in tmp_path and, for
the audit, the local OpenAI-compatible server."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
from contextlib import closing
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from openai_test_server import OpenAITestServer

from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main
from cloneprobe.reports.files import REPORT_FILES
from cloneprobe.reports.tables import COMPARISON_COLUMNS, GROUP_COLUMNS
from cloneprobe.reports.task_view import SORT_SCRIPT

HUMANEVAL = load_humaneval()
ENV = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": None}


def canonical(task: int) -> str:
    return HUMANEVAL.get(f"HumanEval/{task}").canonical_solution


# (task, prompt set, completion): two samples per task and prompt set, in file order.
# HumanEval/0 (8 lines) and /9 (10 lines) are long canonicals; /4 has 3 lines, which the
# default profile sees and nicad does not.
SAMPLES = [
    (0, "original", canonical(0)),
    (0, "original", "    return False\n"),
    (4, "original", canonical(4)),
    (4, "original", "    return 0.0\n"),
    (9, "original", canonical(9)),
    (9, "original", "    return []\n"),
    (12, "original", "    return None\n"),
    (12, "original", "    return strings[0] if strings else None\n"),
    (0, "fixed", canonical(0)),
    (0, "fixed", "    return False\n"),
    (4, "fixed", canonical(4)),
    (4, "fixed", "    return 0.0\n"),
    (9, "fixed", "    return numbers\n"),
    (9, "fixed", "    return []\n"),
    (12, "fixed", "    return None\n"),
    (12, "fixed", "    return strings[0] if strings else None\n"),
]
VERBATIM = {(ps, f"HumanEval/{t}") for t, ps, text in SAMPLES if text == canonical(t)}


def write_samples(path: Path) -> Path:
    lines = [
        json.dumps({"task_id": f"HumanEval/{t}", "completion": text, "prompt_set": ps})
        for t, ps, text in SAMPLES
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), env=ENV)


def ok(*args: str):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def detected(tmp_path_factory):
    """A store filled by `detect samples.jsonl --json`, then rendered by `report` twice
    (default profile and nicad) into report folders."""
    root = tmp_path_factory.mktemp("detect")
    samples, store = write_samples(root / "samples.jsonl"), root / "store.sqlite"
    args = ["--model", "m", "--temperature", "0.8", "--store", str(store), "--json"]
    first = json.loads(ok("detect", str(samples), *args).stdout)
    again = json.loads(ok("detect", str(samples), *args).stdout)
    ok("report", "--store", str(store), "--report", str(root / "default"))
    ok("report", "--store", str(store), "--report", str(root / "nicad"), "--profile", "nicad")
    return {
        "root": root,
        "store": store,
        "detect": first,
        "detect_again": again,
        "default": root / "default",
        "nicad": root / "nicad",
    }


def group(report: dict, prompt_set: str) -> dict:
    (found,) = [g for g in report["groups"] if g["prompt_set"] == prompt_set]
    return found


# --- detect -----------------------------------------------------------------------------------


def test_detect_counts_verbatim_canonicals_as_type1_and_junk_as_no_clone(detected):
    report = detected["detect"]
    original, fixed = group(report, "original"), group(report, "fixed")
    assert (original["model"], original["temperature"]) == ("m", 0.8)
    assert (original["tasks"], original["samples"]) == (fixed["tasks"], fixed["samples"]) == (4, 8)
    assert original["tasks_with_clone"] == {"1": 3, "2": 3, "3": 3}  # tasks 0, 4, 9
    assert original["samples_with_clone"] == {"1": 3, "2": 3, "3": 3}
    assert fixed["tasks_with_clone"] == {"1": 2, "2": 2, "3": 2}  # tasks 0, 4
    assert fixed["samples_with_clone_exclusive"] == {"1": 2, "2": 0, "3": 0}
    cloned = {(s["prompt_set"], s["task_id"]) for s in report["samples"] if s["clone_type"]}
    assert cloned == VERBATIM
    assert {s["clone_type"] for s in report["samples"]} == {1, None}


def test_detect_keeps_the_file_order_as_the_sample_index(detected):
    samples = detected["detect"]["samples"]
    indices = {(s["prompt_set"], s["task_id"], s["sample"]): s["clone_type"] for s in samples}
    assert indices[("original", "HumanEval/0", 0)] == 1
    assert indices[("original", "HumanEval/0", 1)] is None


def test_detecting_the_same_file_twice_stores_no_duplicates(detected):
    assert detected["detect_again"]["groups"] == detected["detect"]["groups"]
    with closing(sqlite3.connect(detected["store"])) as db:
        (count,) = db.execute("SELECT COUNT(*) FROM samples").fetchone()
    assert count == len(SAMPLES)


# --- report files -----------------------------------------------------------------------------


def test_report_writes_every_format_into_the_folder(detected):
    assert {p.name for p in detected["default"].iterdir()} == REPORT_FILES
    assert all((detected["default"] / name).stat().st_size > 0 for name in REPORT_FILES)


def test_report_json_has_the_documented_schema(detected):
    report = json.loads((detected["default"] / "report.json").read_text(encoding="utf-8"))
    assert {"profile", "settings", "groups", "samples", "comparisons", "evidence"} <= set(report)
    assert report["profile"] == "default"
    assert report["settings"]["profile"] == "default" and report["settings"]["detector_key"]
    assert len(report["groups"]) == 2
    for g in report["groups"]:
        assert {"model", "temperature", "prompt_set", "tasks", "samples"} <= set(g)
        for key in ("tasks_with_clone", "samples_with_clone"):
            assert set(g[key]) == {"1", "2", "3"}
            assert all(isinstance(v, int) for v in g[key].values())
    assert len(report["samples"]) == len(SAMPLES)
    for s in report["samples"]:
        assert {"model", "temperature", "prompt_set", "task_id", "sample", "clone_type"} <= set(s)
        assert "similarity" in s
        assert s["clone_type"] in (1, 2, 3, None)
        assert (s["similarity"] is None) == (s["clone_type"] is None)


def test_report_renders_the_same_groups_as_detect(detected):
    report = json.loads((detected["default"] / "report.json").read_text(encoding="utf-8"))
    assert report["groups"] == detected["detect"]["groups"]
    assert report["samples"] == detected["detect"]["samples"]


def test_groups_csv_has_the_documented_header_and_one_row_per_group(detected):
    text = (detected["default"] / "groups.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == GROUP_COLUMNS
    assert rows[0][:8] == [
        "model", "temperature", "prompt_set", "tasks", "samples",
        "tasks_type1", "tasks_type2", "tasks_type3",
    ]  # fmt: skip
    assert len(rows) == 3
    by_set = {row[2]: dict(zip(GROUP_COLUMNS, row, strict=True)) for row in rows[1:]}
    assert set(by_set) == {"original", "fixed"}
    assert (by_set["original"]["tasks_type1"], by_set["fixed"]["tasks_type1"]) == ("3", "2")
    assert by_set["original"]["samples"] == "8"


def test_comparisons_csv_has_one_row_per_type(detected):
    rows = list(csv.reader(io.StringIO((detected["default"] / "comparisons.csv").read_text())))
    assert rows[0] == COMPARISON_COLUMNS
    assert [(r[2], r[3], r[4]) for r in rows[1:]] == [("original", "fixed", t) for t in "123"]
    columns = dict(zip(COMPARISON_COLUMNS, rows[1], strict=True))
    assert (columns["only_original"], columns["only_other"]) == ("1", "0")  # task 9


def test_report_markdown_has_one_table_row_per_group(detected):
    text = (detected["default"] / "report.md").read_text(encoding="utf-8")
    assert "| m | 0.8 | original | 4 | 8 | 3 (75.0%) |" in text
    assert "| m | 0.8 | fixed | 4 | 8 | 2 (50.0%) |" in text


# --- HTML -------------------------------------------------------------------------------------

VOID_ELEMENTS = {
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
    "track", "wbr",
}  # fmt: skip


class WellFormedness(HTMLParser):
    """Records unbalanced tags and every src/href/url() reference."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.references: list[str] = []
        self.tags: list[str] = []
        self.classes: list[str] = []

    def _attributes(self, tag: str, attrs) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            in_page = name == "href" and tag == "a" and (value or "").startswith("#")
            if name in ("src", "href", "xlink:href", "srcset", "action", "data") and not in_page:
                self.references.append(f"{tag} {name}={value}")  # in-page links are fine
            if name == "class" and value:
                self.classes += [f"{tag}.{c}" for c in value.split()]

    def handle_starttag(self, tag, attrs):
        self._attributes(tag, attrs)
        if tag not in VOID_ELEMENTS:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self._attributes(tag, attrs)

    def handle_endtag(self, tag):
        if tag in VOID_ELEMENTS:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            if tag in self.stack:
                while self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()

    def handle_data(self, data):
        if "url(" in data:
            self.references.append(f"url() in {self.stack[-1:]}")

    def check(self, text: str) -> WellFormedness:
        self.feed(text)
        self.close()
        self.problems += [f"<{tag}> never closed" for tag in self.stack]
        return self


def test_html_checker_catches_unclosed_and_crossed_tags_and_references():
    assert WellFormedness().check("<p><b>x</p>").problems
    assert WellFormedness().check("<div><span>x</div></span>").problems
    assert WellFormedness().check("<table><tr><td>x</td></tr>").problems
    assert WellFormedness().check('<img src="https://x/a.png">').references
    assert WellFormedness().check("<style>a{background:url(x.png)}</style>").references
    clean = WellFormedness().check('<p>a<br><meta charset="utf-8"><svg><line/></svg></p>')
    assert clean.problems == [] and clean.references == []


def test_report_html_is_well_formed_and_self_contained(detected):
    text = (detected["default"] / "report.html").read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    checker = WellFormedness().check(text)
    assert checker.problems == []
    assert checker.references == []
    assert "<link" not in text and "@import" not in text
    # the only script is the static column sorter (reads no report data)
    assert text.count("<script") == 1 and SORT_SCRIPT in text


def test_report_html_has_one_evidence_block_per_clone_pair_and_no_single_dot_plot(detected):
    text = (detected["default"] / "report.html").read_text(encoding="utf-8")
    report = json.loads((detected["default"] / "report.json").read_text(encoding="utf-8"))
    checker = WellFormedness().check(text)
    # one temperature: clone rate against temperature would be a single dot, so no plot
    assert "svg" not in checker.tags and "Clone rate against temperature" not in text
    assert len(report["evidence"]) == len(VERBATIM) == 5
    assert checker.classes.count("div.pair") == len(report["evidence"])
    # code with `<` (HumanEval/0: `if distance < threshold:`) is escaped, not markup
    assert "distance &lt; threshold" in text


def test_report_html_plots_clone_rate_against_several_temperatures(tmp_path):
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion": canonical(0)}) + "\n")
    store = tmp_path / "s.sqlite"
    for temperature in ("0.2", "0.8"):
        ok("detect", str(samples), "--model", "m", "--temperature", temperature, "--store",
           str(store))  # fmt: skip
    ok("report", "--store", str(store), "--report", str(tmp_path / "out"))
    text = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    checker = WellFormedness().check(text)
    assert checker.tags.count("svg") == 1 and "polyline" in checker.tags
    assert 'aria-label="clone rate against temperature"' in text


# --- LaTeX ------------------------------------------------------------------------------------


def test_table6_has_original_and_fixed_column_groups_of_t1_t2_t3(detected):
    lines = (detected["default"] / "table6.tex").read_text(encoding="utf-8").splitlines()
    assert r"\begin{tabular}{lrrrrrr}" in lines
    assert r"Model & \multicolumn{3}{c}{Original} & \multicolumn{3}{c}{Fixed} \\" in lines
    assert r" & T1 & T2 & T3 & T1 & T2 & T3 \\" in lines
    assert r"m & 3 & 3 & 3 & 2 & 2 & 2 \\" in lines
    assert any("profile default" in line for line in lines)


def test_table6_with_one_prompt_set_has_one_column_group(tmp_path):
    samples = tmp_path / "original.jsonl"
    samples.write_text(
        json.dumps({"task_id": "HumanEval/0", "completion": canonical(0)}) + "\n",
        encoding="utf-8",
    )
    store = tmp_path / "s.sqlite"
    ok("detect", str(samples), "--model", "m", "--temperature", "0.8", "--store", str(store))
    ok("report", "--store", str(store), "--report", str(tmp_path / "out"))
    lines = (tmp_path / "out" / "table6.tex").read_text(encoding="utf-8").splitlines()
    assert r"\begin{tabular}{lrrr}" in lines
    assert r"Model & \multicolumn{3}{c}{Original} \\" in lines
    assert r"m & 1 & 1 & 1 \\" in lines


ODD_MODEL = "hf:~/ck^pt\\x<b>y</b>"
"""A model label with characters that are markup in HTML and special in LaTeX."""


@pytest.fixture(scope="module")
def odd_model_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("odd")
    samples = root / "samples.jsonl"
    samples.write_text(
        json.dumps({"task_id": "HumanEval/0", "completion": canonical(0)}) + "\n",
        encoding="utf-8",
    )
    ok("detect", str(samples), "--model", ODD_MODEL, "--temperature", "0.8",
       "--store", str(root / "s.sqlite"), "--report", str(root / "out"))  # fmt: skip
    return root / "out"


def table6_model_cell(folder: Path) -> str:
    lines = (folder / "table6.tex").read_text(encoding="utf-8").splitlines()
    (row,) = [line for line in lines if line.endswith(r"& 1 & 1 & 1 \\")]
    return row.rsplit(" & 1 & 1 & 1", 1)[0]


def test_report_html_escapes_a_model_name_with_markup(odd_model_report):
    text = (odd_model_report / "report.html").read_text(encoding="utf-8")
    checker = WellFormedness().check(text)
    assert checker.problems == [] and "b" not in checker.tags
    assert "hf:~/ck^pt\\x&lt;b&gt;y&lt;/b&gt;" in text


def test_groups_csv_keeps_a_model_name_with_special_characters(odd_model_report):
    rows = list(csv.reader(io.StringIO((odd_model_report / "groups.csv").read_text())))
    assert [row[0] for row in rows[1:]] == [ODD_MODEL]


def test_table6_escapes_a_backslash_in_a_model_name(odd_model_report):
    cell = table6_model_cell(odd_model_report)
    assert r"\textbackslash\{\}" not in cell
    assert r"ck^pt\textbackslash{}x" in cell.replace(r"\textasciicircum{}", "^").replace(
        r"\^{}", "^"
    )


def test_table6_escapes_tilde_and_caret_in_a_model_name(odd_model_report):
    cell = table6_model_cell(odd_model_report)
    unescaped = cell.replace(r"\textasciitilde{}", "").replace(r"\~{}", "")
    unescaped = unescaped.replace(r"\textasciicircum{}", "").replace(r"\^{}", "")
    assert "~" not in unescaped and "^" not in unescaped, cell


# --- the nicad profile ------------------------------------------------------------------------


def test_report_with_the_nicad_profile_has_its_own_detector_key_and_verdicts(detected):
    default = json.loads((detected["default"] / "report.json").read_text(encoding="utf-8"))
    nicad = json.loads((detected["nicad"] / "report.json").read_text(encoding="utf-8"))
    assert nicad["profile"] == "nicad"
    assert nicad["settings"]["detector_key"] != default["settings"]["detector_key"]
    # HumanEval/4's canonical has 3 lines: under nicad's floor, so its verbatim copy is unseen
    assert group(nicad, "original")["tasks_with_clone"] == {"1": 2, "2": 2, "3": 2}
    assert group(nicad, "fixed")["tasks_with_clone"] == {"1": 1, "2": 1, "3": 1}
    cloned = {(s["prompt_set"], s["task_id"]) for s in nicad["samples"] if s["clone_type"]}
    assert cloned == {key for key in VERBATIM if key[1] != "HumanEval/4"}
    assert "profile nicad" in (detected["nicad"] / "table6.tex").read_text(encoding="utf-8")
    with closing(sqlite3.connect(detected["store"])) as db:
        keys = dict(
            db.execute("SELECT detector_key, COUNT(*) FROM detections GROUP BY detector_key")
        )
    # `report` opens the store read-only: its nicad verdicts are computed for the report only,
    # the default ones are those `detect` stored
    assert keys == {default["settings"]["detector_key"]: len(SAMPLES)}


def test_report_on_a_missing_store_exits_2_with_one_error_line(tmp_path):
    result = invoke("report", "--store", str(tmp_path / "none.sqlite"))
    assert result.exit_code == 2
    assert "no such store" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "none.sqlite").exists()


# --- the TOML config of audit -----------------------------------------------------------------


def verbatim_for_even_tasks(kind, prompt, index, body):
    """The canonical body for even-numbered tasks, junk for the others."""
    for task in HUMANEVAL.tasks[:6]:
        if f"def {task.entry_point}(" in prompt:
            number = int(task.task_id.split("/")[1])
            return task.canonical_solution if number % 2 == 0 else "    return None\n"
    return "    return None\n"


def write_config(path: Path, server, store: Path, *extra: str) -> Path:
    lines = [
        "[audit]",
        'model = "openai:test"',
        f'base-url = "{server.base_url}"',
        "limit = 4",
        "n = 2",
        'prompts = "original,fixed"',
        f'store = "{store}"',
        *extra,
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_settings(store: Path) -> list[dict]:
    with closing(sqlite3.connect(store)) as db:
        return [json.loads(s) for (s,) in db.execute("SELECT settings FROM runs ORDER BY id")]


def test_config_file_runs_the_same_as_the_flags(tmp_path):
    with OpenAITestServer(verbatim_for_even_tasks) as server:
        config = write_config(tmp_path / "audit.toml", server, tmp_path / "file.sqlite")
        from_file = json.loads(ok("audit", "--config", str(config), "--json").stdout)
        asked_by_file = len(server.requests)
        from_flags = json.loads(
            ok(
                "audit", "--model", "openai:test", "--base-url", server.base_url,
                "--limit", "4", "-n", "2", "--prompts", "original,fixed",
                "--store", str(tmp_path / "flags.sqlite"), "--json",
            ).stdout
        )  # fmt: skip
        asked_by_flags = len(server.requests) - asked_by_file
    assert asked_by_file == asked_by_flags == 4 * 2
    assert from_file["groups"] == from_flags["groups"]
    assert from_file["samples"] == from_flags["samples"]
    assert [(g["prompt_set"], g["tasks"], g["samples"]) for g in from_file["groups"]] == [
        ("original", 4, 8),
        ("fixed", 4, 8),
    ]
    # verbatim answers to HumanEval/0 and /2; /2's canonical is trivial, so counted apart
    assert group(from_file, "original")["tasks_with_clone"] == {"1": 1, "2": 1, "3": 1}
    assert group(from_file, "original")["tasks_trivial_only"] == 1
    assert (tmp_path / "file.sqlite").exists()


def test_flags_override_the_config_file(tmp_path):
    with OpenAITestServer(verbatim_for_even_tasks) as server:
        config = write_config(
            tmp_path / "audit.toml", server, tmp_path / "s.sqlite", 'profile = "nicad"'
        )
        report = json.loads(
            ok("audit", "--config", str(config), "--limit", "2", "--profile", "default",
               "--json").stdout
        )  # fmt: skip
        requests = server.requests
    assert len(requests) == 2 * 2
    assert {r["json"]["n"] for r in requests} == {2}  # n still from the file
    assert report["profile"] == "default"
    assert [(g["prompt_set"], g["tasks"], g["samples"]) for g in report["groups"]] == [
        ("original", 2, 4),
        ("fixed", 2, 4),
    ]


def test_the_store_keeps_the_resolved_config_of_the_run(tmp_path):
    store = tmp_path / "s.sqlite"
    with OpenAITestServer(verbatim_for_even_tasks) as server:
        config = write_config(tmp_path / "audit.toml", server, store, "temperature = 0.8")
        ok("audit", "--config", str(config), "--limit", "3", "--json")
    (settings,) = run_settings(store)
    resolved = settings["config"]
    assert resolved["limit"] == 3  # the flag
    assert resolved["n"] == 2  # the file
    assert resolved["models"] == ["openai:test"]
    assert resolved["temperatures"] == [0.8]
    assert resolved["prompts_spec"] == "original,fixed"
    assert resolved["store_path"] == str(store)
    assert "config_path" not in resolved


def test_an_unknown_config_key_exits_2_naming_it(tmp_path):
    with OpenAITestServer() as server:
        config = write_config(tmp_path / "audit.toml", server, tmp_path / "s.sqlite", "colour = 1")
        result = invoke("audit", "--config", str(config))
        assert server.requests == []
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:")
    assert "unknown setting" in lines[0] and "colour" in lines[0] and "audit.toml" in lines[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "s.sqlite").exists()


def test_config_file_accepts_every_flag_name_including_json(tmp_path):
    with OpenAITestServer(verbatim_for_even_tasks) as server:
        config = write_config(tmp_path / "audit.toml", server, tmp_path / "s.sqlite", "json = true")
        result = invoke("audit", "--config", str(config))
    assert result.exit_code == 0, result.output
    assert [g["prompt_set"] for g in json.loads(result.stdout)["groups"]] == ["original", "fixed"]


def test_a_config_value_of_the_wrong_type_exits_2_naming_the_setting(tmp_path):
    with OpenAITestServer() as server:
        config = tmp_path / "audit.toml"
        write_config(config, server, tmp_path / "s.sqlite")
        config.write_text(config.read_text().replace("limit = 4", 'limit = "two"'))
        result = invoke("audit", "--config", str(config))
    assert result.exit_code == 2, repr(result.exception)
    assert "limit" in result.stderr and "Traceback" not in result.output


def test_config_n_zero_is_refused_like_the_flag(tmp_path):
    flag = invoke("audit", "--model", "openai:test", "-n", "0", "--store", str(tmp_path / "f"))
    assert flag.exit_code == 2  # click refuses it before anything runs
    with OpenAITestServer() as server:
        config = tmp_path / "audit.toml"
        write_config(config, server, tmp_path / "s.sqlite")
        config.write_text(config.read_text().replace("n = 2", "n = 0"))
        result = invoke("audit", "--config", str(config), "--json")
        asked = [r["json"]["n"] for r in server.requests]
    assert result.exit_code == 2, f"exit {result.exit_code}; asked the server for n={asked}"
    assert asked == []


def test_report_never_pools_samples_of_different_sampling_settings_into_one_group(tmp_path):
    store = tmp_path / "s.sqlite"
    with OpenAITestServer(verbatim_for_even_tasks) as server:
        args = [
            "audit", "--model", "openai:test", "--base-url", server.base_url, "--store",
            str(store), "--limit", "2", "-n", "2", "--prompts", "original", "--json",
        ]  # fmt: skip
        first = json.loads(ok(*args).stdout)
        second = json.loads(ok(*args, "--max-new-tokens", "100").stdout)
        assert len(server.requests) == 2 * 2  # the second audit is a new set of samples
    assert [(g["tasks"], g["samples"]) for g in first["groups"]] == [(2, 4)]
    assert [(g["tasks"], g["samples"]) for g in second["groups"]] == [(2, 4)]
    report = json.loads(ok("report", "--store", str(store), "--json").stdout)
    assert all(g["samples"] == 2 * 2 for g in report["groups"]), report["groups"]
    assert sum(g["samples"] for g in report["groups"]) == len(report["samples"])


def test_report_files_are_readable_like_any_file_written_under_the_umask(detected):
    """The atomic writer's temporary file is private (0600); a report written through it must
    get the mode a plain open() gives (0644 under umask 022), or nobody else can read it."""
    umask = os.umask(0o022)
    os.umask(umask)
    for name in REPORT_FILES:
        mode = (detected["default"] / name).stat().st_mode & 0o777
        assert mode == 0o666 & ~umask, (name, oct(mode))


class _InterruptedReport(AuditReport):
    """A report whose evidence pairs are asked for while rendering and never come: Ctrl-C."""

    def every_pair(self):
        raise KeyboardInterrupt


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_an_interrupted_report_leaves_the_folder_as_it_was(detected, tmp_path):
    """Rendered under hidden names, renamed into place only when all are whole: an earlier
    report stays whole (never some of its files and some of the new run's), and a folder the
    interrupted call made is gone again."""
    from dataclasses import fields

    from cloneprobe.audit.audit_report import report_from_dict
    from cloneprobe.reports.files import write_reports

    def loaded(folder: Path) -> AuditReport:
        return report_from_dict(json.loads((folder / "report.json").read_text("utf-8")))

    new = loaded(detected["default"])
    interrupted = _InterruptedReport(**{f.name: getattr(new, f.name) for f in fields(new)})
    earlier = tmp_path / "earlier"
    write_reports(loaded(detected["nicad"]), earlier)
    before = _files(earlier)
    with pytest.raises(KeyboardInterrupt):
        write_reports(interrupted, earlier)
    assert _files(earlier) == before
    made = tmp_path / "new"
    with pytest.raises(KeyboardInterrupt):
        write_reports(interrupted, made)
    assert not made.exists()
    write_reports(new, made)
    assert {p.name for p in made.iterdir()} == REPORT_FILES
